package web

import (
	"context"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestLivePayment_MTNMoMo pays and pays out through MTN MoMo end to end
// against its simulator: a push to the customer's phone under our
// reference (its X-Reference-Id), settled by MTN's unsigned PUT callback
// that the service confirms with a status read; a failed payment; a
// payout sent once under its reference; a payout the merchant's wallet
// cannot fund refused with 402.
func TestLivePayment_MTNMoMo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Abidjan shop", true)
		creds := map[string]string{"api_user": "0b0c2f36-0d6b-4a8b-9d36-2f7f3c1f2a10", "api_key": "momo-api-key", "collection_key": "col-sub-key",
			"disbursement_key": "dis-sub-key"}
		sim := &mtnmomo.Simulator{APIUser: creds["api_user"], APIKey: creds["api_key"], CollectionKey: creds["collection_key"], DisbursementKey: creds["disbursement_key"]}
		g, simURL := e.addGateway(ws, "mtnmomo", sim, creds, "CI")
		pay := func(phone, want string) {
			t.Helper()
			id := e.mustSession(keys["live_public"], `{"amount": 1500}`)
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "mtnivorycoast", "phone": phone})
			if r.status != 200 || r.str("status") != "PENDING" || r.str("redirectUrl") != "" {
				t.Fatalf("initiate = %d %s; want a push to the phone", r.status, r.raw)
			}
			a, _ := st.Attempts(ctx, id)
			if len(a) != 1 || a[0].Phone != "+225"+strings.ReplaceAll(phone, " ", "") {
				t.Fatalf("attempts = %+v", a)
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+a[0].Reference) // MTN PUTs its callback; the service reads the status
			// Read from the store, not the status route (which asks MTN
			// itself): only the callback can have settled it.
			waitFor(t, "the callback settled the session", func() bool {
				s, err := st.Session(ctx, id)
				return err == nil && string(s.Status) == want
			})
		}
		pay("05 05 12 34 56", "SUCCESS")
		pay("05 05 12 00 29", "FAILED")

		transfer := map[string]any{"amount": 2500, "country": "CI", "operator": "mtn_momo", "phone": "0505123456", "recipient_name": "Kofi"}
		tr := e.do("POST", "/v1/transfers", transfer, append(bearer(keys["live_secret"]), "Idempotency-Key", "momo-1")...)
		if tr.status != 201 || tr.str("status") != "processing" || tr.str("provider") != "mtnmomo" || sim.Payouts() != 1 {
			t.Fatalf("transfer = %d %s, %d payouts", tr.status, tr.raw, sim.Payouts())
		}
		if again := e.do("POST", "/v1/transfers", transfer, append(bearer(keys["live_secret"]), "Idempotency-Key", "momo-1")...); again.str("id") != tr.str("id") || sim.Payouts() != 1 {
			t.Fatalf("replay = %s, %d payouts", again.raw, sim.Payouts())
		}
		saved, _ := st.Transfer(ctx, ws.ID, tr.str("id"))
		gatewaytest.Control(t, simURL, "/_sim/settle/"+saved.Reference)
		waitFor(t, "the transfer settled", func() bool {
			return e.do("GET", "/v1/transfers/"+tr.str("id"), nil, bearer(keys["live_secret"])...).str("status") == "succeeded"
		})
		transfer["phone"] = "0505120049"
		wantCode(t, e.do("POST", "/v1/transfers", transfer, append(bearer(keys["live_secret"]), "Idempotency-Key", "momo-2")...), 402, "solde_insuffisant")
	})
}
