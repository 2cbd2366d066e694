package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

// phone is the browser on a phone-sized screen (390x844).
func phone(t *testing.T) context.Context {
	t.Helper()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// TestSessionExpiry: expires_at on creation, checked and returned; past
// it the page says the payment expired and takes none, and the reconciler
// cancels the session with payment.cancelled.
func TestSessionExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Adjoa", true)
		g, _, _ := e.addSimulatedGateway(ws, "SN")
		now := e.clock.Now()
		for _, c := range []struct {
			name string
			body any
			want string
		}{
			{"ErrNotADate", `{"amount": 1000, "expires_at": "demain"}`, `expires_at "demain" is not an RFC 3339 date`},
			{"ErrNotAString", `{"amount": 1000, "expires_at": 1767225599}`, "expires_at must be a string"},
			{"ErrPast", map[string]any{"amount": 1000, "expires_at": now.Add(-time.Minute).Format(time.RFC3339)}, "not in the future"},
			{"ErrTooSoon", map[string]any{"amount": 1000, "expires_at": now.Add(time.Minute).Format(time.RFC3339)}, "less than 5 minutes away"},
			{"ErrTooFar", map[string]any{"amount": 1000, "expires_at": now.Add(31 * 24 * time.Hour).Format(time.RFC3339)}, "more than 30 days away"},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantError(t, e.createSession(keys["live_secret"], c.body), 400, c.want)
			})
		}
		n := 0
		if err := st.ExportTransactions(context.Background(), ws.ID, true, store.ExportFilter{Limit: 10},
			func(store.ExportRow) error { n++; return nil }); err != nil || n != 0 {
			t.Fatalf("%d sessions after refused requests (%v); want none", n, err)
		}
		r := e.createSession(keys["live_secret"], map[string]any{"amount": 1000})
		if got, want := r.str("expires_at"), now.Add(24*time.Hour).Format(cauri.TimeFormat); r.status != 201 || got != want {
			t.Fatalf("default expires_at = %q (%d); want %q", got, r.status, want)
		}
		at := now.Add(time.Hour).In(time.FixedZone("GMT+1", 3600))
		r = e.createSession(keys["live_secret"], map[string]any{"amount": 1000, "cancel_url": "https://shop.example/cart", "expires_at": at.Format(time.RFC3339)})
		if got, want := r.str("expires_at"), at.UTC().Format(cauri.TimeFormat); r.status != 201 || got != want {
			t.Fatalf("expires_at = %q (%d); want %q", got, r.status, want)
		}
		id := r.str("id")
		if page := e.do("GET", "/pay/"+id, nil); !strings.Contains(page.raw, `id="pay-button"`) || strings.Contains(page.raw, `id="expired"`) {
			t.Fatalf("the page before the expiry does not offer to pay:\n%s", page.raw)
		}
		e.clock.Add(time.Hour)
		for _, c := range []struct{ lang, says string }{{"en", "This payment has expired"}, {"fr", "Ce paiement a expiré"}} {
			page := e.do("GET", "/pay/"+id, nil, "Accept-Language", c.lang)
			if !strings.Contains(page.raw, c.says) || strings.Contains(page.raw, `id="pay-button"`) || strings.Contains(page.raw, `id="cancel-button"`) ||
				!strings.Contains(page.raw, `href="https://shop.example/cart"`) {
				t.Fatalf("the expired page (%s) does not say %q, still offers to pay, or does not go back to cancel_url:\n%s", c.lang, c.says, page.raw)
			}
		}
		wantError(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "771234567"}),
			409, "expired")
		if _, err := e.srv.Checkout.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...); r.str("status") != "CANCELLED" {
			t.Fatalf("after the reconciler: %s; want CANCELLED", r.raw)
		}
		events, _ := st.SessionEvents(context.Background(), id)
		if len(events) != 1 || events[0].Type != cauri.EventPaymentCancelled {
			t.Fatalf("events = %+v; want one payment.cancelled", events)
		}
		if page := e.do("GET", "/pay/"+id, nil); !strings.Contains(page.raw, `data-status="CANCELLED"`) || !strings.Contains(page.raw, `id="expired"`) {
			t.Fatalf("the cancelled page does not say the payment expired:\n%s", page.raw)
		}
		// A session its customer cancelled before its expiry does not say it expired.
		other := e.mustSession(keys["live_public"], map[string]any{"amount": 1000})
		if _, err := e.srv.Checkout.Cancel(context.Background(), other); err != nil {
			t.Fatal(err)
		}
		if page := e.do("GET", "/pay/"+other, nil); strings.Contains(page.raw, `id="expired"`) {
			t.Fatalf("a cancelled session's page says it expired:\n%s", page.raw)
		}
	})
}

