package web

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/gateway/fedapay"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

var cinetpayCreds = map[string]string{"apikey": "api-sim", "site_id": "445160", "secret_key": "secret-sim"}

// TestLivePayment_CinetPay pays on CinetPay's own page: the initiation
// answers the page's address, the customer comes back with a POST, the
// signed form notification settles the session.
func TestLivePayment_CinetPay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Abidjan shop", true)
		g, simURL := e.addGateway(ws, "cinetpay", &cinetpay.Simulator{APIKey: "api-sim", SiteID: "445160", SecretKey: "secret-sim"}, cinetpayCreds, "CI")
		id := e.mustSession(keys["live_public"], `{"amount": 1500}`)
		methods := e.do("GET", "/v1/checkout/sessions/"+id+"/methods?country=ci", nil, bearer(keys["live_public"])...)
		for _, want := range []string{`"code":"OM"`, `"code":"CARD_UEMOA"`} {
			if !strings.Contains(methods.raw, want) {
				t.Fatalf("methods = %s; want %s", methods.raw, want)
			}
		}
		r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "OM", "phone": "07 07 12 34 56"})
		if r.status != 200 || r.str("status") != "PENDING" || !strings.HasPrefix(r.str("redirectUrl"), simURL+"/_sim/pay/") {
			t.Fatalf("initiate = %d %s; want CinetPay's page", r.status, r.raw)
		}
		attempts, _ := st.Attempts(context.Background(), id)
		if len(attempts) != 1 || attempts[0].RedirectURL != r.str("redirectUrl") || attempts[0].Phone != "+2250707123456" {
			t.Fatalf("attempts = %+v", attempts)
		}
		// Back on the hosted page before paying: a link to go on.
		page := e.do("GET", "/pay/"+id, nil)
		if !strings.Contains(page.raw, `id="continue" href="`+r.str("redirectUrl")+`"`) {
			t.Fatalf("the waiting page has no link to CinetPay's page:\n%s", page.raw)
		}
		// CinetPay checks the notification address with a GET first.
		wantStatus(t, e.do("GET", "/callbacks/"+g.ID, nil), 200)
		wantStatus(t, e.do("GET", "/callbacks/gw_nope", nil), 404)
		// The customer pays; the signed notification arrives at notify_url.
		res, err := http.PostForm(r.str("redirectUrl"), url.Values{"do": {"pay"}})
		if err != nil {
			t.Fatal(err)
		}
		back, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(back), `action="`+e.url+"/pay/"+id+`"`) {
			t.Fatalf("CinetPay's page does not send the customer back to the hosted page: %s", back)
		}
		s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
		if s.str("status") != "SUCCESS" || s.str("provider") != "cinetpay" {
			t.Fatalf("session after the notification = %s", s.raw)
		}
		// The customer's return (a POST with CinetPay's fields) shows the page.
		ret := e.do("POST", "/pay/"+id, "transaction_id="+attempts[0].Reference+"&token=sim00000001", "Content-Type", "application/x-www-form-urlencoded")
		if ret.status != http.StatusOK || !strings.Contains(ret.raw, `data-status="SUCCESS"`) {
			t.Fatalf("return from CinetPay = %d %s", ret.status, ret.raw)
		}
		// A forged notification changes nothing and is still answered 200.
		forged := e.do("POST", "/callbacks/"+g.ID, "cpm_site_id=445160&cpm_trans_id="+attempts[0].Reference, "Content-Type", "application/x-www-form-urlencoded",
			"X-Token", strings.Repeat("0", 64))
		wantStatus(t, forged, 200)

		// A card: CinetPay offers one only with the card holder's details
		// (the documented card fields): each is asked for, then CinetPay's
		// page again.
		card := e.mustSession(keys["live_public"], `{"amount": 5000, "customer_email": "awa@example.com"}`)
		holder := map[string]string{"name": "Awa Kone", "address": "Rue des Jardins 12", "city": "Abidjan", "state": "Lagunes", "zipCode": "00225"}
		pay := func(h map[string]string, phone string) response {
			return e.do("POST", "/checkout/initiate", map[string]any{"transactionId": card, "gatewayId": g.ID, "code": "CARD_UEMOA",
				"phone": phone, "holder": h})
		}
		for field, want := range map[string]string{"name": "first and last name", "address": "address", "city": "city",
			"state": "state or region", "zipCode": "postal code"} {
			without := maps.Clone(holder)
			delete(without, field)
			wantError(t, pay(without, "+2250707123456"), 400, want)
		}
		wantError(t, pay(holder, "0707123456"), 400, "international format")
		r = pay(holder, "+225 07 07 12 34 56")
		if r.status != 200 || r.str("redirectUrl") == "" {
			t.Fatalf("card initiate = %d %s", r.status, r.raw)
		}
		if a, _ := st.Attempts(context.Background(), card); a[0].Operator != "card_uemoa" || a[0].Phone != "+2250707123456" || a[0].Country != "" {
			t.Fatalf("card attempt = %+v", a[0])
		}
		wantError(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": card, "gatewayId": g.ID, "code": "OM"}), 400, "phone")
	})
}

