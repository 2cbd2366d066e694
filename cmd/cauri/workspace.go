package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

type workspaceJSON struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Verified         bool              `json:"verified"`
	Connect          bool              `json:"connect"`
	TransfersClosed  bool              `json:"transfers_closed"`
	TransferDailyCap int               `json:"transfer_daily_cap"`
	Keys             map[string]string `json:"keys,omitempty"`
}

func toWorkspaceJSON(ws *cauri.Workspace) workspaceJSON {
	return workspaceJSON{ID: ws.ID, Name: ws.Name, Verified: ws.Verified, Connect: ws.Connect,
		TransfersClosed: ws.TransfersClosed, TransferDailyCap: ws.TransferDailyCap}
}

func workspace(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const want = "create, verify, close-transfers, open-transfers or set-daily-cap"
	if len(args) == 0 {
		return errors.New("workspace: want a subcommand: " + want)
	}
	set := func(nargs int, apply func(st *store.Store, id string, rest []string) (*cauri.Workspace, error)) error {
		return workspaceSet(ctx, args[0], args[1:], nargs, apply, getenv, stdout, stderr)
	}
	switch args[0] {
	case "create":
		return workspaceCreate(ctx, args[1:], getenv, stdout, stderr)
	case "verify":
		return set(1, func(st *store.Store, id string, _ []string) (*cauri.Workspace, error) {
			return st.VerifyWorkspace(ctx, id)
		})
	case "close-transfers", "open-transfers":
		closed := args[0] == "close-transfers"
		return set(1, func(st *store.Store, id string, _ []string) (*cauri.Workspace, error) {
			return st.SetTransfersClosed(ctx, id, closed)
		})
	case "set-daily-cap":
		return set(2, func(st *store.Store, id string, rest []string) (*cauri.Workspace, error) {
			n, err := strconv.Atoi(rest[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("the daily cap must be a whole number of transfers, 0 or more, not %q", rest[0])
			}
			return st.SetTransferDailyCap(ctx, id, n)
		})
	}
	return fmt.Errorf("workspace: unknown subcommand %q (want %s)", args[0], want)
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
	out := toWorkspaceJSON(ws)
	out.Keys = map[string]string{}
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

// workspaceSet is a service-administration change of one workspace: the
// workspace id, then nargs-1 more arguments for apply; it prints the
// workspace after.
func workspaceSet(ctx context.Context, name string, args []string, nargs int, apply func(st *store.Store, id string, rest []string) (*cauri.Workspace, error),
	getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, pos, err := parseFlags(flag.NewFlagSet("workspace "+name, flag.ContinueOnError), args, getenv, stderr)
	if err != nil {
		return err
	}
	if len(pos) != nargs {
		if nargs == 1 {
			return fmt.Errorf("workspace %s: want exactly one workspace id", name)
		}
		return fmt.Errorf("workspace %s: want exactly one workspace id and a value", name)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := apply(st, pos[0], pos[1:])
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	return printJSON(stdout, toWorkspaceJSON(ws))
}

func printJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
