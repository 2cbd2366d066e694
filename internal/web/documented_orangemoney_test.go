package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// omOrderIDs is the order_id of OM WebPay's documented answers
// (internal/gateway/orangemoney/testdata), replaced by ours.
var omOrderIDs = []string{"0f8fad5bd9cb469fa1657086772895"}

// omPayPage is the documented payment_url of webpayment_created.json:
// Orange's page, where the customer pays.
const omPayPage = "https://webpayment-ow-sb.orange-money.com/payment/pay_token/v1h0r5yi7hpjd8rqkdt2guvmdcvoyhzpalvaaqvt3aqs1s3nzqtpkjnvzvlsodok"

// omRequests reads our reference where OM keeps it, the order_id of a web
// payment or a status read, and remembers the notif_url the service gave
// OM, where OM notifies.
type omRequests struct {
	mu       sync.Mutex
	notifURL string
}

func (o *omRequests) refOf(_ *http.Request, body []byte) string {
	var m struct {
		OrderID  string `json:"order_id"`
		NotifURL string `json:"notif_url"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	if m.NotifURL != "" {
		o.mu.Lock()
		o.notifURL = m.NotifURL
		o.mu.Unlock()
	}
	return m.OrderID
}

func (o *omRequests) notif() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.notifURL
}

// omCountries are the countries Orange Money is connected in
// (gateway/providers.json), each with the country of OM WebPay's path, its
// currency and an Orange number there.
var omCountries = []struct{ country, path, currency, phone string }{
	{"CI", "ci", "XOF", "+2250707123456"},
	{"SN", "sn", "XOF", "+221771234567"},
	{"ML", "ml", "XOF", "+22376123456"},
	{"BF", "bf", "XOF", "+22675123456"},
	{"CM", "cm", "XAF", "+237691234567"},
	{"GN", "gn", "GNF", "+224621234567"},
}

// TestDocumented_OrangeMoney is a merchant's first payments through Orange
// Money Web Payment in each country it is connected in, answered only by
// OM WebPay's documented answers: the web payment created (201), the
// customer sent to the documented payment_url, INITIATED, then SUCCESS by
// OM's notification to the notif_url it was given, which the service
// confirms by the status read; in Côte d'Ivoire also one settled by the
// status read alone (PENDING, then SUCCESS). Orange Money collects only
// here: OM WebPay makes no payouts.
func TestDocumented_OrangeMoney(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Orange shop", true)
		for _, c := range omCountries {
			t.Run(c.country, func(t *testing.T) {
				om := &omRequests{}
				webpayment := "POST /orange-money-webpay/" + c.path + "/v1/webpayment"
				status := "POST /orange-money-webpay/" + c.path + "/v1/transactionstatus"
				fake := newDocumented(t, "orangemoney", om.refOf, omOrderIDs...).
					on("POST /oauth/v3/token", "token.json").
					on(webpayment, "webpayment_created.json", http.StatusCreated)
				g := e.addDocumented(ws, "orangemoney", fake, map[string]string{"client_id": "om-client", "client_secret": "om-secret",
					"merchant_key": "a4b7c123", "merchant_name": "Boutique Awa", "country": c.path}, c.country)
				// pay sends the customer to Orange's page, while OM's
				// status read answers waiting.
				pay := func(t *testing.T, waiting string) string {
					t.Helper()
					fake.on(status, waiting)
					id := e.mustSession(keys["live_public"], map[string]any{"amount": 1200, "currency": c.currency})
					r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": c.path,
						"phone": c.phone})
					next, _ := r.body["nextAction"].(map[string]any)
					if r.status != 200 || r.str("status") != "PENDING" || r.str("redirectUrl") != omPayPage || next["url"] != omPayPage {
						t.Fatalf("initiate = %d %s; want the customer sent to Orange's page %s", r.status, r.raw, omPayPage)
					}
					e.clock.Add(movement.StatusCheck + time.Second)
					if got := e.sessionStatus(keys["live_secret"], id); got != "PENDING" {
						t.Fatalf("while OM answers %s = %s", waiting, got)
					}
					return id
				}

				t.Run("Notification", func(t *testing.T) {
					id := pay(t, "transactionstatus_initiated.json")
					// OM names no payment in its notification: the notif_url
					// carries our reference.
					u, err := url.Parse(om.notif())
					a, _ := st.Attempts(ctx, id)
					if err != nil || len(a) != 1 || u.Query().Get("ref") != a[0].Reference || u.Scheme+"://"+u.Host+u.Path != e.url+"/callbacks/"+g.ID {
						t.Fatalf("notif_url = %q; want the gateway's callback address with our reference", om.notif())
					}
					fake.on(status, "transactionstatus_success.json")
					fake.callAt(http.MethodPost, om.notif(), "notification_success.json")
					// Read from the store, not the status route (which asks
					// OM itself): only the notification can have settled it.
					if s, err := st.Session(ctx, id); err != nil || s.Status != "SUCCESS" {
						t.Fatalf("after OM's notification = %+v, %v; want SUCCESS", s, err)
					}
				})

				if c.country == "CI" {
					t.Run("StatusRead", func(t *testing.T) {
						id := pay(t, "transactionstatus_pending.json")
						fake.on(status, "transactionstatus_success.json")
						e.clock.Add(movement.StatusCheck + time.Second)
						if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
							t.Fatalf("after OM's status read = %s", got)
						}
					})
				}
			})
		}
	})
}
