package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/fedapay"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// FedaPay's documented references (internal/gateway/fedapay/testdata):
// FedaPay keeps its own ids (transaction 104, payout 17) and our
// reference only in custom_metadata, where ours replaces these.
var fedapayIDs = []string{"11111111-2222-4333-8444-555555555555", "a1111111-2222-4333-8444-555555555555"}

// fedapayRef reads our reference from a transaction's or a payout's
// custom_metadata.
func fedapayRef(_ *http.Request, body []byte) string {
	var m struct {
		CustomMetadata map[string]string `json:"custom_metadata"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	return m.CustomMetadata["cauri_reference"]
}

// fedapayEvent is the webhook FedaPay posts about the object of a
// documented answer (fixture, the object under class): an event named as
// docs.fedapay.com's webhooks page names them, whose entity is the object
// (fedapay-node src/Event.ts `entity`), as the connector's conformance
// suite builds it.
func fedapayEvent(t *testing.T, d *documented, name, fixture, class string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, fixture))
	if err != nil {
		t.Fatal(err)
	}
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(b, &answer); err != nil || answer[class] == nil {
		t.Fatalf("%s has no %s: %v", fixture, class, err)
	}
	ev, _ := json.Marshal(map[string]any{"name": name, "entity": answer[class]})
	return string(d.body(string(ev)))
}

// called reports whether the documented fake was called so.
func called(d *documented, call string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.calls {
		if c == call {
			return true
		}
	}
	return false
}

// fedapaySigned is the X-FEDAPAY-SIGNATURE FedaPay puts on body (FedaPay's
// SDKs, WebhookSignature: t=<unix>,s=<hex HMAC-SHA256 of "<t>.<body>">),
// now: the connector checks the signature's age against the real clock.
func fedapaySigned(secret, body string) http.Header {
	return http.Header{"X-Fedapay-Signature": {fedapay.Sign(secret, time.Now(), []byte(body))}}
}

// TestDocumented_FedaPay is a merchant's first payments through FedaPay,
// answered only by FedaPay's documented answers: MTN and Moov Benin pushed
// to the customer's phone (the transaction, its token, the push to
// /v1/{mode}), each to SUCCESS by FedaPay's signed transaction.approved
// webhook; and a payout created, then started (the step that moves the
// money), to sent by the service's status check, as FedaPay documents no
// payout webhook.
func TestDocumented_FedaPay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Cotonou shop", true)
		const secret = "wh_live_documented"
		fake := newDocumented(t, "fedapay", fedapayRef, fedapayIDs...).
			on("POST /transactions", "transaction_created.json").
			on("POST /transactions/104/token", "token.json").
			on("POST /mtn_open", "send_answer.json").
			on("POST /moov", "send_answer.json").
			on("GET /transactions/", "transaction_created.json")
		g := e.addDocumented(ws, "fedapay", fake, map[string]string{"secret_key": "sk_live_documented", "webhook_secret": secret}, "BJ")

		for _, c := range []struct{ name, mode, phone string }{
			{"MTNBenin", "mtn_open", "+2290197808080"},
			{"MoovBenin", "moov", "+2290195123456"},
		} {
			t.Run(c.name, func(t *testing.T) {
				fake.on("GET /transactions/", "transaction_created.json")
				id := e.mustSession(keys["live_public"], map[string]any{"amount": 2000, "currency": "XOF"})
				r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": c.mode, "phone": c.phone})
				if r.status != 200 || r.str("status") != "PENDING" {
					t.Fatalf("initiate = %d %s", r.status, r.raw)
				}
				if !called(fake, "POST /"+c.mode) {
					t.Fatalf("no push to /v1/%s among %v", c.mode, fake.calls)
				}
				fake.on("GET /transactions/", "transaction_approved.json")
				approved := fedapayEvent(t, fake, "transaction.approved", "transaction_approved.json", "v1/transaction")
				fake.callback(e, g, approved, fedapaySigned(secret, approved))
				settled(t, st, "the callback", id)
				if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
					t.Fatalf("after FedaPay's webhook = %s", got)
				}
			})
		}

		t.Run("Payout", func(t *testing.T) {
			fake.on("POST /payouts", "payout_created.json").
				on("PUT /payouts/start", "payout_started.json").
				on("GET /payouts/", "payout_started.json")
			body := map[string]any{"amount": 2000, "country": "BJ", "operator": "mtn_momo", "phone": "+2290197808080", "recipient_name": "Koffi Adjovi"}
			r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "first-payout")...)
			if r.status != 201 || r.str("status") != "processing" {
				t.Fatalf("create = %d %s", r.status, r.raw)
			}
			if !called(fake, "PUT /payouts/start") {
				t.Fatalf("the payout was never started: %v", fake.calls)
			}
			// FedaPay names no payout webhook (SOURCES.md, "Payouts"): the
			// service's status check reads the payout (GET /v1/payouts/17,
			// the SDKs' "retrieve a payout"), now sent.
			fake.on("GET /payouts/", "payout_sent.json")
			e.clock.Add(movement.StatusCheck + time.Second)
			if _, err := e.srv.Transfers.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
				t.Fatalf("after the status check = %s", got.raw)
			}
		})
	})
}
