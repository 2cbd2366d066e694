package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	wavegw "github.com/cauri-pay/cauri/internal/gateway/wave"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// Wave's documented client references (internal/gateway/wave/testdata):
// a checkout session's and a payout's, replaced by ours in its documented
// answers.
var waveIDs = []string{"FAC-2024-01", "salary-2024-03-0001"}

// TestDocumented_Wave is a merchant's first payments through Wave in
// Senegal, answered only by Wave's documented answers: a checkout session
// whose wave_launch_url the customer is sent to, paid, then Wave's signed
// checkout.session.completed webhook; and a payout to a Wave account, which
// Wave sends no webhook about (testdata/SOURCES.md, "Webhook signature"),
// ended by the service's status check.
func TestDocumented_Wave(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Dakar shop", true)
		creds := map[string]string{"api_key": "wave_sn_prod_documented", "webhook_secret": "wave_sn_WHS_documented"}
		fake := newDocumented(t, "wave", jsonRef("client_reference"), waveIDs...).
			on("POST /v1/checkout/sessions", "checkout_session_open.json").
			on("GET /v1/checkout/sessions/", "checkout_session_open.json")
		g := e.addDocumented(ws, "wave", fake, creds, "SN")

		t.Run("CheckoutSenegal", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 1000, "currency": "XOF"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE", "phone": "77 123 45 67"})
			const launch = "https://pay.wave.com/c/cos-1ya2rewh0139m?a=1000&c=XOF&m=JantTech"
			if next := nextOf(r); r.status != 200 || r.str("status") != "PENDING" || next["type"] != "redirect" || next["url"] != launch ||
				r.str("redirectUrl") != launch {
				t.Fatalf("initiate = %d %s; want the customer sent to the session's wave_launch_url", r.status, r.raw)
			}
			if a, _ := st.Attempts(ctx, id); len(a) != 1 || a[0].ProviderRef != "cos-1ya2rewh0139m" {
				t.Fatalf("attempts = %+v; want Wave's session id recorded", a)
			}
			// The customer paid on Wave's page; Wave signs its webhook with
			// the gateway's secret (Wave-Signature t=…,v1=…: SOURCES.md).
			fake.on("GET /v1/checkout/sessions/", "checkout_session_complete.json")
			body := fake.body("webhook_checkout_completed.json")
			fake.callback(e, g, "webhook_checkout_completed.json",
				http.Header{"Wave-Signature": {wavegw.Sign(creds["webhook_secret"], time.Now().Unix(), body)}})
			settled(t, st, "Wave's checkout.session.completed", id)
			if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
				t.Fatalf("the merchant reads %s; want SUCCESS", got)
			}
		})

		t.Run("Payout", func(t *testing.T) {
			fake.on("POST /v1/payout", "payout_processing.json").on("GET /v1/payout/", "payout_processing.json")
			body := map[string]any{"amount": 15000, "country": "SN", "operator": "wave", "phone": "76 111 00 01", "recipient_name": "Moustapha Mbengue",
				"description": "Salary March 2024"}
			r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "first-payout")...)
			if r.status != 201 || r.str("status") != "processing" {
				t.Fatalf("create = %d %s", r.status, r.raw)
			}
			if tr, err := st.Transfer(ctx, ws.ID, r.str("id")); err != nil || tr.ProviderRef != "pt-185sewgm8100t" {
				t.Fatalf("transfer = %+v, %v; want Wave's payout id recorded", tr, err)
			}
			fake.on("GET /v1/payout/", "payout_succeeded.json")
			e.clock.Add(10 * time.Second)
			if _, err := e.srv.Transfers.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
				t.Fatalf("after the status check = %s", got.raw)
			}
		})
	})
}
