package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/transfer"
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
	const want = "create, list, verify, close-transfers, open-transfers, set-daily-cap, set-connect or roll-key"
	if len(args) == 0 {
		return errors.New("workspace: want a subcommand: " + want)
	}
	set := func(nargs int, apply func(st *store.Store, id string, rest []string) (*cauri.Workspace, error)) error {
		return workspaceSet(ctx, args[0], args[1:], nargs, apply, getenv, stdout, stderr)
	}
	now := time.Now()
	switch args[0] {
	case "create":
		return workspaceCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return workspaceList(ctx, args[1:], getenv, stdout, stderr)
	case "roll-key":
		return workspaceRollKey(ctx, args[1:], getenv, stdout, stderr)
	case "verify":
		return set(1, func(st *store.Store, id string, _ []string) (*cauri.Workspace, error) {
			return st.VerifyWorkspace(ctx, id, now)
		})
	case "close-transfers", "open-transfers":
		closed := args[0] == "close-transfers"
		return set(1, func(st *store.Store, id string, _ []string) (*cauri.Workspace, error) {
			return st.SetTransfersClosed(ctx, id, closed, now)
		})
	case "set-daily-cap":
		return set(2, func(st *store.Store, id string, rest []string) (*cauri.Workspace, error) {
			n, err := strconv.Atoi(rest[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("the daily cap must be a whole number of transfers, 0 or more, not %q", rest[0])
			}
			return (&transfer.Service{Store: st, Now: func() time.Time { return now }}).SetDailyCap(ctx, id, n)
		})
	case "set-connect":
		return set(2, func(st *store.Store, id string, rest []string) (*cauri.Workspace, error) {
			if rest[0] != "on" && rest[0] != "off" {
				return nil, fmt.Errorf("set-connect wants on or off, not %q", rest[0])
			}
			return st.SetConnect(ctx, id, rest[0] == "on", now)
		})
	}
	return fmt.Errorf("workspace: unknown subcommand %q (want %s)", args[0], want)
}

// workspaceList prints every workspace, newest first, one JSON object a line.
func workspaceList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, pos, err := parseFlags(flag.NewFlagSet("workspace list", flag.ContinueOnError), args, getenv, stderr)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return errors.New("workspace list: takes no argument")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.Workspaces(ctx)
	if err != nil {
		return err
	}
	for _, ws := range list {
		if err := printJSON(stdout, toWorkspaceJSON(ws)); err != nil {
			return err
		}
	}
	return nil
}

// workspaceRollKey replaces one key of a workspace and prints the new one,
// this once; the replaced key keeps working for --grace.
func workspaceRollKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("workspace roll-key", flag.ContinueOnError)
	which := fs.String("key", "", "the key to roll: live_secret, live_public, test_secret or test_public (required)")
	grace := fs.Duration("grace", 24*time.Hour, "how long the replaced key keeps working (0 to 168h)")
	cfg, pos, err := parseFlags(fs, args, getenv, stderr)
	if err != nil {
		return err
	}
	mode, kind, _ := strings.Cut(*which, "_")
	kinds := map[string]cauri.KeyKind{"secret": cauri.KeySecret, "public": cauri.KeyPublic}
	if len(pos) != 1 || (mode != "live" && mode != "test") || kinds[kind] == "" {
		return errors.New("workspace roll-key: want --key live_secret|live_public|test_secret|test_public and one workspace id")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := (&accounts.Service{Store: st, Now: time.Now}).RollKey(ctx, pos[0], kinds[kind], mode == "live", *grace)
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	out := map[string]any{"workspace": pos[0], "key": *which, "value": k.Plaintext, "replaced_keys_stop_at": time.Now().Add(*grace).UTC().Format(cauri.TimeFormat)}
	return printJSON(stdout, out)
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
	keys, plain := cauri.KeySet(ws.ID, now)
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.CreateWorkspace(ctx, ws, keys); err != nil {
		return err
	}
	out := toWorkspaceJSON(ws)
	out.Keys = plain
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
