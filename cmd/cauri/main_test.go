package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// jsonField reads a string at path in a JSON document.
func jsonField(t *testing.T, doc []byte, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// testDatabases are the environments of a fresh database of each kind.
var testDatabases = []struct {
	name string
	env  func(t *testing.T) map[string]string
}{
	{"sqlite", func(t *testing.T) map[string]string {
		return map[string]string{"CAURI_DATABASE_URL": storetest.SQLiteURL(t)}
	}},
	{"postgres", func(t *testing.T) map[string]string {
		return map[string]string{"CAURI_DATABASE_URL": storetest.PostgresURL(t), "CAURI_MASTER_KEY": "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="}
	}},
}

// TestRun_EndToEnd runs the real program: serve on a free port, the
// workspace commands against the same database while it serves, a session
// paid in the sandbox, and a graceful stop.
func TestRun_EndToEnd(t *testing.T) {
	for _, db := range testDatabases {
		t.Run(db.name, func(t *testing.T) {
			srv := startServe(t, db.env(t))
			ctx, cancel, done, logs, addr, base, getenv := srv.ctx, srv.stop, srv.done, srv.logs, srv.addr, srv.base, srv.getenv

			var out bytes.Buffer
			if err := run(ctx, []string{"workspace", "create", "--name", "Boutique Adjoa"}, getenv, nil, &out, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 0 {
				t.Fatalf("workspace create printed %d lines; want one JSON object on one line", n+1)
			}
			var ws struct {
				ID       string            `json:"id"`
				Name     string            `json:"name"`
				Verified bool              `json:"verified"`
				Connect  bool              `json:"connect"`
				Keys     map[string]string `json:"keys"`
			}
			if err := json.Unmarshal(out.Bytes(), &ws); err != nil {
				t.Fatalf("workspace create printed %q: %v", out.String(), err)
			}
			for name, re := range map[string]string{
				"live_public": `^svc_live_pub_[a-z2-7]{32}$`, "live_secret": `^svc_live_sec_[a-z2-7]{32}$`,
				"test_public": `^svc_test_pub_[a-z2-7]{32}$`, "test_secret": `^svc_test_sec_[a-z2-7]{32}$`,
			} {
				if !regexp.MustCompile(re).MatchString(ws.Keys[name]) {
					t.Errorf("keys.%s = %q; want %s", name, ws.Keys[name], re)
				}
			}
			if ws.Name != "Boutique Adjoa" || ws.Verified || ws.Connect {
				t.Fatalf("workspace = %+v", ws)
			}

			// A test session, paid in the sandbox, through the Go client.
			test := client.New(base, ws.Keys["test_secret"])
			order := "1042"
			sess, replayed, err := test.CreateSession(ctx, client.CreateSessionRequest{Amount: "5000", Metadata: &map[string]string{"order_id": order}}, "order-"+order)
			if err != nil || replayed || !strings.HasPrefix(sess.Url, base+"/pay/cs_") {
				t.Fatalf("create = %+v, %v, %v; want a new session under %s/pay", sess, replayed, err, base)
			}
			again, replayed, err := test.CreateSession(ctx, client.CreateSessionRequest{Amount: "5000", Metadata: &map[string]string{"order_id": order}}, "order-"+order)
			if err != nil || !replayed || again.Id != sess.Id {
				t.Fatalf("replay = %+v, %v, %v; want the same session, replayed", again, replayed, err)
			}
			methods, err := client.New(base, ws.Keys["test_public"]).SessionMethods(ctx, sess.Id, "ci")
			if err != nil || len(methods.Methods) != 6 {
				t.Fatalf("methods = %+v, %v; want 4 operators and 2 cards for CI", methods, err)
			}
			if _, err := client.New(base, "").SettleSandbox(ctx, sess.Id, client.Succes); err != nil {
				t.Fatal(err)
			}
			paid, err := test.SessionStatus(ctx, sess.Id)
			if err != nil || paid.Status != client.SessionStatusSUCCESS || !paid.Paid || paid.CompletedAt == nil {
				t.Fatalf("status = %+v, %v; want SUCCESS", paid, err)
			}
			var apiErr *client.APIError
			if _, err := client.New(base, "").SettleSandbox(ctx, sess.Id, client.Echec); !errors.As(err, &apiErr) || apiErr.Status != 409 {
				t.Fatalf("settling a paid session = %v; want a 409 APIError", err)
			}

			// Unverified: a live key makes test sessions. Verified: live ones.
			live := client.New(base, ws.Keys["live_secret"])
			if s, _, err := live.CreateSession(ctx, client.CreateSessionRequest{Amount: "5000"}, ""); err != nil || s.Livemode {
				t.Fatalf("unverified live session = %+v, %v; want livemode false", s, err)
			}
			out.Reset()
			if err := run(ctx, []string{"workspace", "verify", ws.ID}, getenv, nil, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), `"verified":true`) {
				t.Fatalf("workspace verify = %q, %v", out.String(), err)
			}
			if s, _, err := live.CreateSession(ctx, client.CreateSessionRequest{Amount: "5000"}, ""); err != nil || !s.Livemode {
				t.Fatalf("verified live session = %+v, %v; want livemode true", s, err)
			}
			if err := run(ctx, []string{"workspace", "verify", "ws_nope"}, getenv, nil, &out, &bytes.Buffer{}); err == nil {
				t.Fatal("verify of an unknown workspace succeeded")
			}

			// Stop while a request is half sent: it must still be answered.
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"amount": 7000}`
			fmt.Fprintf(conn, "POST /v1/checkout/sessions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				addr, ws.Keys["test_secret"], len(body), body[:5])
			time.Sleep(100 * time.Millisecond)
			cancel()
			time.Sleep(300 * time.Millisecond)
			fmt.Fprint(conn, body[5:])
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil || res.StatusCode != http.StatusCreated {
				t.Fatalf("request in flight during the stop = %v, %v; want 201", res, err)
			}
			res.Body.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("serve returned %v after the stop signal; want nil", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not stop")
			}
			for _, k := range ws.Keys {
				if strings.Contains(logs.String(), k) {
					t.Fatal("a key appears in the server's logs")
				}
			}
		})
	}
}

// served is `cauri serve` running on a free port of 127.0.0.1.
type served struct {
	addr, base string
	getenv     func(string) string
	ctx        context.Context // cancelled by stop
	stop       context.CancelFunc
	done       chan error // serve's return
	logs       *syncBuffer
}

// startServe runs `cauri serve` with env (a database's) until the test ends
// or stop is called, and waits until it is healthy.
func startServe(t *testing.T, env map[string]string) *served {
	t.Helper()
	addr := freeAddr(t)
	s := &served{addr: addr, base: "http://" + addr, done: make(chan error, 1), logs: &syncBuffer{}}
	env["CAURI_ADDR"], env["CAURI_BASE_URL"] = addr, s.base
	s.getenv = func(k string) string { return env[k] }
	s.ctx, s.stop = context.WithCancel(context.Background())
	t.Cleanup(s.stop)
	go func() { s.done <- run(s.ctx, []string{"serve"}, s.getenv, nil, io.Discard, s.logs) }()
	waitHealthy(t, s.base, s.done)
	return s
}

func waitHealthy(t *testing.T, base string, done chan error) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		default:
		}
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("/healthz never answered 200")
}

func TestRun_Errors(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"CAURI_DATABASE_URL": "postgres://127.0.0.1:1/none"}[k]
	}
	var stderr bytes.Buffer
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"fly"}, "unknown command"},
		{[]string{"workspace"}, "subcommand"},
		{[]string{"workspace", "create"}, "name is required"},
		{[]string{"workspace", "verify"}, "exactly one workspace id"},
		{[]string{"migrate"}, "CAURI_MASTER_KEY is required with PostgreSQL"},
		{[]string{"routing"}, "want a subcommand: simulate"},
		{[]string{"link"}, "want a subcommand: activate or deactivate"},
		{[]string{"user"}, "want a subcommand: create"},
		{[]string{"user", "create", "--email", "nope"}, "not an e-mail address"},
		{[]string{"user", "create", "--email", "a@b.co", "--workspace", "ws_x"}, "read from standard input"},
		{[]string{"user", "create", "--email", "a@b.co", "--workspace", "ws_x", "--password", "x"}, "flag provided but not defined: -password"},
		{[]string{"link", "deactivate", "pl_x"}, "want --workspace ID"},
		{[]string{"routing", "simulate", "--payments", "0"}, "at least 1"},
		{[]string{"workspace", "set-daily-cap", "ws_x"}, "and a value"},
	} {
		err := run(context.Background(), tc.args, getenv, nil, &bytes.Buffer{}, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v) = %v; want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestRun_RoutingSimulate prints the simulation's table.
func TestRun_RoutingSimulate(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"routing", "simulate", "--payments", "2000", "--seed", "7"}, func(string) string { return "" }, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Seed 7: 2000 payments", "| engine |", "| fixed best provider |", "| round robin |", "| oracle | ", "| 100.0% | 0 |"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRun_Simulate runs `cauri simulate pawapay` and pays through it with
// the real connector.
func TestRun_Simulate(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"simulate", "--addr", addr, "--token", "tok", "--settle-after", "0", "pawapay"}, nil, nil, out, io.Discard)
	}()
	c := &pawapay.Client{BaseURL: "http://" + addr, Token: "tok"}
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 100, Currency: "XOF", Phone: "+221771234567", Operator: "WAVE_SEN"}
	var st gateway.Status
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err = c.Collect(context.Background(), col); err == nil {
			break
		}
	}
	if err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect through the simulator = %+v, %v", st, err)
	}
	if !strings.Contains(out.String(), "pawapay simulator on http://"+addr) {
		t.Fatalf("simulate printed %q", out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("simulate returned %v", err)
	}
	if err := run(context.Background(), []string{"simulate", "stripe"}, nil, nil, io.Discard, io.Discard); err == nil {
		t.Fatal("simulate stripe succeeded")
	}
}

func TestRun_Migrate(t *testing.T) {
	url := storetest.SQLiteURL(t)
	var out bytes.Buffer
	getenv := func(k string) string { return map[string]string{"CAURI_DATABASE_URL": url}[k] }
	for range 2 { // idempotent
		if err := run(context.Background(), []string{"migrate"}, getenv, nil, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(out.String(), "migrations applied (sqlite)") {
		t.Fatalf("migrate printed %q", out.String())
	}
}

func TestRun_GatewayCommands(t *testing.T) {
	for _, db := range testDatabases {
		t.Run(db.name, func(t *testing.T) {
			env := db.env(t)
			getenv := func(k string) string { return env[k] }
			ctx := context.Background()
			cli := func(stdin string, args ...string) (string, error) {
				var out bytes.Buffer
				err := run(ctx, args, getenv, strings.NewReader(stdin), &out, io.Discard)
				return out.String(), err
			}
			out, err := cli("", "workspace", "create", "--name", "Shop", "--create") // no server made the database yet
			if err != nil {
				t.Fatal(err)
			}
			ws := jsonField(t, []byte(out), "id")
			token := "pp-sandbox-token-0123456789abcdef"
			out, err = cli(`{"api_token": "`+token+`"}`, "gateway", "add", "--workspace", ws, "--provider", "pawapay",
				"--countries", "CI,sn", "--credentials", "-", "--api-url", "http://127.0.0.1:9/")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, token) || !strings.Contains(out, `"api_token":"…cdef"`) || !strings.Contains(out, `"code":"WAVE_SEN"`) ||
				!strings.Contains(out, `"base_url":"http://127.0.0.1:9"`) || !strings.Contains(out, `"name":"pawaPay"`) {
				t.Fatalf("gateway add printed %s", out)
			}
			id := jsonField(t, []byte(out), "id")
			if out, err := cli("", "gateway", "list", "--workspace", ws); err != nil || !strings.Contains(out, id) || strings.Contains(out, token) {
				t.Fatalf("list = %s, %v", out, err)
			}
			if out, err := cli("", "gateway", "disable", "--workspace", ws, id); err != nil || !strings.Contains(out, `"enabled":false`) {
				t.Fatalf("disable = %s, %v", out, err)
			}
			if out, err := cli("", "gateway", "enable", "--workspace", ws, id); err != nil || !strings.Contains(out, `"enabled":true`) {
				t.Fatalf("enable = %s, %v", out, err)
			}
			if _, err := cli("", "gateway", "remove", "--workspace", ws, id); err != nil {
				t.Fatal(err)
			}
			if out, _ := cli("", "gateway", "list", "--workspace", ws); strings.TrimSpace(out) != "[]" {
				t.Fatalf("list after remove = %s", out)
			}
			for _, tc := range []struct {
				stdin string
				args  []string
				want  string
			}{
				{`{}`, []string{"gateway", "add", "--workspace", ws, "--provider", "stripe", "--credentials", "-"}, "--provider must be one of"},
				{`{}`, []string{"gateway", "add", "--workspace", ws, "--provider", "pawapay", "--credentials", "-"}, `need "api_token"`},
				{`{"api_token": 5}`, []string{"gateway", "add", "--workspace", ws, "--provider", "pawapay", "--credentials", "-"}, "JSON object of strings"},
				{`{"api_token": "x"}`, []string{"gateway", "add", "--workspace", ws, "--provider", "paystack", "--credentials", "-"}, `need "secret_key"`},
				{`{"api_token": "x"}`, []string{"gateway", "add", "--workspace", ws, "--provider", "pawapay", "--countries", "FR", "--credentials", "-"}, "does not serve"},
				{`{"api_token": "x"}`, []string{"gateway", "add", "--provider", "pawapay", "--credentials", "-"}, "--workspace is required"},
				{`{"api_token": "x"}`, []string{"gateway", "add", "--workspace", "ws_" + strings.Repeat("a", 32), "--provider", "pawapay", "--credentials", "-"}, "not found"},
				{``, []string{"gateway", "add", "--workspace", ws, "--provider", "pawapay"}, "--credentials FILE"},
				{``, []string{"gateway", "disable", "--workspace", ws, "gw_nope"}, "not found"},
				{``, []string{"gateway", "list"}, "--workspace is required"},
			} {
				if _, err := cli(tc.stdin, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%v = %v; want an error containing %q", tc.args, err, tc.want)
				}
			}
		})
	}
}

// TestRun_CLIUsesTheServersDatabase: an administration command finds the
// database as the server does, says which it used, and refuses to make a
// new one unless told (--create): run from another folder, it would
// otherwise write where no server reads, and print keys that get 401. Its
// -h lists its own flags, not every setting (issue 21, point 5).
func TestRun_CLIUsesTheServersDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "cauri.db")
	getenv := func(k string) string { return map[string]string{"CAURI_DATABASE_URL": path}[k] }
	cli := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, getenv, nil, &out, &errOut)
		return out.String(), errOut.String(), err
	}
	if _, _, err := cli("workspace", "create", "--name", "Shop"); err == nil || !strings.Contains(err.Error(), "no database at "+path) ||
		!strings.Contains(err.Error(), "--create") {
		t.Fatalf("create without a database = %v; want a refusal naming %s and --create", err, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command left a database behind: %v", err)
	}
	out, stderr, err := cli("workspace", "create", "--name", "Shop", "--create")
	if err != nil || !strings.Contains(out, `"test_secret"`) || !strings.Contains(stderr, "cauri: database SQLite "+path) {
		t.Fatalf("create --create = %q, %q, %v; want the workspace, and the database named on stderr", out, stderr, err)
	}
	if out, stderr, err := cli("workspace", "list"); err != nil || !strings.Contains(out, "Shop") || !strings.Contains(stderr, path) {
		t.Fatalf("list = %q, %q, %v", out, stderr, err)
	}
	_, help, err := cli("workspace", "create", "-h")
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(help, "-name") || !strings.Contains(help, "-create") ||
		strings.Contains(help, "-database-url") || !strings.Contains(help, "cauri serve -h") {
		t.Fatalf("workspace create -h = %v:\n%s\nwant its own flags only, and where the settings are listed", err, help)
	}
	if _, help, _ := cli("serve", "-h"); !strings.Contains(help, "-database-url") || strings.Contains(help, "-create") {
		t.Fatalf("serve -h:\n%s\nwant every setting, no --create", help)
	}
}

// TestUserCreate_PasswordFromStdin: the password comes from standard input
// (never a flag, visible in the process list), and is judged as the
// dashboard judges it.
func TestUserCreate_PasswordFromStdin(t *testing.T) {
	for stdin, want := range map[string]string{
		"short\n":      "10 to 72 characters",
		"password12\n": "too easy to guess",
		"\n":           "no password on standard input",
	} {
		err := run(context.Background(), []string{"user", "create", "--email", "a@b.co", "--workspace", "ws_x"},
			func(string) string { return "" }, strings.NewReader(stdin), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("user create with %q on stdin = %v; want %q", stdin, err, want)
		}
	}
}

// TestServe_DebugAddr: with CAURI_DEBUG_ADDR, serve answers Go's profiles
// on that address, and not on its public one; the command line, which may
// hold a secret given as a flag, is not served.
func TestServe_DebugAddr(t *testing.T) {
	debug := freeAddr(t)
	s := startServe(t, map[string]string{"CAURI_DATABASE_URL": filepath.Join(t.TempDir(), "cauri.db"), "CAURI_DEBUG_ADDR": debug})
	for _, c := range []struct {
		url  string
		want int
	}{
		{"http://" + debug + "/debug/pprof/goroutine?debug=1", 200},
		{"http://" + debug + "/debug/pprof/cmdline", 404},
		{s.base + "/debug/pprof/goroutine?debug=1", 404},
	} {
		res, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("GET %s = %d; want %d", c.url, res.StatusCode, c.want)
		}
	}
}
