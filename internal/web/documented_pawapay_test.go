package web

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// pawaPay's documented ids (internal/gateway/pawapay/testdata): replaced
// by our reference in its documented answers.
var pawapayIDs = []string{"0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41", "5a8c2e17-6f40-4b9d-8e21-3c7f9a0d4b65",
	"7d1e4b90-2c6a-4f3e-9b8d-1a5c7e9f0b23", "afb57b93-7849-49aa-babb-4c3ccbfe3d79", "f4401bd2-1568-4140-bf2d-eb77d2b2b639"}

// pawapayRef reads our reference from a deposit or a payout request.
func pawapayRef(r *http.Request, body []byte) string {
	if id := jsonRef("depositId")(r, body); id != "" {
		return id
	}
	return jsonRef("payoutId")(r, body)
}

// TestDocumented_PawaPay is a merchant's first payments through pawaPay,
// answered only by pawaPay's documented answers: Orange Burkina Faso with
// the customer's pre-authorisation code, Wave Senegal on Wave's page, and
// a payout, each to its final state by pawaPay's documented callback.
func TestDocumented_PawaPay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Ouaga shop", true)
		fake := newDocumented(t, "pawapay", pawapayRef, pawapayIDs...).
			on("GET /v2/active-conf", "active_conf.json").
			on("POST /v2/deposits", "deposit_accepted.json").
			on("GET /v2/deposits/", "deposit_status_processing.json")
		g := e.addDocumented(ws, "pawapay", fake, map[string]string{"api_token": "tok"}, "BF", "SN")

		t.Run("OrangeBurkinaFaso", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 2500, "currency": "XOF"})
			if r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "ORANGE_BFA",
				"phone": "+22675123456"}); r.status != 400 {
				t.Fatalf("without the code = %d %s; want 400 asking for it", r.status, r.raw)
			}
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "ORANGE_BFA",
				"phone": "+22675123456", "authCode": "482913"})
			if r.status != 200 || r.str("status") != "PENDING" {
				t.Fatalf("initiate = %d %s", r.status, r.raw)
			}
			fake.on("GET /v2/deposits/", "deposit_status_completed.json")
			fake.callback(e, g, "deposit_callback_completed.json", nil)
			settled(t, st, "pawaPay's callback", id)
			if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
				t.Fatalf("after pawaPay's callback = %s", got)
			}
		})

		t.Run("WaveSenegal", func(t *testing.T) {
			fake.on("POST /v2/deposits", "deposit_accepted_get_auth_url.json").on("GET /v2/deposits/", "deposit_status_redirect.json")
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 2500, "currency": "XOF"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN",
				"phone": "+221771234567"})
			next, _ := r.body["nextAction"].(map[string]any)
			if r.status != 200 || next["type"] != "redirect" || next["url"] != "https://wave.example/c/7d1e4b90" {
				t.Fatalf("initiate = %d %s; want the customer sent to Wave's page", r.status, r.raw)
			}
			fake.on("GET /v2/deposits/", "deposit_status_completed.json")
			fake.callback(e, g, "deposit_callback_completed.json", nil)
			settled(t, st, "pawaPay's callback", id)
			if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
				t.Fatalf("after pawaPay's callback = %s", got)
			}
		})

		t.Run("Payout", func(t *testing.T) {
			fake.on("POST /v2/payouts", "payout_accepted.json").on("GET /v2/payouts/", "payout_status_enqueued.json")
			body := map[string]any{"amount": 1500, "country": "BF", "operator": "orange_money", "phone": "+22675123456", "recipient_name": "Awa"}
			r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "first-payout")...)
			if r.status != 201 || r.str("status") != "processing" {
				t.Fatalf("create = %d %s", r.status, r.raw)
			}
			// pawaPay's status read wraps the payout it calls back with
			// (v2 api-reference, "Check payout status": FOUND and data).
			completed, err := os.ReadFile(filepath.Join(fake.dir, "payout_callback_completed.json"))
			if err != nil {
				t.Fatal(err)
			}
			fake.on("GET /v2/payouts/", `{"status": "FOUND", "data": `+string(completed)+`}`)
			fake.callback(e, g, "payout_callback_completed.json", nil)
			if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
				t.Fatalf("after pawaPay's callback = %s", got.raw)
			}
		})
	})
}
