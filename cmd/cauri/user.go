package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
)

// userCommand is `cauri user create --email E --password P --workspace ID`:
// a dashboard user of a workspace (an existing user is added to it, their
// password unchanged).
func userCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("user: want a subcommand: create")
	}
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	email := fs.String("email", "", "the user's e-mail address (required)")
	password := fs.String("password", "", fmt.Sprintf("the user's password, at least %d characters (required for a new user)", cauri.MinPasswordLen))
	workspaceID := fs.String("workspace", "", "the workspace the user belongs to (required)")
	cfg, _, err := parseFlags(fs, args[1:], getenv, stderr)
	if err != nil {
		return err
	}
	addr, err := cauri.NormalizeEmail(*email)
	if err != nil {
		return errors.New("user create: --email: " + cauri.ErrorMessage(err))
	}
	if *workspaceID == "" {
		return errors.New("user create: --workspace is required")
	}
	hash, err := accounts.HashPassword(*password, addr)
	if cauri.ErrorCode(err) == cauri.EInvalid {
		return errors.New("user create: --password: " + cauri.ErrorMessage(err))
	} else if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	u, created, err := st.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: addr, CreatedAt: time.Now().UTC()}, string(hash), *workspaceID)
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	if !created {
		fmt.Fprintln(stderr, "user create: the user exists: added to the workspace, password unchanged")
	}
	return printJSON(stdout, map[string]any{"id": u.ID, "email": u.Email, "workspace": *workspaceID, "created": created})
}