// TestBrowser_ExpiredSession: on a phone, the page of a session past its
// expiry says so and offers nothing to pay, before and after the
// reconciler cancels it.
func TestBrowser_ExpiredSession(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	e.addSimulatedGateway(ws, "SN")
	ctx := phone(t)
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "description": "2 pagnes wax",
		"expires_at": e.clock.Now().Add(30 * time.Minute).Format(time.RFC3339)})
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/pay/"+id), chromedp.WaitVisible(chromedp.ID("pay-button"))); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(30 * time.Minute)
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("expired"))); err != nil {
		t.Fatal(err)
	}
	says, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("expired")))
	if err != nil || !strings.Contains(says, "has expired") {
		t.Fatalf("expired says %q, %v", says, err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#pay-button, #cancel-button, input[name=method]").length`)); n != 0 {
		t.Fatalf("the expired page still has %d ways to pay or cancel", n)
	}
	if _, err := e.srv.Checkout.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#status[data-status="CANCELLED"]`)),
		chromedp.WaitVisible(chromedp.ID("expired"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "recover-expired")
}

// TestRecoverOnPage: without JavaScript, the waiting screen offers to send
// the request again and to pay with another operator; both wait for the
// aggregator to say the first request has ended, the resend goes to the
// same number by the same method, and the operator's choice keeps the
// number; a second request to one number waits half a minute.
func TestRecoverOnPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Chez Adjoa", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		post := func(id string, form url.Values, lang string) (int, string, string) {
			t.Helper()
			req, _ := http.NewRequest("POST", e.url+"/pay/"+id, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Accept-Language", lang)
			res, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			return res.StatusCode, res.Header.Get("Location"), string(body)
		}
		attempts := func(id string) []*cauri.PaymentAttempt {
			t.Helper()
			a, err := st.Attempts(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "cancel_url": "https://shop.example/cart"})
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "FREE_SEN", "phone": "76 123 45 67"}), 200)
		page := e.do("GET", "/pay/"+id, nil).raw
		for _, el := range []string{`id="recover"`, `id="resend"`, `id="switch"`} {
			if !strings.Contains(page, el) {
				t.Fatalf("the waiting screen has no %s:\n%s", el, page)
			}
		}
		// Still open at the operator: both refused, in the customer's language.
		for _, c := range []struct{ field, lang, says string }{
			{"resend", "en", "still open at the operator"}, {"switch", "fr", "encore ouverte chez"},
		} {
			code, _, body := post(id, url.Values{c.field: {"1"}}, c.lang)
			if code != http.StatusConflict || !strings.Contains(body, c.says) {
				t.Fatalf("%s while the request is open = %d; want 409 saying %q:\n%s", c.field, code, c.says, body)
			}
		}
		if n := len(attempts(id)); n != 1 {
			t.Fatalf("attempts after refusals = %d; want 1", n)
		}
		// The request expires at the operator: sent again, same method and number.
		first := attempts(id)[0]
		gatewaytest.Control(t, simURL, "/_sim/settle/"+first.Reference+"?status=FAILED")
		e.clock.Add(checkout.ResendInterval)
		// The failure does not send the customer away: it offers the resend, and a way back.
		page = e.do("GET", "/pay/"+id, nil).raw
		if !strings.Contains(page, `data-status="FAILED"`) || !strings.Contains(page, `id="resend"`) ||
			!strings.Contains(page, `id="return" href="https://shop.example/cart"`) || strings.Contains(page, `http-equiv="refresh"`) {
			t.Fatalf("the failed page does not offer the resend and a way back, or sends the customer away:\n%s", page)
		}
		if code, where, body := post(id, url.Values{"resend": {"1"}}, "en"); code != http.StatusSeeOther || where != e.url+"/pay/"+id {
			t.Fatalf("resend = %d %s; want 303 to the page:\n%s", code, where, body)
		}
		all := attempts(id)
		if len(all) != 2 || all[0].Reference == first.Reference || all[0].Phone != "+221761234567" || all[0].OperatorCode != "FREE_SEN" ||
			all[0].Status != cauri.AttemptPending {
			t.Fatalf("after the resend: %+v; want a new pending attempt to the same number by Free Money", all[0])
		}
		// Another operator: the wait ends, the page opens on the methods with the number kept.
		gatewaytest.Control(t, simURL, "/_sim/settle/"+all[0].Reference+"?status=FAILED")
		e.clock.Add(2 * time.Second)
		if code, where, body := post(id, url.Values{"switch": {"1"}}, "en"); code != http.StatusSeeOther || where != e.url+"/pay/"+id+"#pay" {
			t.Fatalf("switch = %d %s; want 303 to the page's methods:\n%s", code, where, body)
		}
		page = e.do("GET", "/pay/"+id, nil).raw
		if !regexp.MustCompile(`id="phone"[^>]*value="(\+|&#43;)221761234567"`).MatchString(page) || !strings.Contains(page, `id="pay-button"`) {
			t.Fatalf("the methods after the switch do not keep the number:\n%s", page)
		}
		// The same number again within half a minute: refused, said in French.
		form := url.Values{"method": {g.ID + "|ORANGE_SEN"}, "phone": {"+221761234567"}}
		if code, _, body := post(id, form, "fr"); code != http.StatusConflict || !strings.Contains(body, "attendez une trentaine de secondes") {
			t.Fatalf("another request to the number at once = %d; want 409 saying to wait:\n%s", code, body)
		}
		e.clock.Add(checkout.ResendInterval)
		if code, _, body := post(id, form, "en"); code != http.StatusSeeOther {
			t.Fatalf("another operator after the interval = %d:\n%s", code, body)
		}
		if all = attempts(id); len(all) != 3 || all[0].OperatorCode != "ORANGE_SEN" || all[0].Phone != "+221761234567" {
			t.Fatalf("after the switch: %+v; want Orange Money to the same number", all[0])
		}
		// Five attempts in all: then the page says so and offers no more tries.
		for len(all) < checkout.MaxAttempts {
			gatewaytest.Control(t, simURL, "/_sim/settle/"+all[0].Reference+"?status=FAILED")
			e.clock.Add(checkout.ResendInterval)
			if code, _, body := post(id, url.Values{"resend": {"1"}}, "en"); code != http.StatusSeeOther {
				t.Fatalf("resend %d = %d:\n%s", len(all)+1, code, body)
			}
			all = attempts(id)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+all[0].Reference+"?status=FAILED")
		e.clock.Add(checkout.ResendInterval)
		page = e.do("GET", "/pay/"+id, nil, "Accept-Language", "fr").raw
		if !strings.Contains(page, `id="exhausted"`) || !strings.Contains(page, "tenté trop de fois") || strings.Contains(page, `id="pay-button"`) ||
			strings.Contains(page, `id="resend"`) {
			t.Fatalf("the page after %d attempts still offers a try, or does not say why:\n%s", checkout.MaxAttempts, page)
		}
		if code, _, body := post(id, url.Values{"resend": {"1"}}, "en"); code != http.StatusConflict || !strings.Contains(body, "tried too many times") {
			t.Fatalf("a sixth try = %d; want 409 saying so:\n%s", code, body)
		}
	})
}

