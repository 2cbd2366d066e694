package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// mpesaPushID is the CheckoutRequestID of Daraja's documented
// acknowledgement of a push (stkpush_accepted.json), which its documented
// callback (callback_success.json) names too: the id the service records
// and is called back with.
const mpesaPushID = "ws_CO_191220191020363925"

// mpesaQueryIDs are the CheckoutRequestIDs of Daraja's documented query
// answers and of its documented cancelled callback (pushes of other
// examples), replaced by the one the service asks about.
var mpesaQueryIDs = []string{"ws_CO_13012021093521236557", "ws_CO_27072017151044001"}

// TestDocumented_MPesa is a merchant's first payments through M-Pesa in
// Kenya, answered only by Daraja's documented answers: the STK push
// acknowledged (ResponseCode "0"), "being processed" while the customer
// has not answered the prompt, then Safaricom's callback, which names the
// payment only by its CheckoutRequestID, confirmed by the STK query:
// ResultCode 0 paid, 1032 cancelled by the customer. M-Pesa collects only:
// Daraja's payouts (B2C) are not connected.
func TestDocumented_MPesa(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Nairobi shop", true)
		// push starts a payment of 1 KES (the portal's example amount) on
		// a gateway of its own (Daraja's documented acknowledgement always
		// names the same push) and answers it once Daraja says the
		// customer has not answered yet.
		push := func(t *testing.T) (*documented, *cauri.Gateway, string) {
			t.Helper()
			// Daraja is asked by its CheckoutRequestID only (nothing of
			// ours goes in a push): the query names the push its answer
			// is about.
			fake := newDocumented(t, "mpesa", jsonRef("CheckoutRequestID"), mpesaQueryIDs...).
				on("GET /oauth/v1/generate", "token.json").
				on("POST /mpesa/stkpush/v1/processrequest", "stkpush_accepted.json").
				// "The transaction is being processed": a 500 by
				// integrations' accounts (testdata/SOURCES.md, Unconfirmed).
				on("POST /mpesa/stkpushquery/v1/query", "stkpushquery_processing.json", http.StatusInternalServerError)
			// The sandbox's shortcode and published passkey (SOURCES.md:
			// the portal's example Password decodes to them).
			g := e.addDocumented(ws, "mpesa", fake, map[string]string{"consumer_key": "daraja-key", "consumer_secret": "daraja-secret",
				"shortcode": "174379", "passkey": "bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919"}, "KE")
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 1, "currency": "KES"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MPESA",
				"phone": "+254708374149"})
			if r.status != 200 || r.str("status") != "PENDING" || r.str("redirectUrl") != "" {
				t.Fatalf("initiate = %d %s; want an STK push", r.status, r.raw)
			}
			if a, _ := st.Attempts(ctx, id); len(a) != 1 || a[0].ProviderRef != mpesaPushID {
				t.Fatalf("attempts = %+v; want Safaricom's CheckoutRequestID %s recorded", a, mpesaPushID)
			}
			e.clock.Add(movement.StatusCheck + time.Second)
			if got := e.sessionStatus(keys["live_secret"], id); got != "PENDING" {
				t.Fatalf("while Daraja says the transaction is being processed = %s", got)
			}
			return fake, g, id
		}

		for _, c := range []struct{ name, query, callback, want string }{
			{"Paid", "stkpushquery_success.json", "callback_success.json", "SUCCESS"},
			{"Cancelled", "stkpushquery_cancelled.json", "callback_cancelled.json", "FAILED"},
		} {
			t.Run(c.name, func(t *testing.T) {
				fake, g, id := push(t)
				fake.on("POST /mpesa/stkpushquery/v1/query", c.query)
				fake.callback(e, g, c.callback, nil)
				// Read from the store, not the status route (which queries
				// Daraja itself): only the callback can have settled it.
				if s, err := st.Session(ctx, id); err != nil || string(s.Status) != c.want {
					t.Fatalf("after Safaricom's callback = %+v, %v; want %s", s, err, c.want)
				}
			})
		}
	})
}
