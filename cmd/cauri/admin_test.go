package main

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/client"
)

// cli runs a command against the served database, as an operator would.
func (s *served) cli(stdin string, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(s.ctx, args, s.getenv, strings.NewReader(stdin), &out, &bytes.Buffer{})
	return out.String(), err
}

// TestRun_Administration reaches every switch of the service
// administration through the command line, while the service runs, and
// sees its effect through the API; each is in the audit log as the
// operator's.
func TestRun_Administration(t *testing.T) {
	for _, db := range testDatabases {
		t.Run(db.name, func(t *testing.T) {
			env := db.env(t)
			env["USER"] = "ops"
			srv := startServe(t, env)
			cli := func(args ...string) string {
				t.Helper()
				out, err := srv.cli("", args...)
				if err != nil {
					t.Fatalf("cauri %v: %v", args, err)
				}
				return out
			}
			call := func(method, path, body string, header ...string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest(method, srv.base+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var b bytes.Buffer
				b.ReadFrom(res.Body)
				return res.StatusCode, b.String()
			}
			out := cli("workspace", "create", "--name", "Admin shop")
			ws, live := jsonField(t, []byte(out), "id"), jsonField(t, []byte(out), "keys", "live_secret")
			auth := []string{"Authorization", "Bearer " + live}
			session := `{"amount": 1000}`
			if code, body := call("POST", "/v1/checkout/sessions", session, auth...); code != 201 || !strings.Contains(body, `"livemode":false`) {
				t.Fatalf("unverified: %d %s; want a test session", code, body)
			}
			cli("workspace", "verify", ws)
			if code, body := call("POST", "/v1/checkout/sessions", session, auth...); code != 201 || !strings.Contains(body, `"livemode":true`) {
				t.Fatalf("verified: %d %s; want a live session", code, body)
			}
			if out := cli("workspace", "list"); !strings.Contains(out, `"id":"`+ws+`"`) || !strings.Contains(out, `"verified":true`) {
				t.Fatalf("workspace list = %s", out)
			}
			// Keys.
			rolled := jsonField(t, []byte(cli("workspace", "roll-key", "--key", "live_secret", "--grace", "0s", ws)), "value")
			if code, _ := call("GET", "/v1/config/webhook", "", auth...); code != 401 {
				t.Fatalf("the rolled key = %d; want 401", code)
			}
			auth = []string{"Authorization", "Bearer " + rolled}
			if code, _ := call("GET", "/v1/config/webhook", "", auth...); code != 200 {
				t.Fatalf("the new key = %d", code)
			}
			// Connect: no transfers; its balance; a settlement beyond it.
			cli("workspace", "set-connect", ws, "on")
			transfer := `{"amount": 100, "country": "SN", "operator": "wave", "phone": "771234567"}`
			if code, body := call("POST", "/v1/transfers", transfer, auth...); code != 403 || !strings.Contains(body, "connect_non_disponible") {
				t.Fatalf("Connect transfer = %d %s", code, body)
			}
			if out := cli("connect", "balance", ws); !strings.Contains(out, `"balance":{}`) {
				t.Fatalf("balance = %s", out)
			}
			if _, err := srv.cli("", "connect", "settle", "--amount", "100", "--currency", "XOF", "--reference", "BANK-1", ws); err == nil ||
				!strings.Contains(err.Error(), "solde_insuffisant") {
				t.Fatalf("settle beyond the balance: %v", err)
			}
			cli("workspace", "set-connect", ws, "off")
			cli("workspace", "close-transfers", ws)
			if code, body := call("POST", "/v1/transfers", transfer, auth...); code != 403 || !strings.Contains(body, "transferts_inactifs") {
				t.Fatalf("closed transfers = %d %s", code, body)
			}
			cli("workspace", "open-transfers", ws)
			// A gateway that sends money to Senegal (never called: the cap refuses first).
			if _, err := srv.cli(`{"api_token": "t"}`, "gateway", "add", "--workspace", ws, "--provider", "pawapay", "--countries", "SN",
				"--live", "--credentials", "-", "--api-url", "http://127.0.0.1:9"); err != nil {
				t.Fatal(err)
			}
			cli("workspace", "set-daily-cap", ws, "0")
			if code, body := call("POST", "/v1/transfers", transfer, auth...); code != 429 || !strings.Contains(body, "plafond_journalier") {
				t.Fatalf("cap 0 = %d %s", code, body)
			}
			// Partners.
			if code, _ := call("GET", "/v1/partner/merchants", "", "x-partner-secret", "x"); code != 503 {
				t.Fatalf("partner API without partners = %d; want 503", code)
			}
			p := cli("partner", "create", "--name", "Acme POS")
			pid, secret := jsonField(t, []byte(p), "id"), jsonField(t, []byte(p), "secret")
			acme := client.NewPartner(srv.base, secret)
			m, err := acme.CreateMerchant(srv.ctx, client.MerchantCreate{Name: "Via Acme", Email: "owner@example.com"})
			if err != nil || m.Keys == nil || m.Owner == nil || m.Owner.InvitationUrl == nil || m.Verification != client.MerchantVerificationPending {
				t.Fatalf("partner create merchant = %+v, %v", m, err)
			}
			cli("workspace", "verify", m.Id)
			if v, err := acme.Verification(srv.ctx, m.Id); err != nil || v.Status != client.VerificationStatusVerified || !v.Livemode {
				t.Fatalf("verification after the administration's = %+v, %v", v, err)
			}
			if l, err := acme.Merchants(srv.ctx, 10); err != nil || l.Count != 1 || l.Data[0].Id != m.Id {
				t.Fatalf("merchants = %+v, %v", l, err)
			}
			var apiErr *client.APIError
			if _, err := client.NewPartner(srv.base, "psk_wrong").Merchants(srv.ctx, 0); !errors.As(err, &apiErr) || apiErr.Status != 401 {
				t.Fatalf("a wrong secret: %v", err)
			}
			if out := cli("partner", "list"); !strings.Contains(out, pid) || strings.Contains(out, secret) {
				t.Fatalf("partner list = %s", out)
			}
			cli("partner", "revoke", pid)
			if code, _ := call("GET", "/v1/partner/merchants", "", "x-partner-secret", secret); code != 503 {
				t.Fatalf("after the only partner's revocation = %d; want 503", code)
			}
			// The purge, and the audit log.
			if out := cli("purge", "--test-older-than", "90d"); !strings.Contains(out, `"purged_rows":0`) {
				t.Fatalf("purge = %s", out)
			}
			// The overview's recount, while the server runs.
			if out := cli("search", "rebuild"); !strings.Contains(out, `"rows_read":`) {
				t.Fatalf("search rebuild = %s", out)
			}
			if out := cli("overview", "rebuild"); !strings.Contains(out, `"counters":`) {
				t.Fatalf("overview rebuild = %s", out)
			}
			log := cli("audit", "--workspace", ws)
			for _, action := range []string{"workspace.created", "workspace.verified", "key.rolled", "workspace.connect", "workspace.transfers_closed",
				"workspace.transfer_daily_cap"} {
				if !strings.Contains(log, `"action":"`+action+`"`) {
					t.Errorf("audit log lacks %s:\n%s", action, log)
				}
			}
			if strings.Count(log, `"actor":"cli:ops"`) < 8 || strings.Contains(log, rolled) {
				t.Errorf("audit log actors (or a key in it):\n%s", log)
			}
			all := cli("audit", "--limit", "1000")
			for _, want := range []string{`"action":"partner.created"`, `"action":"partner.revoked"`, `"action":"test_data.purged"`, `"action":"overview.rebuilt"`, `"actor":"partner:` + pid} {
				if !strings.Contains(all, want) {
					t.Errorf("audit log lacks %s", want)
				}
			}
			for _, bad := range [][]string{
				{"workspace", "set-connect", ws, "maybe"}, {"workspace", "roll-key", "--key", "live_nope", ws}, {"workspace", "roll-key", "--key", "live_secret", "--grace", "200h", ws},
				{"purge", "--test-older-than", "-3d"}, {"audit", "--limit", "0"}, {"partner", "create"}, {"overview"}, {"overview", "rebuild", "now"}, {"search"}, {"search", "rebuild", "now"}, {"connect", "settle", "--amount", "1", "--currency", "XOF", ws},
			} {
				if _, err := srv.cli("", bad...); err == nil {
					t.Errorf("cauri %v succeeded", bad)
				}
			}
		})
	}
}
