package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateways"
)

// gatewayJSON is how the command line shows a gateway: credentials only as
// hints of their last characters.
type gatewayJSON struct {
	ID          string               `json:"id"`
	Workspace   string               `json:"workspace"`
	Provider    string               `json:"provider"`
	Name        string               `json:"name"`
	Live        bool                 `json:"live"`
	BaseURL     string               `json:"base_url,omitempty"`
	Collect     bool                 `json:"collect"`
	Payout      bool                 `json:"payout"`
	Enabled     bool                 `json:"enabled"`
	Routes      []cauri.GatewayRoute `json:"routes"`
	Credentials map[string]string    `json:"credentials"`
	CreatedAt   string               `json:"created_at"`
}

func showGateway(g *cauri.Gateway) gatewayJSON {
	return gatewayJSON{ID: g.ID, Workspace: g.WorkspaceID, Provider: g.Provider, Name: g.Name, Live: g.Live, BaseURL: g.BaseURL,
		Collect: g.Collect, Payout: g.Payout, Enabled: g.Enabled, Routes: g.Routes, Credentials: g.CredentialHints,
		CreatedAt: g.CreatedAt.UTC().Format(cauri.TimeFormat)}
}

func gatewayCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("gateway: want a subcommand: add, list, disable, enable or remove")
	}
	fs := flag.NewFlagSet("gateway "+args[0], flag.ContinueOnError)
	workspaceID := fs.String("workspace", "", "workspace id (required)")
	switch args[0] {
	case "add":
		return gatewayAdd(ctx, fs, workspaceID, args[1:], getenv, stdin, stdout, stderr)
	case "list":
		cfg, _, err := parseFlags(fs, args[1:], getenv, stderr)
		if err != nil {
			return err
		}
		if *workspaceID == "" {
			return errors.New("gateway list: --workspace is required")
		}
		st, err := openStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer st.Close()
		list, err := st.Gateways(ctx, *workspaceID)
		if err != nil {
			return err
		}
		out := []gatewayJSON{}
		for _, g := range list {
			out = append(out, showGateway(g))
		}
		return printJSON(stdout, out)
	case "disable", "enable", "remove":
		cfg, pos, err := parseFlags(fs, args[1:], getenv, stderr)
		if err != nil {
			return err
		}
		if *workspaceID == "" || len(pos) != 1 {
			return fmt.Errorf("gateway %s: want --workspace ID and one gateway id", args[0])
		}
		st, err := openStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer st.Close()
		if args[0] == "remove" {
			if err := (&gateways.Service{Store: st, Now: time.Now}).Remove(ctx, *workspaceID, pos[0]); err != nil {
				return errors.New(cauri.ErrorMessage(err))
			}
			return printJSON(stdout, map[string]any{"id": pos[0], "removed": true})
		}
		g, err := st.SetGatewayEnabled(ctx, *workspaceID, pos[0], args[0] == "enable", time.Now())
		if err != nil {
			return errors.New(cauri.ErrorMessage(err))
		}
		return printJSON(stdout, showGateway(g))
	}
	return fmt.Errorf("gateway: unknown subcommand %q (want add, list, disable, enable or remove)", args[0])
}

// gatewayAdd connects an aggregator account. The credentials come as a JSON
// object from a file, or from standard input with "-", never as flags that
// other users could read in the process list.
func gatewayAdd(ctx context.Context, fs *flag.FlagSet, workspaceID *string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	providerKey := fs.String("provider", "", "aggregator: "+strings.Join(gateway.Keys(), ", "))
	name := fs.String("name", "", "a name for this account (default: the provider's)")
	credsFile := fs.String("credentials", "", "JSON object of the account's credentials: a file, or - for standard input")
	live := fs.Bool("live", false, "live credentials (default: the aggregator's sandbox)")
	countries := fs.String("countries", "", "comma-separated countries to serve (default: every country the provider serves)")
	baseURL := fs.String("api-url", "", "the aggregator's API address, to use another than the provider's (a simulator, a proxy)")
	collect := fs.Bool("collect", true, "use this account to collect payments")
	payout := fs.Bool("payout", true, "use this account to send transfers, where the provider can")
	cfg, _, err := parseFlags(fs, args, getenv, stderr)
	if err != nil {
		return err
	}
	p, ok := gateway.Lookup(*providerKey)
	if !ok {
		return fmt.Errorf("gateway add: --provider must be one of %s", strings.Join(gateway.Keys(), ", "))
	}
	if *workspaceID == "" {
		return errors.New("gateway add: --workspace is required")
	}
	creds, err := readCredentials(*credsFile, stdin)
	if err != nil {
		return err
	}
	if *baseURL != "" {
		u, err := url.Parse(*baseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return errors.New("gateway add: --api-url must be an absolute http(s) URL")
		}
		if *live && u.Scheme == "http" && u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1" {
			return errors.New("gateway add: live credentials travel only over https (--api-url http is for a local simulator)")
		}
	}
	var list []string
	for _, c := range strings.Split(*countries, ",") {
		if c = strings.TrimSpace(c); c != "" {
			list = append(list, c)
		}
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, *workspaceID)
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	g, err := (&gateways.Service{Store: st, Now: time.Now}).Add(ctx, ws, gateways.New{Provider: p.Key, Name: *name, Live: *live,
		Countries: list, Credentials: creds, BaseURL: *baseURL, NoCollect: !*collect, NoPayout: !*payout})
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	if *payout && p.Payout && !g.Payout {
		fmt.Fprintf(stderr, "gateway add: %s sends money only with the credentials %s: this gateway collects only\n", p.Name, strings.Join(p.PayoutCredentials, ", "))
	}
	return printJSON(stdout, showGateway(g))
}

func readCredentials(file string, stdin io.Reader) (map[string]string, error) {
	var r io.Reader
	switch file {
	case "":
		return nil, errors.New("gateway add: --credentials FILE (or - for standard input) is required")
	case "-":
		if stdin == nil {
			return nil, errors.New("gateway add: no standard input to read the credentials from")
		}
		r = stdin
	default:
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("gateway add: %w", err)
		}
		defer f.Close()
		r = f
	}
	var creds map[string]string
	if err := json.NewDecoder(io.LimitReader(r, 64<<10)).Decode(&creds); err != nil {
		return nil, fmt.Errorf("gateway add: credentials must be a JSON object of strings: %w", err)
	}
	return creds, nil
}
