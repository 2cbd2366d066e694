package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cauri-pay/cauri"
)

type workspaceJSON struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Verified bool              `json:"verified"`
	Connect  bool              `json:"connect"`
	Keys     map[string]string `json:"keys,omitempty"`
}

func workspace(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("workspace: want a subcommand: create or verify")
	}
	switch args[0] {
	case "create":
		return workspaceCreate(ctx, args[1:], getenv, stdout, stderr)
	case "verify":
		return workspaceVerify(ctx, args[1:], getenv, stdout, stderr)
	}
	return fmt.Errorf("workspace: unknown subcommand %q (want create or verify)", args[0])
}

// workspaceCreate prints the new workspace with its four keys. This is the
// only time the keys are shown.
func workspaceCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("workspace create", flag.ContinueOnError)
	name := fs.String("name", "", "workspace name (required)")
	verified := fs.Bool("verified", false, "identity already verified: live keys create live objects")
	connect := fs.Bool("connect", false, "Connect workspace: its money is held by the service")
	cfg, _, err := parseFlags(fs, args, getenv, stderr)
	if err != nil {
		return err
	}
	now := time.Now()
	ws, err := cauri.NewWorkspace(*name, now)
	if err != nil {
		return errors.New(cauri.ErrorMessage(err) + " (--name)")
	}
	ws.Verified, ws.Connect = *verified, *connect
	keys := map[string]*cauri.Key{
		"live_public": cauri.NewKey(ws.ID, cauri.KeyPublic, true, now),
		"live_secret": cauri.NewKey(ws.ID, cauri.KeySecret, true, now),
		"test_public": cauri.NewKey(ws.ID, cauri.KeyPublic, false, now),
		"test_secret": cauri.NewKey(ws.ID, cauri.KeySecret, false, now),
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	out := workspaceJSON{ID: ws.ID, Name: ws.Name, Verified: ws.Verified, Connect: ws.Connect, Keys: map[string]string{}}
	var list []*cauri.Key
	for name, k := range keys {
		list = append(list, k)
		out.Keys[name] = k.Plaintext
	}
	if err := st.CreateWorkspace(ctx, ws, list); err != nil {
		return err
	}
	return printJSON(stdout, out)
}

func workspaceVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, pos, err := parseFlags(flag.NewFlagSet("workspace verify", flag.ContinueOnError), args, getenv, stderr)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("workspace verify: want exactly one workspace id")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := st.VerifyWorkspace(ctx, pos[0])
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	return printJSON(stdout, workspaceJSON{ID: ws.ID, Name: ws.Name, Verified: ws.Verified, Connect: ws.Connect})
}

func printJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
