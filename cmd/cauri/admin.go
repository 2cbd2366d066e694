package main

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/store"
)

// The service administration's commands beyond the workspace switches:
// partners, Connect settlements and balances, the test-data purge, the
// overview's recount and the audit log. None of this has an HTTP route.

// withStore parses a command's flags (fs, with the CAURI_* ones), checks
// it got npos positional arguments, and opens the store for fn.
func withStore(ctx context.Context, name string, fs *flag.FlagSet, args []string, npos int, usage string, getenv func(string) string,
	stderr io.Writer, fn func(st *store.Store, pos []string) error) error {
	cfg, pos, err := parseFlags(fs, args, getenv, stderr)
	if err != nil {
		return err
	}
	if len(pos) != npos {
		return fmt.Errorf("%s: %s", name, usage)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := fn(st, pos); err != nil {
		if cauri.ErrorCode(err) != cauri.EInternal {
			return fmt.Errorf("%s: %s", name, cauri.ErrorMessage(err))
		}
		return err
	}
	return nil
}

// partnerCommand issues, lists and revokes partner secrets.
func partnerCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const want = "create, list or revoke"
	if len(args) == 0 {
		return errors.New("partner: want a subcommand: " + want)
	}
	fs := flag.NewFlagSet("partner "+args[0], flag.ContinueOnError)
	switch args[0] {
	case "create":
		name := fs.String("name", "", "the partner product's name (required)")
		return withStore(ctx, "partner create", fs, args[1:], 0, "takes --name only", getenv, stderr, func(st *store.Store, _ []string) error {
			n, err := cauri.CleanText("--name", *name, 200)
			if err != nil || n == "" {
				return errors.New("--name is required: the partner product's name, at most 200 characters")
			}
			p := &store.Partner{ID: cauri.NewID("ptn_"), Name: n, CreatedAt: time.Now().UTC()}
			secret := newPartnerSecret()
			if err := st.CreatePartner(ctx, p, secret); err != nil {
				return err
			}
			// The only time the secret is shown.
			return printJSON(stdout, map[string]any{"id": p.ID, "name": p.Name, "secret": secret, "created_at": p.CreatedAt.Format(cauri.TimeFormat)})
		})
	case "list":
		return withStore(ctx, "partner list", fs, args[1:], 0, "takes no argument", getenv, stderr, func(st *store.Store, _ []string) error {
			list, err := st.Partners(ctx)
			if err != nil {
				return err
			}
			for _, p := range list {
				out := map[string]any{"id": p.ID, "name": p.Name, "created_at": p.CreatedAt.Format(cauri.TimeFormat), "revoked": p.RevokedAt != nil}
				if err := printJSON(stdout, out); err != nil {
					return err
				}
			}
			return nil
		})
	case "revoke":
		return withStore(ctx, "partner revoke", fs, args[1:], 1, "want one partner id", getenv, stderr, func(st *store.Store, pos []string) error {
			if err := st.RevokePartner(ctx, pos[0], time.Now()); err != nil {
				return err
			}
			return printJSON(stdout, map[string]any{"id": pos[0], "revoked": true})
		})
	}
	return fmt.Errorf("partner: unknown subcommand %q (want %s)", args[0], want)
}

// newPartnerSecret is a partner's secret: psk_ and 256 random bits.
func newPartnerSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "psk_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// connectCommand shows a Connect workspace's balance and records the
// settlements paid out to it.
func connectCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const want = "balance or settle"
	if len(args) == 0 {
		return errors.New("connect: want a subcommand: " + want)
	}
	fs := flag.NewFlagSet("connect "+args[0], flag.ContinueOnError)
	switch args[0] {
	case "balance":
		return withStore(ctx, "connect balance", fs, args[1:], 1, "want one workspace id", getenv, stderr, func(st *store.Store, pos []string) error {
			if _, err := st.Workspace(ctx, pos[0]); err != nil {
				return err
			}
			b, err := st.Balance(ctx, pos[0])
			if err != nil {
				return err
			}
			out := map[string]string{}
			for cur, n := range b {
				out[string(cur)] = cauri.FormatAmount(n, cur)
			}
			return printJSON(stdout, map[string]any{"workspace": pos[0], "balance": out})
		})
	case "settle":
		amount := fs.String("amount", "", "the amount paid out, in major units (required)")
		currency := fs.String("currency", "", "its currency (required)")
		reference := fs.String("reference", "", "the payout's reference at the bank or the operator (required; settling twice with it records once)")
		return withStore(ctx, "connect settle", fs, args[1:], 1, "want one workspace id", getenv, stderr, func(st *store.Store, pos []string) error {
			cur, err := cauri.ParseCurrency(*currency)
			if err != nil {
				return err
			}
			minor, err := cauri.ParseAmount("--amount", *amount, cur)
			if err != nil {
				return err
			}
			m, err := (&reports.Service{Store: st, Now: time.Now}).Settle(ctx, pos[0], cur, minor, *reference)
			if err != nil {
				if r := cauri.ErrorReason(err); r != "" {
					return fmt.Errorf("%s (%s)", cauri.ErrorMessage(err), r)
				}
				return err
			}
			return printJSON(stdout, map[string]any{"movement": m.ID, "workspace": pos[0], "amount": cauri.FormatAmount(m.Amount, m.Currency),
				"currency": m.Currency, "reference": *reference, "created_at": m.CreatedAt.Format(cauri.TimeFormat)})
		})
	}
	return fmt.Errorf("connect: unknown subcommand %q (want %s)", args[0], want)
}

