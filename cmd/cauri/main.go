// Command cauri is the whole service in one binary: the API server, the
// migrations and the administration commands. main only wires signals to
// run, so tests run the real program in-process.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/vault"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "cauri:", err)
		}
		os.Exit(1)
	}
}

const usage = `Usage: cauri <command> [flags]

Commands:
  serve                      run the API, the hosted pages, /healthz and /metrics
  migrate                    apply the database migrations (serve does it too)
  workspace create --name N [--verified] [--connect]
                             create a workspace and print it with its four keys (shown once)
  workspace verify ID        mark a workspace's identity verified (it leaves test-only mode)
  workspace close-transfers|open-transfers ID
                             close transfers on a workspace (403 transferts_inactifs), or reopen them
  workspace set-daily-cap ID N
                             how many transfers it may create per day (GMT; default 200)
  workspace set-connect ID on|off
                             a Connect workspace: the service holds its money (no transfers)
  workspace list             every workspace, newest first
  workspace roll-key --key live_secret|live_public|test_secret|test_public [--grace 24h] ID
                             a new key, printed once; the replaced one works for --grace more
  connect balance ID         what the service owes a Connect workspace, per currency
  connect settle --amount A --currency C --reference R ID
                             record a settlement paid out to a Connect workspace (402 beyond its balance)
  partner create --name N    a partner product's secret for /v1/partner/*, printed once
  partner list
  partner revoke PARTNER_ID
  purge [--test-older-than 90d]
                             delete test data older than that (live data is never touched)
  overview rebuild          recount the dashboard overview's figures from the payments themselves
  search rebuild            write again the search terms of every payment (after a rolling deploy)
  audit [--workspace ID] [--limit 100]
                             the audit log of administrative and partner actions, newest first
  gateway add --workspace ID --provider P --name N --credentials FILE|- [--live] [--countries CI,SN] [--api-url URL]
                             connect one of the merchant's aggregator accounts (credentials as a JSON object)
  gateway list --workspace ID
  gateway disable|enable|remove --workspace ID GATEWAY_ID
  user create --email E --workspace ID
                             a dashboard user of a workspace (sign in at /dashboard); the password
                             is read from standard input, or asked on a terminal
  link deactivate|activate --workspace ID LINK_ID
                             take a payment link's page offline, or back online
  simulate [--addr 127.0.0.1:8090] [--token T] [--callback-url URL] [--settle-after 3s] PROVIDER
                             run an aggregator's simulator for local development
                             (pawapay, cinetpay, fedapay, paystack, flutterwave, wave, mtnmomo, mpesa, orangemoney)
  routing simulate [--seed 42] [--payments 100000] [--providers 4] [--outages-per-day 1]
                             replay payments through the routing engine and its baselines; print the table

Every command reads the CAURI_* environment variables ("cauri serve -h" lists them, as flags
too) and uses the database the server uses; an administration command says which on stderr,
and refuses to make a new one without --create.
`

