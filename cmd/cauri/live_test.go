package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	neturl "net/url"
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
// cauri_gateway_calls_total and cauri_gateway_call_duration_seconds. Then
// sends a transfer through the same gateway with the Go client, and uses
// the administration's transfer switches.
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

			// A transfer through the same gateway, and the administration's switches.
			req := client.TransferCreateRequest{Amount: "2500", Country: "SN", Operator: "wave", Phone: "77 123 45 67"}
			tr, replayed, err := api.CreateTransfer(ctx, req, "payout-1")
			if err != nil || replayed || tr.Status != client.TransferStatusProcessing || tr.ProviderOperator != "WAVE_SEN" {
				t.Fatalf("transfer = %+v, %v, %v", tr, replayed, err)
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				got, err := api.Transfer(ctx, tr.Id)
				if err == nil && got.Status == client.TransferStatusSucceeded {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("transfer = %+v, %v; want succeeded after the simulator's callback", got, err)
				}
			}
			if again, replayed, err := api.CreateTransfer(ctx, req, "payout-1"); err != nil || !replayed || again.Id != tr.Id || sim.Payouts() != 1 {
				t.Fatalf("replay = %+v, %v, %v; %d payouts", again, replayed, err, sim.Payouts())
			}
			if out := cli("", "workspace", "close-transfers", ws); !strings.Contains(out, `"transfers_closed":true`) {
				t.Fatalf("close-transfers = %s", out)
			}
			var apiErr *client.APIError
			if _, _, err := api.CreateTransfer(ctx, req, "payout-2"); !errors.As(err, &apiErr) || apiErr.Status != 403 || apiErr.Code != "transferts_inactifs" {
				t.Fatalf("transfer while closed = %v", err)
			}
			cli("", "workspace", "open-transfers", ws)
			batch, err := api.CreateTransferBatch(ctx, []client.TransferCreateRequest{req, {Amount: "1000", Country: "SN", Operator: "orange_money", Phone: "+221771234568"}}, "batch-1")
			if err != nil || batch.Created != 2 || batch.Data[1].Transfer == nil || batch.Data[1].Transfer.ProviderOperator != "ORANGE_SEN" {
				t.Fatalf("batch = %+v, %v", batch, err)
			}
			if out := cli("", "workspace", "set-daily-cap", ws, "1"); !strings.Contains(out, `"transfer_daily_cap":1`) {
				t.Fatalf("set-daily-cap = %s", out)
			}
			if _, _, err := api.CreateTransfer(ctx, req, "payout-2"); !errors.As(err, &apiErr) || apiErr.Status != 429 || apiErr.Code != "plafond_journalier" {
				t.Fatalf("transfer over the cap = %v", err)
			}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if list, err := api.ListTransfers(ctx, client.TransferStatusProcessing, 10); err == nil && list.Count == 0 {
					break
				}
			}
			// A payment link, and the command that takes its page offline.
			link, err := api.CreatePaymentLink(ctx, "Robe wax", "15000", "")
			if err != nil || !link.Active || link.Currency != "XOF" {
				t.Fatalf("link = %+v, %v", link, err)
			}
			if check, err := api.CheckPaymentLink(ctx, link.Id); err != nil || check.Status != "WAITING" || check.Paid {
				t.Fatalf("check = %+v, %v", check, err)
			}
			if out := cli("", "link", "deactivate", "--workspace", ws, link.Id); !strings.Contains(out, `"active":false`) {
				t.Fatalf("link deactivate = %s", out)
			}
			if res, err := http.Get(link.Url); err != nil || res.StatusCode != http.StatusGone {
				t.Fatalf("inactive link page = %v, %v", res, err)
			} else {
				res.Body.Close()
			}
			// A dashboard user, who signs in and exports the workspace's transactions.
			if out := cli("correct horse battery\n", "user", "create", "--email", "awa@example.com", "--workspace", ws); !strings.Contains(out, `"created":true`) {
				t.Fatalf("user create = %s", out)
			}
			jar, _ := cookiejar.New(nil)
			browser := &http.Client{Jar: jar}
			if res, err := browser.Get(base + "/dashboard/login"); err == nil {
				res.Body.Close()
			}
			u, _ := neturl.Parse(base)
			csrfToken := ""
			for _, c := range jar.Cookies(u) {
				if c.Name == "cauri_csrf" {
					csrfToken = c.Value
				}
			}
			res, err = browser.PostForm(base+"/dashboard/login", neturl.Values{"email": {"awa@example.com"}, "password": {"correct horse battery"}, "csrf": {csrfToken}})
			if err != nil || res.StatusCode != 200 { // followed to the dashboard
				t.Fatalf("login = %v, %v", res, err)
			}
			res.Body.Close()
			res, err = browser.Get(base + "/v1/transactions/export?status=SUCCESS")
			if err != nil {
				t.Fatal(err)
			}
			exported, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(string(exported), sess.Id) {
				t.Fatalf("export = %d %s; want the paid session", res.StatusCode, exported)
			}
			list, err := api.ListTransfers(ctx, client.TransferStatusSucceeded, 10)
			if err != nil || list.Count != 3 {
				t.Fatalf("list = %+v, %v", list, err)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("serve returned %v", err)
			}
		})
	}
}
