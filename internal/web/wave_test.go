package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	wavesim "github.com/cauri-pay/cauri/internal/gateway/wave"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestLivePayment_Wave pays through Wave end to end against its
// simulator: the initiation answers Wave's launch page (Wave's id recorded
// first), the customer pays there and comes back to the hosted page, the
// signed webhook settles the session; a customer who cancels fails it; a
// payout to a Wave account is sent once under its idempotency key and
// settles through the status check.
func TestLivePayment_Wave(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Dakar shop", true)
		creds := map[string]string{"api_key": "wave_sn_prod_sim", "webhook_secret": "wave_sn_WHS_sim"}
		sim := &wavesim.Simulator{APIKey: creds["api_key"], WebhookSecret: creds["webhook_secret"]}
		g, simURL := e.addGateway(ws, "wave", sim, creds, "SN")
		sim.CallbackURL = e.url + "/callbacks/" + g.ID
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		pay := func(amount int, do string) (string, *http.Response) {
			t.Helper()
			id := e.mustSession(keys["live_public"], map[string]any{"amount": amount})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE", "phone": "77 123 45 67"})
			if r.status != 200 || r.str("status") != "PENDING" || !strings.HasPrefix(r.str("redirectUrl"), simURL+"/c/") {
				t.Fatalf("initiate = %d %s; want Wave's launch page", r.status, r.raw)
			}
			if a, _ := st.Attempts(ctx, id); len(a) != 1 || !strings.HasPrefix(a[0].ProviderRef, "cos-") {
				t.Fatalf("attempts = %+v; want Wave's session id recorded", a)
			}
			res, err := noFollow.PostForm(r.str("redirectUrl"), url.Values{"do": {do}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return id, res
		}
		methods := e.do("GET", "/v1/checkout/sessions/"+e.mustSession(keys["live_public"], `{"amount": 100}`)+"/methods?country=sn", nil, bearer(keys["live_public"])...)
		if !strings.Contains(methods.raw, `"code":"WAVE"`) || !strings.Contains(methods.raw, g.ID) {
			t.Fatalf("methods = %s; want Wave through the Wave gateway", methods.raw)
		}
		id, res := pay(2000, "pay")
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != e.url+"/pay/"+id {
			t.Fatalf("Wave's page after paying = %d %s; want back to the hosted page", res.StatusCode, res.Header.Get("Location"))
		}
		s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
		if s.str("status") != "SUCCESS" || s.str("provider") != "wave" {
			t.Fatalf("session after Wave's webhook = %s", s.raw)
		}
		id, _ = pay(3000, "decline")
		if s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...); s.str("status") != "FAILED" {
			t.Fatalf("a cancelled Wave payment = %s", s.raw)
		}
		// A forged webhook (wrong signature) changes nothing.
		forged := e.do("POST", "/callbacks/"+g.ID, `{"type":"checkout.session.completed","data":{"client_reference":"x"}}`,
			"Wave-Signature", "t=1,v1="+strings.Repeat("0", 64))
		if forged.status >= 500 {
			t.Fatalf("a forged webhook = %d", forged.status)
		}

		// A payout, sent once under its idempotency key.
		transfer := map[string]any{"amount": 5000, "country": "SN", "operator": "wave", "phone": "77 123 45 67", "recipient_name": "Awa Diop"}
		tr := e.do("POST", "/v1/transfers", transfer, append(bearer(keys["live_secret"]), "Idempotency-Key", "wave-payout-1")...)
		if tr.status != 201 || tr.str("status") != "processing" || tr.str("provider") != "wave" || sim.Payouts() != 1 {
			t.Fatalf("transfer = %d %s, %d payouts", tr.status, tr.raw, sim.Payouts())
		}
		again := e.do("POST", "/v1/transfers", transfer, append(bearer(keys["live_secret"]), "Idempotency-Key", "wave-payout-1")...)
		if again.status != 200 || again.str("id") != tr.str("id") || sim.Payouts() != 1 {
			t.Fatalf("replay = %d %s, %d payouts", again.status, again.raw, sim.Payouts())
		}
		saved, err := st.Transfer(ctx, ws.ID, tr.str("id"))
		if err != nil {
			t.Fatal(err)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+saved.Reference)
		e.clock.Add(10 * time.Second)
		if _, err := e.srv.Transfers.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got := e.do("GET", "/v1/transfers/"+tr.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != string(cauri.TransferSucceeded) {
			t.Fatalf("transfer after Wave settled it = %s", got.raw)
		}
	})
}
