package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
)

// TestRun_LivePaymentMetrics runs `cauri serve` with a live pawaPay gateway
// added by `cauri gateway add`, pointed at the simulator on 127.0.0.1; pays
// a session through the hosted page's API and the simulator's callback, and
// reads the gateway calls back from /metrics: the wiring of
// cauri_gateway_calls_total and cauri_gateway_call_duration_seconds.
func TestRun_LivePaymentMetrics(t *testing.T) {
	for _, db := range testDatabases {
		t.Run(db.name, func(t *testing.T) {
			srv := startServe(t, db.env(t))
			ctx, cancel, done, base, getenv := srv.ctx, srv.stop, srv.done, srv.base, srv.getenv
			cli := func(stdin string, args ...string) string {
				t.Helper()
				var out bytes.Buffer
				if err := run(ctx, args, getenv, strings.NewReader(stdin), &out, io.Discard); err != nil {
					t.Fatalf("cauri %v: %v", args, err)
				}
				return out.String()
			}

			sim := &pawapay.Simulator{Token: "sim-token", SettleAfter: 50 * time.Millisecond}
			simSrv := httptest.NewServer(sim)
			defer simSrv.Close()
			out := cli("", "workspace", "create", "--name", "Boutique Awa")
			ws, secret, public := jsonField(t, []byte(out), "id"), jsonField(t, []byte(out), "keys", "live_secret"), jsonField(t, []byte(out), "keys", "live_public")
			cli("", "workspace", "verify", ws)
			gw := jsonField(t, []byte(cli(`{"api_token": "sim-token"}`, "gateway", "add", "--workspace", ws, "--provider", "pawapay",
				"--countries", "SN", "--live", "--credentials", "-", "--api-url", simSrv.URL)), "id")
			sim.CallbackURL = base + "/callbacks/" + gw // before the first deposit: read only after it

			api := client.New(base, secret)
			sess, _, err := api.CreateSession(ctx, client.CreateSessionRequest{Amount: "1500"}, "")
			if err != nil || !sess.Livemode {
				t.Fatalf("create = %+v, %v; want a live session", sess, err)
			}
			methods, err := client.New(base, public).SessionMethods(ctx, sess.Id, "sn")
			if err != nil {
				t.Fatal(err)
			}
			var code string
			for _, m := range methods.Methods {
				if m.GatewayId == gw && m.Name == "Wave" {
					code = m.Code
				}
			}
			if code == "" {
				t.Fatalf("methods = %+v; want Wave through %s", methods.Methods, gw)
			}
			body, _ := json.Marshal(map[string]string{"transactionId": sess.Id, "gatewayId": gw, "code": code, "phone": "771234567"})
			res, err := http.Post(base+"/checkout/initiate", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("initiate = %d; want 200", res.StatusCode)
			}
			// The simulator settles and calls back; the service confirms the
			// callback with a status read at once, though the polling below
			// has just checked (status reads check at most every 8 s).
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				s, err := api.SessionStatus(ctx, sess.Id)
				if err == nil && s.Status == client.SessionStatusSUCCESS {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("session = %+v, %v; want SUCCESS after the simulator's callback", s, err)
				}
			}

			res, err = http.Get(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			metrics, _ := io.ReadAll(res.Body)
			res.Body.Close()
			value := func(series string) float64 {
				m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(metrics)
				if m == nil {
					return 0
				}
				v, _ := strconv.ParseFloat(string(m[1]), 64)
				return v
			}
			if v := value(`cauri_gateway_calls_total{operation="collect",outcome="pending",provider="pawapay"}`); v != 1 {
				t.Errorf("collect calls = %v; want 1", v)
			}
			if v := value(`cauri_gateway_calls_total{operation="status",outcome="succeeded",provider="pawapay"}`); v < 1 {
				t.Errorf("succeeded status reads = %v; want at least 1", v)
			}
			if v := value(`cauri_gateway_call_duration_seconds_count{operation="collect",provider="pawapay"}`); v != 1 {
				t.Errorf("collect durations observed = %v; want 1", v)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("serve returned %v", err)
			}
		})
	}
}
