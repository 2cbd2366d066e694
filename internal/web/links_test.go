package web

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	_ "image/png" // the QR code's PNG
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/qr"
	"github.com/cauri-pay/cauri/internal/qr/qrtest"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/cdproto/network"
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
			!strings.Contains(page.raw, `name="email"`) || !strings.Contains(page.raw, "Chez Fatou") || !strings.Contains(page.raw, "E-mail (optional)") {
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
		if r := e.do("PATCH", "/v1/payment-links/"+l.str("id"), map[string]any{"active": false}, live...); r.status != 200 || r.body["active"] != false {
			t.Fatalf("deactivate = %d %s", r.status, r.raw)
		}
		if r := e.do("GET", "/pay/l/"+l.str("slug"), nil); r.status != 410 || !strings.Contains(r.raw, `id="inactive"`) || strings.Contains(r.raw, `id="link-pay"`) {
			t.Fatalf("inactive page = %d %s", r.status, r.raw)
		}
		if r := form(pay); r.status != 409 || !strings.Contains(r.raw, "no longer active") {
			t.Fatalf("paying an inactive link = %d %s", r.status, r.raw)
		}
		e.do("PATCH", "/v1/payment-links/"+l.str("id"), map[string]any{"active": true}, live...)
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

// TestPaymentLinks_Controls: a link's optional controls over the API
// (created, read, listed a page at a time, changed, refused when wrong)
// and on its page (expired, used up, restricted to a number), checked by
// the contract middleware against openapi.yaml.
func TestPaymentLinks_Controls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Fatou", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		live := bearer(keys["live_secret"])
		expires := e.clock.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
		r := e.do("POST", "/v1/payment-links", map[string]any{"title": "Loyer", "amount": 75000, "expires_at": expires.Format(time.RFC3339),
			"max_payments": 1, "phone": "+221 77 123 45 67", "metadata": map[string]string{"tenant": "B-12"}}, live...)
		md, _ := r.body["metadata"].(map[string]any)
		if r.status != 200 || r.body["success"] != true || r.body["max_payments"] != 1.0 || r.str("phone") != "+221771234567" ||
			r.str("expires_at") != expires.Format(cauri.TimeFormat) || md["tenant"] != "B-12" || r.body["completed_payments"] != 0.0 || r.str("slug") == "" {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		id := r.str("id")
		for _, tc := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"title": "x", "amount": 1, "expires_at": "demain"}, "expires_at \"demain\" is not an RFC 3339"},
			{map[string]any{"title": "x", "amount": 1, "expires_at": "2020-01-01T00:00:00Z"}, "is not in the future"},
			{map[string]any{"title": "x", "amount": 1, "max_payments": 0}, "max_payments must be a whole number from 1 to 10000"},
			{map[string]any{"title": "x", "amount": 1, "max_payments": "1"}, "max_payments must be a number"},
			{map[string]any{"title": "x", "amount": 1, "phone": "77 123 45 67"}, "phone must be in international format"},
			{map[string]any{"title": "x", "amount": 1, "metadata": map[string]any{"n": 1}}, "metadata.n must be a string"},
			{map[string]any{"title": "x", "amount": 1, "metadata": map[string]any{"payment_link": "x"}}, "metadata.payment_link is set by Cauri"},
		} {
			wantError(t, e.do("POST", "/v1/payment-links", tc.body, live...), 400, tc.want)
		}

		// Read, and 404 for another workspace's.
		if got := e.do("GET", "/v1/payment-links/"+id, nil, live...); got.status != 200 || got.str("id") != id || got.str("phone") != "+221771234567" {
			t.Fatalf("get = %d %s", got.status, got.raw)
		}
		_, otherKeys := e.newWorkspace("Autre", true)
		wantError(t, e.do("GET", "/v1/payment-links/"+id, nil, bearer(otherKeys["live_secret"])...), 404, "not found")
		wantError(t, e.do("PATCH", "/v1/payment-links/"+id, map[string]any{"active": false}, bearer(otherKeys["live_secret"])...), 404, "not found")
		wantError(t, e.do("GET", "/v1/payment-links/"+id+"/qr", nil, bearer(otherKeys["live_secret"])...), 404, "not found")
		wantError(t, e.do("GET", "/v1/payment-links/pl_nope", nil, live...), 404, "not found")

		// PATCH: a clear 400 naming the field; nothing written.
		for _, tc := range []struct {
			body any
			want string
		}{
			{map[string]any{"active": "no"}, "active must be true or false"},
			{map[string]any{"active": nil}, "active must be true or false"},
			{map[string]any{"expires_at": 12}, "expires_at must be an RFC 3339 date and time"},
			{map[string]any{"expires_at": "2020-01-01T00:00:00Z", "active": false}, "is not in the future"},
			{map[string]any{"title": "New"}, `Unknown field "title"`},
			{map[string]any{}, "Nothing to change"},
		} {
			wantError(t, e.do("PATCH", "/v1/payment-links/"+id, tc.body, live...), 400, tc.want)
		}
		if got := e.do("GET", "/v1/payment-links/"+id, nil, live...); got.body["active"] != true || got.str("expires_at") == "" {
			t.Fatalf("after refused changes = %s", got.raw)
		}
		later := e.clock.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
		if p := e.do("PATCH", "/v1/payment-links/"+id, map[string]any{"expires_at": later.Format(time.RFC3339)}, live...); p.status != 200 || p.str("expires_at") != later.Format(cauri.TimeFormat) {
			t.Fatalf("new expiry = %d %s", p.status, p.raw)
		}
		if p := e.do("PATCH", "/v1/payment-links/"+id, map[string]any{"expires_at": nil}, live...); p.status != 200 || p.body["expires_at"] != nil {
			t.Fatalf("no expiry = %d %s", p.status, p.raw)
		}

		// The page of a link restricted to a number says so (its last
		// digits only), and refuses another number in the payer's language.
		page := e.do("GET", "/pay/l/"+r.str("slug"), nil, "Accept-Language", "fr")
		if page.status != 200 || !strings.Contains(page.raw, `id="phone-only"`) || !strings.Contains(page.raw, "se terminant par 67") || strings.Contains(page.raw, "771234567") {
			t.Fatalf("restricted page = %d %s", page.status, page.raw)
		}
		form := func(slug string, v url.Values, lang string) response {
			return e.do("POST", "/pay/l/"+slug, v.Encode(), "Content-Type", "application/x-www-form-urlencoded", "Accept-Language", lang)
		}
		pay := url.Values{"name": {"Awa"}, "phone": {"77 123 45 68"}, "method": {g.ID + "|ORANGE_SEN"}}
		if got := form(r.str("slug"), pay, "fr"); got.status != 400 || !strings.Contains(got.raw, "ne peut être payé que depuis le numéro") {
			t.Fatalf("another number = %d %s", got.status, got.raw)
		}
		pay.Set("phone", "77 123 45 67")
		if got := form(r.str("slug"), pay, "en"); got.status != 200 { // followed to the session's page
			t.Fatalf("its number = %d %s", got.status, got.raw)
		}
		sessions, _, _ := st.LinkSessions(context.Background(), id)
		if sessions != nil {
			t.Fatal("paid before the aggregator said so")
		}
		// Used up once its one payment succeeded.
		_, latest, _ := st.LinkSessions(context.Background(), id)
		attempts, _ := st.Attempts(context.Background(), latest.ID)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
		e.clock.Add(9e9)
		if c := e.do("GET", "/v1/payment-links/"+id+"/check", nil, live...); c.str("status") != "SUCCESS" {
			t.Fatalf("check = %s", c.raw)
		}
		for lang, text := range map[string]string{"en": "already been paid as many times", "fr": "déjà été payé autant de fois"} {
			if p := e.do("GET", "/pay/l/"+r.str("slug"), nil, "Accept-Language", lang); p.status != 410 || !strings.Contains(p.raw, `id="used-up"`) ||
				!strings.Contains(p.raw, text) || strings.Contains(p.raw, `id="link-pay"`) {
				t.Fatalf("used-up page (%s) = %d %s", lang, p.status, p.raw)
			}
		}
		if got := form(r.str("slug"), pay, "en"); got.status != 409 || !strings.Contains(got.raw, "already been paid") {
			t.Fatalf("paying a used-up link = %d %s", got.status, got.raw)
		}
		if got := e.do("GET", "/v1/payment-links/"+id, nil, live...); got.body["completed_payments"] != 1.0 {
			t.Fatalf("after its payment = %s", got.raw)
		}

		// Expired: the page says so, in both languages.
		soon := e.do("POST", "/v1/payment-links", map[string]any{"title": "Promo", "amount": 1000,
			"expires_at": e.clock.Now().Add(time.Hour).Format(time.RFC3339)}, live...)
		e.clock.Add(time.Hour)
		for lang, text := range map[string]string{"en": "This payment link has expired", "fr": "Ce lien de paiement a expiré"} {
			if p := e.do("GET", "/pay/l/"+soon.str("slug"), nil, "Accept-Language", lang); p.status != 410 || !strings.Contains(p.raw, `id="expired"`) ||
				!strings.Contains(p.raw, text) {
				t.Fatalf("expired page (%s) = %d %s", lang, p.status, p.raw)
			}
		}

		// The list: newest first, a page at a time.
		for i := range 4 {
			e.do("POST", "/v1/payment-links", map[string]any{"title": fmt.Sprint("Link ", i), "amount": 100 + i}, live...)
			e.clock.Add(time.Second)
		}
		var seen []string
		after := ""
		for page := 0; ; page++ {
			path := "/v1/payment-links?limit=2"
			if after != "" {
				path += "&starting_after=" + after
			}
			l := e.do("GET", path, nil, live...)
			data, _ := l.body["data"].([]any)
			if l.status != 200 || l.str("object") != "list" || l.body["count"] != float64(len(data)) || page > 5 {
				t.Fatalf("list = %d %s", l.status, l.raw)
			}
			for _, d := range data {
				seen = append(seen, d.(map[string]any)["id"].(string))
			}
			if l.body["has_more"] != true {
				break
			}
			after = seen[len(seen)-1]
		}
		if len(seen) != 6 || seen[4] != soon.str("id") || seen[5] != id {
			t.Fatalf("listed %v; want the 6 links, newest first, ending with %s, %s", seen, soon.str("id"), id)
		}
		wantError(t, e.do("GET", "/v1/payment-links?limit=0", nil, live...), 400, "limit must be")
		wantError(t, e.do("GET", "/v1/payment-links?limit=201", nil, live...), 400, "limit must be")
		wantError(t, e.do("GET", "/v1/payment-links?starting_after=pl_nope", nil, live...), 400, "starting_after")
		if other := e.do("GET", "/v1/payment-links", nil, bearer(otherKeys["live_secret"])...); other.body["count"] != 0.0 {
			t.Fatalf("another workspace's list = %s", other.raw)
		}
	})
}