// run is the program: args without the program name, the environment
// through getenv, input from stdin, output to stdout and stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	// The administration's changes are recorded in the audit log as the
	// command line's, with the operating system's user where known.
	user := "unknown"
	if getenv != nil {
		user = cmp.Or(getenv("USER"), user)
	}
	ctx = store.WithActor(ctx, "cli:"+user)
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stderr)
	case "migrate":
		return migrate(ctx, args[1:], getenv, stdout, stderr)
	case "workspace":
		return workspace(ctx, args[1:], getenv, stdout, stderr)
	case "gateway":
		return gatewayCommand(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "link":
		return linkCommand(ctx, args[1:], getenv, stdout, stderr)
	case "user":
		return userCommand(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "partner":
		return partnerCommand(ctx, args[1:], getenv, stdout, stderr)
	case "connect":
		return connectCommand(ctx, args[1:], getenv, stdout, stderr)
	case "purge":
		return purgeCommand(ctx, args[1:], getenv, stdout, stderr)
	case "overview":
		return overviewCommand(ctx, args[1:], getenv, stdout, stderr)
	case "search":
		return searchCommand(ctx, args[1:], getenv, stdout, stderr)
	case "audit":
		return auditCommand(ctx, args[1:], getenv, stdout, stderr)
	case "simulate":
		return simulate(ctx, args[1:], stdout, stderr)
	case "routing":
		return routingCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// settings is what a command's flags give besides its own: the
// configuration, and for the commands that open the store, whether they
// may create a new database.
type settings struct {
	config.Config
	create bool // --create, or a command that makes the database (serve, migrate)
	admin  bool // an administration command: it names the database it used on stderr
	stderr io.Writer
}

// parseFlags declares the configuration flags on fs (and --create, except
// on serve and migrate, which make the database when there is none),
// parses args (flags may come before or after the positional arguments)
// and returns the settings and the positional arguments. Its -h lists the
// command's own flags; serve -h lists the settings.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) (settings, []string, error) {
	fs.SetOutput(stderr)
	makes := fs.Name() == "serve" || fs.Name() == "migrate"
	var create *bool
	if !makes {
		create = fs.Bool("create", false, "make a new embedded database when there is none at CAURI_DATABASE_URL (without it the command refuses, rather than write where no server reads)")
	}
	own := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { own[f.Name] = true })
	finish := config.Register(fs, getenv)
	if fs.Name() != "serve" {
		fs.Usage = func() {
			fmt.Fprintf(stderr, "Usage of cauri %s:\n", fs.Name())
			fs.VisitAll(func(f *flag.Flag) {
				if own[f.Name] {
					name, usage := flag.UnquoteUsage(f)
					fmt.Fprintf(stderr, "  -%s %s\n    \t%s\n", f.Name, name, usage)
				}
			})
			fmt.Fprintln(stderr, "It reads the server's settings too (CAURI_DATABASE_URL, CAURI_MASTER_KEY, ...), from the environment or as flags: \"cauri serve -h\" lists them.")
		}
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return settings{}, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	cfg, err := finish()
	return settings{Config: cfg, create: makes || (create != nil && *create), admin: !makes, stderr: stderr}, positional, err
}

// openStore opens the configured database with the master key and applies
// the migrations it lacks. Embedded mode generates the key next to the
// database file on first start; PostgreSQL needs CAURI_MASTER_KEY, since
// every node must share it. An administration command names the database
// on stderr, and refuses to make a new embedded one without --create: run
// from another folder, it would otherwise write where no server reads.
func openStore(ctx context.Context, cfg settings) (*store.Store, error) {
	var key []byte
	var err error
	kind, path, _ := config.ParseDatabaseURL(cfg.DatabaseURL)
	if kind == config.SQLite {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !cfg.create {
			return nil, fmt.Errorf("no database at %s (CAURI_DATABASE_URL=%s): run the command in the folder where `cauri serve` runs, or set CAURI_DATABASE_URL to the server's database; --create makes a new one", path, cfg.DatabaseURL)
		}
	}
	if cfg.admin {
		fmt.Fprintf(cfg.stderr, "cauri: database %s\n", describeDatabase(kind, path))
	}
	switch {
	case cfg.MasterKey != "":
		key, err = vault.ParseKey(cfg.MasterKey)
	case kind == config.SQLite:
		key, err = vault.LoadOrCreateKeyFile(config.MasterKeyFile(path))
	default:
		err = errors.New("CAURI_MASTER_KEY is required with PostgreSQL: every node must use the same key (generate one with: openssl rand -base64 32)")
	}
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	v, err := vault.New(key)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, v)
	if err != nil {
		return nil, err
	}
	// A change to keys made here reaches a running server's cache before
	// the command returns.
	st.AwaitKeyCaches = kind == config.SQLite && databaseServed(path)
	if st.AwaitKeyCaches {
		st.NudgeKeyCaches = nudgeServer(path)
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// describeDatabase names a database for a person: the SQLite file's path,
// or the PostgreSQL URL without its password.
func describeDatabase(kind, target string) string {
	if kind == config.SQLite {
		return "SQLite " + target
	}
	if u, err := url.Parse(target); err == nil {
		return "PostgreSQL " + u.Redacted()
	}
	return "PostgreSQL"
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, _, err := parseFlags(flag.NewFlagSet("migrate", flag.ContinueOnError), args, getenv, stderr)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "migrations applied (%s)\n", st.Kind())
	return nil
}
