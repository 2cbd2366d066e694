package web

import (
	"context"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestLivePayment_MPesa pays through M-Pesa's STK push end to end against
// its simulator: Safaricom's CheckoutRequestID is recorded on the attempt
// before the prompt can be paid, and Safaricom's callback, which names the
// payment by that id only, settles it (confirmed by an STK query); a
// customer who cancels the prompt fails it.
func TestLivePayment_MPesa(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Nairobi shop", true)
		creds := map[string]string{"consumer_key": "ck-sim", "consumer_secret": "cs-sim", "shortcode": "174379", "passkey": "pk-sim"}
		sim := &mpesa.Simulator{ConsumerKey: creds["consumer_key"], ConsumerSecret: creds["consumer_secret"], ShortCode: creds["shortcode"], PassKey: creds["passkey"]}
		g, simURL := e.addGateway(ws, "mpesa", sim, creds, "KE")
		pay := func(phone, want string) {
			t.Helper()
			id := e.mustSession(keys["live_public"], `{"amount": 150, "currency": "KES"}`)
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MPESA", "phone": phone})
			if r.status != 200 || r.str("status") != "PENDING" || r.str("redirectUrl") != "" {
				t.Fatalf("initiate = %d %s; want an STK push", r.status, r.raw)
			}
			a, _ := st.Attempts(ctx, id)
			if len(a) != 1 || a[0].ProviderRef == "" {
				t.Fatalf("attempts = %+v; want the CheckoutRequestID recorded", a)
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+a[0].ProviderRef) // the callback names the CheckoutRequestID only
			waitFor(t, "the callback settled the session", func() bool {
				s, err := st.Session(ctx, id)
				return err == nil && string(s.Status) == want
			})
		}
		pay("0712 345 678", "SUCCESS")
		pay("0712 340 029", "FAILED")
	})
}