// TestPaymentLinks_QR: the QR code of a link's address, as PNG and SVG,
// decodes to the link's url (ZXing's decoder, not the encoder's).
func TestPaymentLinks_QR(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Fatou", true)
		e.addSimulatedGateway(ws, "SN")
		live := bearer(keys["live_secret"])
		l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Pagne", "amount": 5000}, live...)
		png := e.do("GET", "/v1/payment-links/"+l.str("id")+"/qr?format=png", nil, live...)
		if png.status != 200 || png.header.Get("Content-Type") != "image/png" {
			t.Fatalf("png = %d %v", png.status, png.header)
		}
		img, _, err := image.Decode(strings.NewReader(png.raw))
		if err != nil || img.Bounds().Dx() != qr.PNGSize || img.Bounds().Dy() != qr.PNGSize {
			t.Fatalf("png image = %v, %v", img, err)
		}
		if got := qrtest.Decode(t, img); got != l.str("url") {
			t.Fatalf("the PNG code reads %q; want %q", got, l.str("url"))
		}
		svg := e.do("GET", "/v1/payment-links/"+l.str("id")+"/qr", nil, live...)
		if svg.status != 200 || svg.header.Get("Content-Type") != "image/svg+xml" || xml.Unmarshal([]byte(svg.raw), new(struct{})) != nil ||
			!strings.HasPrefix(svg.raw, "<svg") {
			t.Fatalf("svg = %d %v %.200s", svg.status, svg.header, svg.raw)
		}
		wantError(t, e.do("GET", "/v1/payment-links/"+l.str("id")+"/qr?format=gif", nil, live...), 400, "format must be svg or png")
		wantError(t, e.do("GET", "/v1/payment-links/"+l.str("id")+"/qr", nil, bearer(keys["live_public"])...), 401, "secret key")
	})
}

