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
	"os"
	"os/signal"
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
  audit [--workspace ID] [--limit 100]
                             the audit log of administrative and partner actions, newest first
  gateway add --workspace ID --provider P --name N --credentials FILE|- [--live] [--countries CI,SN] [--api-url URL]
                             connect one of the merchant's aggregator accounts (credentials as a JSON object)
  gateway list --workspace ID
  gateway disable|enable|remove --workspace ID GATEWAY_ID
  user create --email E --password P --workspace ID
                             a dashboard user of a workspace (sign in at /dashboard)
  link deactivate|activate --workspace ID LINK_ID
                             take a payment link's page offline, or back online
  simulate [--addr 127.0.0.1:8090] [--token T] [--callback-url URL] [--settle-after 3s] PROVIDER
                             run an aggregator's simulator for local development
                             (pawapay, cinetpay, fedapay, paystack, flutterwave, wave, mtnmomo, mpesa, orangemoney)
  routing simulate [--seed 42] [--payments 100000] [--providers 4] [--outages-per-day 1]
                             replay payments through the routing engine and its baselines; print the table

Every command reads the CAURI_* environment variables; "cauri <command> -h" lists them as flags.
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

// parseFlags declares the configuration flags on fs, parses args (flags may
// come before or after the positional arguments) and returns the config and
// the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) (config.Config, []string, error) {
	fs.SetOutput(stderr)
	finish := config.Register(fs, getenv)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return config.Config{}, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	cfg, err := finish()
	return cfg, positional, err
}

// openStore opens the configured database with the master key and applies
// the migrations it lacks. Embedded mode generates the key next to the
// database file on first start; PostgreSQL needs CAURI_MASTER_KEY, since
// every node must share it.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	var key []byte
	var err error
	kind, path, _ := config.ParseDatabaseURL(cfg.DatabaseURL)
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
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
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