// purgeCommand deletes test data older than --test-older-than (90d by
// default, as the daily job does): live data is never touched.
func purgeCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	olderThan := fs.String("test-older-than", "90d", "the age beyond which test data goes: days (90d) or a Go duration (2160h)")
	return withStore(ctx, "purge", fs, args, 0, "takes --test-older-than only", getenv, stderr, func(st *store.Store, _ []string) error {
		age, err := parseAge(*olderThan)
		if err != nil {
			return err
		}
		now := time.Now()
		n, err := st.PurgeTestData(ctx, now.Add(-age))
		if err != nil {
			return err
		}
		if err := st.Audit(ctx, now, "test_data.purged", "", map[string]any{"older_than": *olderThan, "rows": n}); err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"purged_rows": n, "cutoff": now.Add(-age).UTC().Format(cauri.TimeFormat)})
	})
}

// overviewCommand recounts the dashboard overview's figures from the
// payments themselves (they are kept as payments move; this is for a
// store restored from a backup of one table, or edited by hand).
func overviewCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rebuild" {
		return errors.New("overview: want a subcommand: rebuild")
	}
	fs := flag.NewFlagSet("overview rebuild", flag.ContinueOnError)
	return withStore(ctx, "overview rebuild", fs, args[1:], 0, "takes no arguments", getenv, stderr, func(st *store.Store, _ []string) error {
		n, err := st.RebuildRollups(ctx)
		if err != nil {
			return err
		}
		if err := st.Audit(ctx, time.Now(), "overview.rebuilt", "", map[string]any{"counters": n}); err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"counters": n})
	})
}

// searchCommand is `cauri search rebuild`: the search terms of every
// session and attempt written again (those already there are kept), for
// the sessions nodes older than the terms' table made during a rolling
// deploy.
func searchCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rebuild" {
		return errors.New("search: want a subcommand: rebuild")
	}
	fs := flag.NewFlagSet("search rebuild", flag.ContinueOnError)
	return withStore(ctx, "search rebuild", fs, args[1:], 0, "takes no arguments", getenv, stderr, func(st *store.Store, _ []string) error {
		n, err := st.RebuildSearchTerms(ctx)
		if err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"rows_read": n})
	})
}

// parseAge reads a positive age: days (90d) or a Go duration (2160h).
func parseAge(s string) (time.Duration, error) {
	d, err := config.ParseAge(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--test-older-than must be a positive age such as 90d or 2160h, not %q", s)
	}
	return d, nil
}

// auditCommand prints the audit log, newest first, one JSON object a line.
func auditCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	workspaceID := fs.String("workspace", "", "only this workspace's entries")
	limit := fs.Int("limit", 100, "how many entries, newest first (1 to 10000)")
	return withStore(ctx, "audit", fs, args, 0, "takes --workspace and --limit only", getenv, stderr, func(st *store.Store, _ []string) error {
		if *limit < 1 || *limit > 10000 {
			return errors.New("--limit must be 1 to 10000")
		}
		list, err := st.AuditLog(ctx, *workspaceID, *limit)
		if err != nil {
			return err
		}
		for _, a := range list {
			out := map[string]any{"at": a.At.Format(cauri.TimeFormat), "actor": a.Actor, "action": a.Action, "workspace": a.WorkspaceID, "detail": a.Detail}
			if err := printJSON(stdout, out); err != nil {
				return err
			}
		}
		return nil
	})
}