// TestPaymentLinks_Client: the Go client's link calls against the server.
func TestPaymentLinks_Client(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Fatou", true)
		e.addSimulatedGateway(ws, "SN")
		ctx := context.Background()
		api := client.New(e.url, keys["live_secret"])
		max, phone := 3, "+221771234567"
		expires := e.clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
		l, err := api.CreatePaymentLinkWith(ctx, client.PaymentLinkCreate{Title: "Robe", Amount: "15000", MaxPayments: &max, Phone: &phone,
			ExpiresAt: &expires, Metadata: &map[string]string{"sku": "R-1"}})
		if err != nil || l.MaxPayments == nil || *l.MaxPayments != 3 || l.ExpiresAt == nil || !l.ExpiresAt.Equal(expires) || l.Metadata["sku"] != "R-1" {
			t.Fatalf("create = %+v, %v", l, err)
		}
		e.clock.Add(time.Second)
		if _, err := api.CreatePaymentLink(ctx, "Autre", "500", ""); err != nil {
			t.Fatal(err)
		}
		list, err := api.ListPaymentLinks(ctx, 1, "")
		if err != nil || list.Count != 1 || !list.HasMore || list.Data[0].Title != "Autre" {
			t.Fatalf("first page = %+v, %v", list, err)
		}
		if list, err = api.ListPaymentLinks(ctx, 1, list.Data[0].Id); err != nil || list.Count != 1 || list.HasMore || list.Data[0].Id != l.Id {
			t.Fatalf("second page = %+v, %v", list, err)
		}
		off := false
		if got, err := api.UpdatePaymentLink(ctx, l.Id, client.PaymentLinkUpdate{Active: &off, RemoveExpiry: true}); err != nil || got.Active || got.ExpiresAt != nil {
			t.Fatalf("update = %+v, %v", got, err)
		}
		if got, err := api.PaymentLink(ctx, l.Id); err != nil || got.Active || got.CompletedPayments != 0 {
			t.Fatalf("get = %+v, %v", got, err)
		}
		img, err := api.PaymentLinkQR(ctx, l.Id, "png")
		if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
			t.Fatalf("qr = %.8q, %v", img, err)
		}
		var apiErr *client.APIError
		if _, err := client.New(e.url, keys["test_secret"]).ListPaymentLinks(ctx, 0, ""); !errors.As(err, &apiErr) || apiErr.Status != 403 || apiErr.Code != "test_mode" {
			t.Fatalf("list with a test key = %v; want 403 test_mode", err)
		}
	})
}