// TestLivePayment_FedaPay pays through FedaPay without a redirect: FedaPay's
// id is recorded on the attempt before the push, the signed webhook settles.
func TestLivePayment_FedaPay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Cotonou shop", true)
		sim := &fedapay.Simulator{SecretKey: "sk_live_sim", WebhookSecret: "wh_live_sim"}
		g, simURL := e.addGateway(ws, "fedapay", sim, map[string]string{"secret_key": "sk_live_sim", "webhook_secret": "wh_live_sim"}, "BJ")
		sim.WebhookURL = e.url + "/callbacks/" + g.ID
		id := e.mustSession(keys["live_public"], `{"amount": 2500}`)
		r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "mtn_open", "phone": "97 12 34 56"})
		if r.status != 200 || r.str("status") != "PENDING" || r.str("redirectUrl") != "" {
			t.Fatalf("initiate = %d %s; want a push, no redirect", r.status, r.raw)
		}
		attempts, _ := st.Attempts(context.Background(), id)
		if len(attempts) != 1 || attempts[0].ProviderRef == "" {
			t.Fatalf("attempts = %+v; want FedaPay's id recorded", attempts)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].ProviderRef) // the signed webhook arrives at once
		s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
		if s.str("status") != "SUCCESS" || s.str("provider") != "fedapay" {
			t.Fatalf("session = %s", s.raw)
		}
		if a, _ := st.Attempts(context.Background(), id); a[0].ProviderRef != attempts[0].ProviderRef {
			t.Fatalf("provider ref after settling = %q; want FedaPay's id %q kept", a[0].ProviderRef, attempts[0].ProviderRef)
		}
		// A lost webhook: the reconciler asks FedaPay by its id.
		sim.WebhookURL = ""
		lost := e.mustSession(keys["live_public"], `{"amount": 2500}`)
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": lost, "gatewayId": g.ID, "code": "moov", "phone": "+22996123456"}), 200)
		a, _ := st.Attempts(context.Background(), lost)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+a[0].ProviderRef+"?status=declined")
		e.clock.Add(time.Minute)
		if _, err := e.srv.Checkout.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := e.do("GET", "/v1/checkout/sessions/"+lost+"/status", nil, bearer(keys["live_secret"])...); s.str("status") != "FAILED" {
			t.Fatalf("session after the reconciler = %s", s.raw)
		}
	})
}

// TestBrowser_CardOnAggregatorPage pays by card in Chromium: the hosted
// page asks the card holder's details CinetPay needs (only once a card is
// chosen), sends the customer to CinetPay's page (the simulator's), which
// posts them back; the page follows the payment and
// returns to the merchant.
func TestBrowser_CardOnAggregatorPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Awa", true)
		g, _ := e.addGateway(ws, "cinetpay", &cinetpay.Simulator{APIKey: "api-sim", SiteID: "445160", SecretKey: "secret-sim"}, cinetpayCreds, "CI")
		ctx := browser(t)
		successURL := e.url + "/healthz?from=card"
		id := e.mustSession(keys["live_public"], map[string]any{"amount": 10000, "success_url": successURL})
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/pay/"+id),
			chromedp.WaitVisible(chromedp.ID("pay-button")),
			chromedp.WaitNotVisible(chromedp.ID("billing")), // a Mobile Money method first
			chromedp.Click(chromedp.CSS(`input[name=method][value="`+g.ID+`|CARD_UEMOA"]`)),
			// CinetPay offers a card only with the holder's details.
			chromedp.WaitVisible(chromedp.ID("billing")),
			chromedp.SendKeys(chromedp.ID("holder_name"), "Awa Kone"),
			chromedp.SendKeys(chromedp.ID("holder_email"), "awa@example.com"),
			chromedp.SendKeys(chromedp.ID("phone"), "+2250707123456"),
			chromedp.SendKeys(chromedp.ID("address"), "Rue des Jardins 12"),
			chromedp.SendKeys(chromedp.ID("city"), "Abidjan"),
			chromedp.SendKeys(chromedp.ID("state"), "Lagunes"),
			chromedp.SendKeys(chromedp.ID("zip"), "00225"),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "card-holder")
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.ID("pay-button")),
			chromedp.WaitVisible(chromedp.ID("sim-pay")), // CinetPay's page
			chromedp.Click(chromedp.ID("sim-pay")),
			chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`)), // posted back, followed
		); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "card-success")
		if r := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...); r.str("status") != "SUCCESS" {
			t.Fatalf("session after paying by card = %s", r.raw)
		}
		waitLocation(t, ctx, successURL)
	})
}