// TestBrowser_Recover: on a phone, a push the customer missed is sent
// again from the waiting screen once the countdown is over (refused while
// the operator still holds it open, sent once it expired), then the
// customer pays with another operator, the number kept.
func TestBrowser_Recover(t *testing.T) {
	st := storetest.SQLite(t)
	e := newEnv(t, st)
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	_, _, simURL := e.addSimulatedGateway(ws, "SN")
	ctx := phone(t)
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "description": "2 pagnes wax", "customer_phone": "+221 76 123 45 67"})
	latest := func() *cauri.PaymentAttempt {
		t.Helper()
		a, err := st.Attempts(context.Background(), id)
		if err != nil || len(a) == 0 {
			t.Fatalf("attempts = %v, %v", a, err)
		}
		return a[0]
	}
	run := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	run(chromedp.Navigate(e.url+"/pay/"+id), chromedp.WaitVisible(chromedp.ID("pay-button")),
		chromedp.Click(chromedp.CSS(`input[name=method][value$="|FREE_SEN"]`)))
	e.runClock(t)
	run(chromedp.Click(chromedp.ID("pay-button")), chromedp.WaitVisible(chromedp.ID("waiting-for")))
	// While the countdown runs, the way out is hidden.
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[Number(document.getElementById("no-prompt").dataset.waited), document.getElementById("recover").hidden ? 1 : 0]`))
	if err != nil || len(state) != 2 || state[0] < 55 && state[1] != 1 || state[0] >= 60 && state[1] != 0 {
		t.Fatalf("waited, recover hidden = %v, %v; want it hidden while the countdown runs, shown after", state, err)
	}
	// Past it (the service's clock runs fast): send it again.
	run(chromedp.WaitVisible(chromedp.ID("resend")), chromedp.WaitVisible(chromedp.ID("switch")))
	screenshot(t, ctx, "recover-waiting-over")
	first := latest()
	run(chromedp.Click(chromedp.ID("resend")), chromedp.WaitVisible(chromedp.ID("error")))
	says, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error")))
	if !strings.Contains(says, "still open") {
		t.Fatalf("resend while the operator holds the request = %q; want it said to be still open", says)
	}
	screenshot(t, ctx, "recover-still-open")
	// The operator lets it expire: the page shows the failure and the resend.
	gatewaytest.Control(t, simURL, "/_sim/settle/"+first.Reference+"?status=FAILED")
	run(chromedp.WaitVisible(chromedp.ID("last-failure")), chromedp.WaitVisible(chromedp.ID("resend")))
	screenshot(t, ctx, "recover-missed")
	run(chromedp.Click(chromedp.ID("resend")), chromedp.WaitVisible(chromedp.ID("waiting-for")))
	second := latest()
	if second.ID == first.ID || second.Reference == first.Reference || second.Phone != "+221761234567" || second.OperatorCode != "FREE_SEN" {
		t.Fatalf("resent = %+v; want a new attempt to +221761234567 by Free Money", second)
	}
	sentTo, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("waiting-for")))
	if !strings.Contains(sentTo, "+221 76 123 45 67") {
		t.Fatalf("waiting for %q; want the same number", sentTo)
	}
	// Missed again: pay with another operator, the number kept.
	gatewaytest.Control(t, simURL, "/_sim/settle/"+second.Reference+"?status=FAILED")
	run(chromedp.WaitVisible(chromedp.ID("last-failure")), chromedp.Click(chromedp.ID("switch")),
		chromedp.Click(chromedp.CSS(`input[name=method][value$="|ORANGE_SEN"]`)))
	number, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("phone")))
	if number != "+221761234567" {
		t.Fatalf("number after choosing another operator = %q; want +221761234567 kept", number)
	}
	screenshot(t, ctx, "recover-switch")
	run(chromedp.Click(chromedp.ID("pay-button")))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("waiting-for"))); err != nil {
		said, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("result")))
		t.Fatalf("after paying with another operator: %v; the page says %q", err, said)
	}
	third := latest()
	if third.ID == second.ID || third.OperatorCode != "ORANGE_SEN" || third.Phone != "+221761234567" {
		t.Fatalf("after the switch: %+v; want Orange Money to the same number", third)
	}
}

// TestBrowser_Instructions: on a phone, the aggregator's instructions lead
// the waiting screen, the USSD code they name a tap away (Paystack's
// voucher for Telecel Ghana: "Dial *110#").
func TestBrowser_Instructions(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Ama", true)
	sim := &paystack.Simulator{SecretKey: "sk_live_sim"}
	g, _ := e.addGateway(ws, "paystack", sim, map[string]string{"secret_key": "sk_live_sim"}, "GH")
	ctx := phone(t)
	id := e.mustSession(keys["live_public"], `{"amount": 40, "currency": "GHS", "customer_email": "ama@example.com"}`)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/pay/"+id),
		chromedp.WaitVisible(chromedp.ID("pay-button")),
		chromedp.Click(chromedp.CSS(`input[name=method][value="`+g.ID+`|vod"]`)),
		chromedp.SendKeys(chromedp.ID("phone"), "020 123 4567"),
		chromedp.Click(chromedp.ID("pay-button")),
		chromedp.WaitVisible(chromedp.CSS(`#instructions a.dial`)),
	); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(function () {
		var i = document.getElementById("instructions"), a = i.querySelector("a.dial"), r = i.getBoundingClientRect();
		return [i.textContent, a.textContent, a.getAttribute("href"), String(r.top < innerHeight / 2)];
	})()`))
	if err != nil || len(got) != 4 {
		t.Fatalf("reading the instructions: %v, %v", got, err)
	}
	if !strings.HasPrefix(got[0], "Dial *110# and choose") || got[1] != "*110#" || got[2] != "tel:*110%23" || got[3] != "true" {
		t.Fatalf("instructions %q, code %q, address %q, in the top half %s; want Paystack's words with *110# to dial, at the top", got[0], got[1], got[2], got[3])
	}
	screenshot(t, ctx, "recover-instructions")
}
