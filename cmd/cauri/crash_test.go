package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"reflect"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestMain lets the crash test run this test binary as the server, so that
// it can kill a real process, and the docs test as the command line.
func TestMain(m *testing.M) {
	if os.Getenv("CAURI_TEST_CLI") == "1" { // the docs test's `cauri`
		if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "cauri:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("CAURI_TEST_SERVE") == "1" {
		// The cluster test's nodes pass their reconcilers every second and
		// adopt a payout cut short by a kill after 3 seconds, not 5 minutes.
		if os.Getenv("CAURI_TEST_FAST_RECONCILE") == "1" {
			reconcileEvery, movement.InitiationDeadline = time.Second, 3*time.Second
		}
		// The overview's crash test holds the folds back, so that its kill
		// lands between the payments' changes and their folding.
		if os.Getenv("CAURI_TEST_HOLD_ROLLUPS") == "1" {
			rollupsEvery = time.Hour
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, []string{"serve"}, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// server is the service in a process of its own.
type server struct {
	cmd  *exec.Cmd
	logs *syncBuffer
}

func startServer(t *testing.T, env map[string]string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CAURI_TEST_SERVE=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := &server{cmd: cmd, logs: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get("http://" + env["CAURI_ADDR"] + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
	}
	t.Fatalf("server did not start:\n%s", s.logs.String())
	return nil
}

// TestCrash_DeliveryInFlightSurvivesKill kills the server (SIGKILL) while a
// webhook is in flight; after a restart the delivery is attempted again,
// with the same delivery id, once its lease has expired.
func TestCrash_DeliveryInFlightSurvivesKill(t *testing.T) {
	for _, db := range testDatabases {
		t.Run(db.name, func(t *testing.T) {
			env := db.env(t)
			addr := freeAddr(t)
			env["CAURI_ADDR"], env["CAURI_BASE_URL"] = addr, "http://"+addr
			env["CAURI_WEBHOOK_ALLOWED_CIDRS"] = "127.0.0.0/8"
			env["CAURI_WEBHOOK_TIMEOUT"] = "2s" // a lease of 5 s

			var mu sync.Mutex
			var ids []string
			first := make(chan struct{})
			release := make(chan struct{})
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				mu.Lock()
				ids = append(ids, r.Header.Get("X-Service-Delivery"))
				n := len(ids)
				mu.Unlock()
				if n == 1 {
					close(first)
					<-release // never answers: the server dies meanwhile
				}
			}))
			t.Cleanup(rc.Close)
			t.Cleanup(func() { close(release) })

			srv := startServer(t, env)
			var out bytes.Buffer
			if err := run(context.Background(), []string{"workspace", "create", "--name", "Crash shop"}, func(k string) string { return env[k] }, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			key := jsonField(t, out.Bytes(), "keys", "test_secret")
			ctx := context.Background()
			c := client.New("http://"+addr, key)
			url := rc.URL + "/hooks"
			if _, err := c.UpdateWebhookConfig(ctx, client.WebhookConfigUpdate{WebhookUrl: &url}); err != nil {
				t.Fatal(err)
			}
			sess, _, err := c.CreateSession(ctx, client.CreateSessionRequest{Amount: "4200"}, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.New("http://"+addr, "").SettleSandbox(ctx, sess.Id, client.Succes); err != nil {
				t.Fatal(err)
			}
			select {
			case <-first:
			case <-time.After(10 * time.Second):
				t.Fatalf("no delivery came:\n%s", srv.logs.String())
			}
			srv.cmd.Process.Kill() // SIGKILL: no shutdown, the attempt is never recorded
			srv.cmd.Process.Wait()

			startServer(t, env)
			var d *client.Delivery
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				list, err := c.ListDeliveries(ctx, client.DeliveryFilter{TransactionID: sess.Id})
				if err == nil && len(list.Data) == 1 && list.Data[0].Status == client.DeliveryStatusDelivered {
					d = &list.Data[0]
					break
				}
			}
			if d == nil {
				t.Fatal("the delivery in flight at the crash was not delivered after the restart")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(ids) != 2 || ids[0] != d.Id || ids[1] != d.Id || d.Attempts != 1 {
				t.Fatalf("requests carried %v; delivery %s has %d attempts; want the same delivery twice, one recorded attempt", ids, d.Id, d.Attempts)
			}
		})
	}
}

// TestCrash_OverviewCountsSurviveKill kills the server (SIGKILL) while
// payments' counts wait to be folded: after a
// restart, the overview's figures are those of a recount of the payments,
// and the new server folded what the dead one left.
func TestCrash_OverviewCountsSurviveKill(t *testing.T) {
	for _, db := range testDatabases {
		t.Run(db.name, func(t *testing.T) {
			env := db.env(t)
			addr := freeAddr(t)
			env["CAURI_ADDR"], env["CAURI_BASE_URL"] = addr, "http://"+addr
			held := maps.Clone(env)
			held["CAURI_TEST_HOLD_ROLLUPS"] = "1"
			srv := startServer(t, held)
			var out bytes.Buffer
			if err := run(context.Background(), []string{"workspace", "create", "--name", "Crash shop"}, func(k string) string { return env[k] }, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			wsID, key := jsonField(t, out.Bytes(), "id"), jsonField(t, out.Bytes(), "keys", "test_secret")
			ctx := context.Background()
			// No waits on a 429: the payers stop at their first refusal.
			c, sandbox := client.New("http://"+addr, key, client.WithRetries(0, 0)), client.New("http://"+addr, "", client.WithRetries(0, 0))

			// Four payers create five sessions each and settle three of them
			// (success or failure) in the sandbox (the budgets per address
			// allow no more in a minute); then the server dies, its counts'
			// changes committed and not folded.
			var payers sync.WaitGroup
			for p := range 4 {
				payers.Add(1)
				go func() {
					defer payers.Done()
					for i := range 5 {
						sess, _, err := c.CreateSession(ctx, client.CreateSessionRequest{Amount: json.Number(fmt.Sprint(1000 + 100*p + i))}, "")
						if err == nil && i < 3 {
							_, err = sandbox.SettleSandbox(ctx, sess.Id, []client.SandboxIssue{client.Succes, client.Echec}[i%2])
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			payers.Wait()
			if t.Failed() {
				t.FailNow()
			}
			srv.cmd.Process.Kill()
			srv.cmd.Process.Wait()

			st := storetest.Open(t, env["CAURI_DATABASE_URL"])
			period := func() *store.Stats {
				t.Helper()
				today := time.Now().UTC().Truncate(24 * time.Hour)
				stats, err := st.Stats(ctx, wsID, false, today.Add(-24*time.Hour), today.Add(48*time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				return stats
			}
			if n, err := st.UnfoldedRollups(ctx); err != nil || n == 0 {
				t.Fatalf("%d changes of the counts wait to be folded after the kill (%v); want those the dead server left", n, err)
			}
			startServer(t, env)
			// The new server folds them within a second or two.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				n, err := st.UnfoldedRollups(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the restarted server left %d changes of the counts unfolded", n)
				}
			}
			kept := period()
			if _, err := st.RebuildRollups(ctx); err != nil {
				t.Fatal(err)
			}
			recounted := period()
			if !reflect.DeepEqual(kept, recounted) {
				t.Fatalf("after the crash the overview counts %v sessions; a recount %v", kept.Currencies, recounted.Currencies)
			}
			if n := recounted.Currencies["XOF"]; n != 20 {
				t.Fatalf("the recount found %d sessions; 20 were created before the kill", n)
			}
			if d := recounted.Days["XOF"]; len(d) == 0 {
				t.Fatal("the recount found no day of payments")
			}
		})
	}
}
