package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

func TestPaymentLinks_API(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Links shop", true)
		live := bearer(keys["live_secret"])
		// No gateway collects XOF yet: the link's page could take nothing.
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "Robe wax", "amount": 15000}, live...), 409, "No gateway of this workspace collects XOF")
		e.addSimulatedGateway(ws, "SN")
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "Robe wax", "amount": 1500, "currency": "GHS"}, live...), 409, "collects GHS")
		r := e.do("POST", "/v1/payment-links", map[string]any{"title": "Robe wax", "amount": 15000}, live...)
		if r.status != 200 || r.body["success"] != true || r.str("currency") != "XOF" || r.body["amount"] != 15000.0 ||
			!strings.HasSuffix(r.str("url"), "/pay/l/"+r.str("slug")) || !strings.HasPrefix(r.str("id"), "pl_") || r.body["active"] != true {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 1}, bearer(keys["test_secret"])...), 403, "production only")
		if r := e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 1}, bearer(keys["test_secret"])...); r.str("code") != "test_mode" {
			t.Fatalf("test key = %s; want code test_mode", r.raw)
		}
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 1}, bearer(e.keys["live_secret"])...), 403, "production only") // unverified
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 1}, bearer(keys["live_public"])...), 401, "secret key")
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"amount": 1}, live...), 400, "title is required")
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "x"}, live...), 400, "amount is required")
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": "12"}, live...), 400, "amount must be a number")
		wantError(t, e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 12.5}, live...), 400, "whole number")
		c := e.do("GET", "/v1/payment-links/"+r.str("id")+"/check", nil, live...)
		if c.status != 200 || c.body["paid"] != false || c.str("status") != "WAITING" || c.body["transaction"] != nil {
			t.Fatalf("check = %d %s", c.status, c.raw)
		}
		wantError(t, e.do("GET", "/v1/payment-links/pl_nope/check", nil, live...), 404, "not found")
		wantError(t, e.do("GET", "/v1/payment-links/"+r.str("id")+"/check", nil, bearer(e.keys["live_secret"])...), 404, "not found") // another workspace
		var limited response
		for i := 0; i < 61 && limited.status != 429; i++ {
			limited = e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 100}, live...)
		}
		wantStatus(t, limited, 429)
	})
}