// TestBrowser_LinkControls: a French-speaking payer in Chromium on the
// page of a link restricted to a number (its last digits said), refused
// with another number, then on an expired link's page.
func TestBrowser_LinkControls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Fatou", true)
		e.addSimulatedGateway(ws, "SN")
		live := bearer(keys["live_secret"])
		l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Loyer", "amount": 75000, "phone": "+221771234567", "max_payments": 1}, live...)
		soon := e.do("POST", "/v1/payment-links", map[string]any{"title": "Promo", "amount": 1000,
			"expires_at": e.clock.Now().Add(time.Minute).Format(time.RFC3339)}, live...)
		ctx := browser(t)
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "fr-SN,fr"}}); err != nil {
			t.Fatal(err)
		}
		err := chromedp.Do(ctx,
			chromedp.Navigate(l.str("url")),
			chromedp.WaitVisible(chromedp.ID("phone-only")),
			chromedp.SendKeys(chromedp.ID("name"), "Awa Diop"),
			chromedp.Click(chromedp.CSS(`input[name=method][value$="|ORANGE_SEN"]`)),
			chromedp.SendKeys(chromedp.ID("phone"), "77 765 43 21"),
		)
		if err != nil {
			t.Fatal(err)
		}
		notice, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("phone-only")))
		if !strings.Contains(notice, "se terminant par 67") {
			t.Fatalf("the notice = %q", notice)
		}
		cards, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("input[name=method][value*='|CARD']").length`))
		if cards != 0 {
			t.Fatalf("%d card methods offered on a link restricted to a number", cards)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pay-button")), chromedp.WaitVisible(chromedp.ID("error"))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "link-wrong-number")
		if msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error"))); !strings.Contains(msg, "ne peut être payé que depuis le numéro") {
			t.Fatalf("the refusal = %q", msg)
		}
		e.clock.Add(time.Minute)
		if err := chromedp.Do(ctx, chromedp.Navigate(soon.str("url")), chromedp.WaitVisible(chromedp.ID("expired"))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "link-expired")
		text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("expired")))
		forms, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#link-pay").length`))
		if !strings.Contains(text, "Ce lien de paiement a expiré") || forms != 0 {
			t.Fatalf("the expired page says %q with %d forms", text, forms)
		}
	})
}
