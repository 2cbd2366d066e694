package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
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
