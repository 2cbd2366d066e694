package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// Flutterwave's documented references (internal/gateway/flutterwave/
// testdata): a charge's tx_ref and a transfer's reference, replaced by
// ours in its documented answers.
var flutterwaveIDs = []string{"cauri-ug-7f3a2c", "cauri-cm-0c44d1", "cauri-tr-9d1e77"}

// flutterwaveRef reads our reference from a charge (tx_ref) or a transfer
// (reference).
func flutterwaveRef(r *http.Request, body []byte) string {
	if ref := jsonRef("tx_ref")(r, body); ref != "" {
		return ref
	}
	return jsonRef("reference")(r, body)
}

// flutterwaveData is the documented answer fixture with fields of its
// data set (the documented envelope, a status word or our payment's
// amount and currency in it, as the connector's conformance suite edits
// them), and the data alone.
func flutterwaveData(t *testing.T, d *documented, fixture string, set map[string]any) (answer, data string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, fixture))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	o, ok := m["data"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no data", fixture)
	}
	for k, v := range set {
		o[k] = v
	}
	a, _ := json.Marshal(m)
	b, _ = json.Marshal(o)
	return string(a), string(b)
}

// flutterwaveEvent is the webhook Flutterwave posts: "an event field
// describing the event, and a data object containing the payload"
// (developer.flutterwave.com, webhooks, "Structure of a webhook payload"),
// data being the charge or the transfer as its reads answer it. No full
// sample of charge.completed or transfer.completed was found in an
// official source (testdata/SOURCES.md, "Conformance suite").
func flutterwaveEvent(event, data string) string {
	return `{"event": "` + event + `", "data": ` + data + `}`
}

// TestDocumented_Flutterwave is a merchant's first payments through
// Flutterwave, answered only by Flutterwave's documented answers: MTN
// Uganda, MTN Rwanda and MTN Zambia, where the charge answers only Flutterwave's
// authorization page (the customer is sent to meta.authorization.redirect);
// MTN Cameroon and Orange Côte d'Ivoire, francophone charges pushed to
// the phone (mode callback);
// each to SUCCESS by Flutterwave's charge.completed webhook and the
// verification by tx_ref that follows it; and a transfer to Airtel Uganda,
// queued (NEW), then SUCCESSFUL by transfer.completed.
func TestDocumented_Flutterwave(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Kampala shop", true)
		const secretHash = "documented-hash"
		verified := http.Header{"Verif-Hash": {secretHash}}
		fake := newDocumented(t, "flutterwave", flutterwaveRef, flutterwaveIDs...).
			on("POST /charges", "charge_redirect.json")
		g := e.addDocumented(ws, "flutterwave", fake, map[string]string{"secret_key": "FLWSECK-documented", "secret_hash": secretHash}, "UG", "RW", "ZM", "CM", "CI")
		const page = "https://flutterwave-authorize.example.org/captcha/verify/lang-en/40021:c0ffee00c0ffee00c0ffee00c0ffee00"

		for _, c := range []struct{ name, currency, phone string }{
			{"MTNUganda", "UGX", "+256771234567"},
			{"MTNRwanda", "RWF", "+250781234567"},
			{"MTNZambia", "ZMW", "+260961234567"},
		} {
			t.Run(c.name, func(t *testing.T) {
				// Until the customer authorizes on the page, the charge is
				// pending (verify_successful.json with the status the
				// samples show before it).
				pending, _ := flutterwaveData(t, fake, "verify_successful.json", map[string]any{"status": "pending", "currency": c.currency})
				successful, data := flutterwaveData(t, fake, "verify_successful.json", map[string]any{"currency": c.currency})
				fake.on("POST /charges", "charge_redirect.json").on("GET /transactions/verify_by_reference", pending)
				id := e.mustSession(keys["live_public"], map[string]any{"amount": 1500, "currency": c.currency})
				r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MTN", "phone": c.phone})
				next, _ := r.body["nextAction"].(map[string]any)
				if r.status != 200 || r.str("status") != "PENDING" || next["type"] != "redirect" || next["url"] != page {
					t.Fatalf("initiate = %d %s; want the customer sent to Flutterwave's page", r.status, r.raw)
				}
				fake.on("GET /transactions/verify_by_reference", successful)
				fake.callback(e, g, flutterwaveEvent("charge.completed", data), verified)
				settled(t, st, "the callback", id)
				if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
					t.Fatalf("after Flutterwave's webhook = %s", got)
				}
			})
		}

		// Francophone charges (mobile_money_franco, with the country) answer
		// the pending charge in data, mode callback: a push on the phone.
		for _, c := range []struct{ name, currency, code, phone string }{
			{"MTNCameroon", "XAF", "MTN", "+237650123456"},
			{"OrangeIvoryCoast", "XOF", "ORANGEMONEY", "+2250701234567"},
		} {
			t.Run(c.name, func(t *testing.T) {
				// The verification is about our charge: 500 in its currency.
				pending, _ := flutterwaveData(t, fake, "verify_successful.json", map[string]any{"status": "pending", "currency": c.currency, "amount": 500})
				successful, data := flutterwaveData(t, fake, "verify_successful.json", map[string]any{"currency": c.currency, "amount": 500})
				fake.on("POST /charges", "charge_initiated_franco.json").on("GET /transactions/verify_by_reference", pending)
				id := e.mustSession(keys["live_public"], map[string]any{"amount": 500, "currency": c.currency})
				r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": c.code, "phone": c.phone})
				next, _ := r.body["nextAction"].(map[string]any)
				if r.status != 200 || r.str("status") != "PENDING" || next["type"] != "approve" {
					t.Fatalf("initiate = %d %s; want the customer to approve on the phone", r.status, r.raw)
				}
				fake.on("GET /transactions/verify_by_reference", successful)
				fake.callback(e, g, flutterwaveEvent("charge.completed", data), verified)
				settled(t, st, "the callback", id)
				if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
					t.Fatalf("after Flutterwave's webhook = %s", got)
				}
			})
		}

		t.Run("TransferUganda", func(t *testing.T) {
			queued, _ := flutterwaveData(t, fake, "transfer_fetched_successful.json", map[string]any{"status": "NEW"})
			fake.on("POST /transfers", "transfer_queued.json").on("GET /transfers/", queued)
			body := map[string]any{"amount": 350, "country": "UG", "operator": "airtel_money", "phone": "+256701234567",
				"recipient_name": "Okello Brian", "description": "Cauri payout"}
			r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "first-transfer")...)
			if r.status != 201 || r.str("status") != "processing" {
				t.Fatalf("create = %d %s", r.status, r.raw)
			}
			// Flutterwave's read of the transfer by its id (GET
			// /v3/transfers/610233, the id of the queued answer) now says
			// SUCCESSFUL; the webhook carries the same transfer.
			_, data := flutterwaveData(t, fake, "transfer_fetched_successful.json", nil)
			fake.on("GET /transfers/", "transfer_fetched_successful.json")
			fake.callback(e, g, flutterwaveEvent("transfer.completed", data), verified)
			if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
				t.Fatalf("after Flutterwave's webhook = %s", got.raw)
			}
		})
	})
}
