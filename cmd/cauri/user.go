package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"golang.org/x/term"
)

// userCommand is `cauri user create --email E --workspace ID`: a dashboard
// user of a workspace (an existing user is added to it, their password
// unchanged). The password is read from standard input (its first line),
// or asked without echo on a terminal: never a flag, which every user of
// the machine could read in the process list.
func userCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("user: want a subcommand: create")
	}
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	email := fs.String("email", "", "the user's e-mail address (required)")
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
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	hash, err := accounts.HashPassword(password, addr)
	if cauri.ErrorCode(err) == cauri.EInvalid {
		return errors.New("user create: password: " + cauri.ErrorMessage(err))
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

// readPassword reads a new password: asked twice without echo when
// standard input is a terminal, else its first line.
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stderr, "Password (%d characters or more): ", cauri.MinPasswordLen)
		p, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "The same again: ")
		again, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(p) != string(again) {
			return "", errors.New("user create: the two passwords differ")
		}
		return string(p), nil
	}
	if stdin == nil {
		return "", errors.New("user create: the password is read from standard input (echo 'the password' | cauri user create ...), or asked on a terminal")
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	if line = strings.TrimRight(line, "\r\n"); line == "" {
		return "", errors.New("user create: no password on standard input (echo 'the password' | cauri user create ...)")
	}
	return line, nil
}
