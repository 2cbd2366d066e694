package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway/orangemoney"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestLivePayment_OrangeMoney pays on Orange Money's page end to end
// against its simulator: the initiation answers the page (Orange's
// pay_token recorded first), the customer pays or cancels there and comes
// back, and Orange's notification, which names the payment only through
// the address we gave it, settles the session after a status read.
func TestLivePayment_OrangeMoney(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Dakar boutique", true)
		creds := map[string]string{"client_id": "om-client", "client_secret": "om-secret", "merchant_key": "om-merchant", "country": "sn"}
		sim := &orangemoney.Simulator{ClientID: creds["client_id"], ClientSecret: creds["client_secret"], MerchantKey: creds["merchant_key"], Country: "sn"}
		g, simURL := e.addGateway(ws, "orangemoney", sim, creds, "SN")
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		pay := func(do, want string) {
			t.Helper()
			id := e.mustSession(keys["live_public"], `{"amount": 2500}`)
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "sn", "phone": "77 123 45 67"})
			if r.status != 200 || r.str("status") != "PENDING" || !strings.HasPrefix(r.str("redirectUrl"), simURL+"/pay/") {
				t.Fatalf("initiate = %d %s; want Orange Money's page", r.status, r.raw)
			}
			if a, _ := st.Attempts(ctx, id); len(a) != 1 || a[0].ProviderRef == "" {
				t.Fatalf("attempts = %+v; want the pay_token recorded", a)
			}
			res, err := noFollow.PostForm(r.str("redirectUrl"), url.Values{"do": {do}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), e.url+"/pay/"+id) {
				t.Fatalf("Orange's page after %s = %d %s; want back to the hosted page", do, res.StatusCode, res.Header.Get("Location"))
			}
			waitFor(t, "the notification settled the session", func() bool {
				s, err := st.Session(ctx, id)
				return err == nil && string(s.Status) == want
			})
		}
		pay("pay", "SUCCESS")
		pay("cancel", "FAILED")
		// A notification without our reference changes nothing.
		if r := e.do("POST", "/callbacks/"+g.ID, `{"status":"SUCCESS","notif_token":"x","txnid":"MP1"}`); r.status >= 500 {
			t.Fatalf("a stray notification = %d", r.status)
		}
	})
}