func TestPaymentLinks_Page(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Fatou", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		live := bearer(keys["live_secret"])
		l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Atelier couture", "amount": 7500}, live...)
		page := e.do("GET", "/pay/l/"+l.str("slug"), nil)
		if page.status != 200 || !strings.Contains(page.raw, "Atelier couture") || !strings.Contains(page.raw, `id="link-pay"`) ||
			!strings.Contains(page.raw, `name="email"`) || !strings.Contains(page.raw, "Chez Fatou") || !strings.Contains(page.raw, "Your e-mail address (optional") {
			t.Fatalf("page = %d %s", page.status, page.raw)
		}
		wantStatus(t, e.do("GET", "/pay/l/nope", nil), 404)
		form := func(v url.Values) response {
			return e.do("POST", "/pay/l/"+l.str("slug"), v.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		}
		pay := url.Values{"name": {"Fatou Sow"}, "email": {"fatou@example.com"}, "phone": {"77 123 45 67"}, "method": {g.ID + "|WAVE_SEN"}}
		bad := url.Values{"name": {""}, "email": {"fatou@example.com"}, "phone": {"77 123 45 67"}, "method": {g.ID + "|WAVE_SEN"}}
		if r := form(bad); r.status != 400 || !strings.Contains(r.raw, "are required") {
			t.Fatalf("no name = %d %s", r.status, r.raw)
		}
		// The e-mail address is optional for Mobile Money (another link, so
		// that this one's check below reads one payment).
		other := e.do("POST", "/v1/payment-links", map[string]any{"title": "Retouches", "amount": 2000}, live...)
		if r := e.do("POST", "/pay/l/"+other.str("slug"), url.Values{"name": {"Awa"}, "phone": {"77 123 45 67"}, "method": {g.ID + "|WAVE_SEN"}}.Encode(),
			"Content-Type", "application/x-www-form-urlencoded"); r.status != 200 || !strings.Contains(r.raw, "Retouches") {
			t.Fatalf("no e-mail, Mobile Money = %d %s; want paid without it (the session's page)", r.status, r.raw)
		}
		wrong := url.Values{"name": {"Fatou"}, "email": {"fatou@example.com"}, "phone": {"+2250707123456"}, "method": {g.ID + "|WAVE_SEN"}}
		if r := form(wrong); r.status != 400 || !strings.Contains(r.raw, "not a phone number of SN") {
			t.Fatalf("wrong phone = %d %s", r.status, r.raw)
		}
		// Paying: a session attached to the link, then its page.
		req, _ := http.NewRequest("POST", e.url+"/pay/l/"+l.str("slug"), strings.NewReader(pay.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		sessionID := strings.TrimPrefix(res.Header.Get("Location"), e.url+"/pay/")
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(sessionID, "cs_") {
			t.Fatalf("pay = %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		s := e.do("GET", "/v1/checkout/sessions/"+sessionID+"/status", nil, live...)
		md, _ := s.body["metadata"].(map[string]any)
		if s.str("customer_name") != "Fatou Sow" || s.str("customer_phone") != "+221771234567" || md["payment_link"] != l.str("id") || s.body["amount"] != 7500.0 {
			t.Fatalf("session = %s", s.raw)
		}
		if c := e.do("GET", "/v1/payment-links/"+l.str("id")+"/check", nil, live...); c.str("status") != "PENDING" || c.body["paid"] != false {
			t.Fatalf("check while waiting = %s", c.raw)
		}
		attempts, _ := st.Attempts(context.Background(), sessionID)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
		e.clock.Add(9e9)
		c := e.do("GET", "/v1/payment-links/"+l.str("id")+"/check", nil, live...)
		tx, _ := c.body["transaction"].(map[string]any)
		if c.str("status") != "SUCCESS" || c.body["paid"] != true || tx["id"] != sessionID || tx["customerName"] != "Fatou Sow" ||
			tx["customerEmail"] != "fatou@example.com" || tx["amount"] != 7500.0 {
			t.Fatalf("check after paying = %s", c.raw)
		}
		// A test key never reads a live payer (issue 16: modes are walls).
		for _, key := range []string{keys["test_secret"], keys["test_public"]} {
			if r := e.do("GET", "/v1/payment-links/"+l.str("id")+"/check", nil, bearer(key)...); r.status/100 != 4 || strings.Contains(r.raw, "Fatou") {
				t.Fatalf("check with a test key = %d %s; want refused, no payer", r.status, r.raw)
			}
		}
		wantError(t, e.do("GET", "/v1/payment-links/"+l.str("id")+"/check", nil, bearer(keys["test_secret"])...), 404, "test mode")
		// Deactivated: the page says so and takes no payment; reactivated, it does.
		if _, err := st.SetLinkActive(context.Background(), ws.ID, l.str("id"), false, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if r := e.do("GET", "/pay/l/"+l.str("slug"), nil); r.status != 410 || !strings.Contains(r.raw, `id="inactive"`) || strings.Contains(r.raw, `id="link-pay"`) {
			t.Fatalf("inactive page = %d %s", r.status, r.raw)
		}
		if r := form(pay); r.status != 409 || !strings.Contains(r.raw, "no longer active") {
			t.Fatalf("paying an inactive link = %d %s", r.status, r.raw)
		}
		st.SetLinkActive(context.Background(), ws.ID, l.str("id"), true, e.clock.Now())
		wantStatus(t, e.do("GET", "/pay/l/"+l.str("slug"), nil), 200)
	})
}

// TestBrowser_PayALink pays a payment link end to end in Chromium: the
// customer fills in the link's page, lands on the session's page, confirms
// on the phone (the simulator settles) and sees the success.
func TestBrowser_PayALink(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Fatou", true)
		_, sim, _ := e.addSimulatedGateway(ws, "SN")
		sim.SettleAfter = 300 * time.Millisecond
		ctx := browser(t)
		l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Atelier couture", "amount": 7500}, bearer(keys["live_secret"])...)
		e.runClock(t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(l.str("url")),
			chromedp.WaitVisible(chromedp.ID("link-pay")),
			chromedp.SendKeys(chromedp.ID("name"), "Fatou Sow"),
			chromedp.SendKeys(chromedp.ID("email"), "fatou@example.com"),
			chromedp.Click(chromedp.CSS(`input[name=method][value$="|WAVE_SEN"]`)),
			chromedp.SendKeys(chromedp.ID("phone"), "77 123 45 67"),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "link-page")
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.ID("pay-button")),
			chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`)),
		); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "link-paid")
		if c := e.do("GET", "/v1/payment-links/"+l.str("id")+"/check", nil, bearer(keys["live_secret"])...); c.str("status") != "SUCCESS" {
			t.Fatalf("check = %s", c.raw)
		}
	})
}

// TestPaymentLinks_CardHolder: a link paid by a card through CinetPay asks
// the payer's postal address too (the link page already asks every payer's
// name and phone, and the e-mail address a card needs), then sends them to
// CinetPay's page.
func TestPaymentLinks_CardHolder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Awa", true)
		g, _ := e.addGateway(ws, "cinetpay", &cinetpay.Simulator{APIKey: "api-sim", SiteID: "445160", SecretKey: "secret-sim"}, cinetpayCreds, "CI")
		l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Pagne wax", "amount": 5000}, bearer(keys["live_secret"])...)
		page := e.do("GET", "/pay/l/"+l.str("slug"), nil)
		if !strings.Contains(page.raw, `id="billing"`) || !strings.Contains(page.raw, `data-billing="1"`) || strings.Contains(page.raw, `id="holder_name"`) {
			t.Fatalf("link page = %s; want the address asked for CinetPay's cards, not the name twice", page.raw)
		}
		pay := url.Values{"name": {"Awa Kone"}, "email": {"awa@example.com"}, "phone": {"+2250707123456"}, "method": {g.ID + "|CARD_UEMOA"},
			"city": {"Abidjan"}, "state": {"Lagunes"}, "zip": {"00225"}}
		form := func(v url.Values) *http.Response {
			req, _ := http.NewRequest("POST", e.url+"/pay/l/"+l.str("slug"), strings.NewReader(v.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		// A card needs the e-mail address (CinetPay's page asks for it),
		// which the link page otherwise leaves optional.
		noEmail := url.Values{}
		for k, v := range pay {
			noEmail[k] = v
		}
		noEmail.Del("email")
		if res := form(noEmail); res.StatusCode != 400 {
			t.Fatalf("a card without an e-mail address = %d; want 400", res.StatusCode)
		}
		// Without the address, the session's page says what is missing and
		// takes another try; with it, CinetPay's page.
		res := form(pay)
		first := strings.TrimPrefix(res.Header.Get("Location"), e.url+"/pay/")
		if r := e.do("POST", "/checkout/initiate", map[string]any{"transactionId": first, "gatewayId": g.ID, "code": "CARD_UEMOA",
			"phone": "+2250707123456", "holder": map[string]string{"name": "Awa Kone", "email": "awa@example.com", "city": "Abidjan",
				"state": "Lagunes", "zipCode": "00225"}}); r.status != 400 || !strings.Contains(r.str("message"), "address") {
			t.Fatalf("a card without an address = %d %s", r.status, r.raw)
		}
		pay.Set("address", "Rue des Jardins 12")
		res = form(pay)
		id := strings.TrimPrefix(res.Header.Get("Location"), e.url+"/pay/")
		attempts, _ := st.Attempts(context.Background(), id)
		if res.StatusCode != http.StatusSeeOther || len(attempts) != 1 || attempts[0].RedirectURL == "" {
			t.Fatalf("pay by card = %d, attempts %+v; want CinetPay's page", res.StatusCode, attempts)
		}
	})
}
