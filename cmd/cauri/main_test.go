package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

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

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRun_EndToEnd runs the real program: serve on a free port, the
// workspace commands against the same database while it serves, a session
// paid in the sandbox, and a graceful stop.
func TestRun_EndToEnd(t *testing.T) {
	for _, db := range []struct {
		name string
		env  func(t *testing.T) map[string]string
	}{
		{"sqlite", func(t *testing.T) map[string]string {
			return map[string]string{"CAURI_DATABASE_URL": storetest.SQLiteURL(t)}
		}},
		{"postgres", func(t *testing.T) map[string]string {
			return map[string]string{"CAURI_DATABASE_URL": storetest.PostgresURL(t), "CAURI_MASTER_KEY": "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="}
		}},
	} {
		t.Run(db.name, func(t *testing.T) {
			env := db.env(t)
			addr := freeAddr(t)
			base := "http://" + addr
			env["CAURI_ADDR"], env["CAURI_BASE_URL"] = addr, base
			getenv := func(k string) string { return env[k] }

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			logs := &syncBuffer{}
			done := make(chan error, 1)
			go func() { done <- run(ctx, []string{"serve"}, getenv, &bytes.Buffer{}, logs) }()
			waitHealthy(t, base, done)

			var out bytes.Buffer
			if err := run(ctx, []string{"workspace", "create", "--name", "Boutique Adjoa"}, getenv, &out, &bytes.Buffer{}); err != nil {
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

			// A test session, paid in the sandbox.
			sess := post(t, base+"/v1/checkout/sessions", ws.Keys["test_secret"], `{"amount": 5000}`, 201)
			if !strings.HasPrefix(sess["url"].(string), base+"/pay/cs_") {
				t.Fatalf("url = %v; want under %s/pay", sess["url"], base)
			}
			post(t, base+"/checkout/sandbox", "", `{"transactionId": "`+sess["id"].(string)+`", "issue": "succes"}`, 200)

			// Unverified: a live key makes test sessions. Verified: live ones.
			if s := post(t, base+"/v1/checkout/sessions", ws.Keys["live_secret"], `{"amount": 5000}`, 201); s["livemode"] != false {
				t.Fatalf("unverified live session livemode = %v", s["livemode"])
			}
			out.Reset()
			if err := run(ctx, []string{"workspace", "verify", ws.ID}, getenv, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), `"verified":true`) {
				t.Fatalf("workspace verify = %q, %v", out.String(), err)
			}
			if s := post(t, base+"/v1/checkout/sessions", ws.Keys["live_secret"], `{"amount": 5000}`, 201); s["livemode"] != true {
				t.Fatalf("verified live session livemode = %v", s["livemode"])
			}
			if err := run(ctx, []string{"workspace", "verify", "ws_nope"}, getenv, &out, &bytes.Buffer{}); err == nil {
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

func post(t *testing.T, url, key, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != want {
		t.Fatalf("POST %s = %d %v; want %d", url, res.StatusCode, out, want)
	}
	return out
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
	} {
		err := run(context.Background(), tc.args, getenv, &bytes.Buffer{}, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v) = %v; want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestRun_Migrate(t *testing.T) {
	url := storetest.SQLiteURL(t)
	var out bytes.Buffer
	getenv := func(k string) string { return map[string]string{"CAURI_DATABASE_URL": url}[k] }
	for range 2 { // idempotent
		if err := run(context.Background(), []string{"migrate"}, getenv, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(out.String(), "migrations applied (sqlite)") {
		t.Fatalf("migrate printed %q", out.String())
	}
}
