package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

// TestCancelOnPage: the customer gives up on the hosted page; the session
// becomes CANCELLED with one payment.cancelled event, unless a payment is
// waiting on the phone.
func TestCancelOnPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Live shop", true)
		g, _, _ := e.addSimulatedGateway(ws, "SN")
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		cancel := func(id string) int {
			t.Helper()
			res, err := noRedirect.PostForm(e.url+"/pay/"+id, url.Values{"cancel": {"1"}, "confirm": {"1"}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		status := func(id string) string {
			return e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...).str("status")
		}
		t.Run("Pending", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000, "cancel_url": "https://shop.example/cart"}`)
			if page := e.do("GET", "/pay/"+id, nil); !strings.Contains(page.raw, `id="cancel-button"`) {
				t.Fatal("the page of a pending session offers no cancel button")
			}
			// The first tap asks, and changes nothing.
			res, err := noRedirect.PostForm(e.url+"/pay/"+id, url.Values{"cancel": {"1"}})
			if err != nil {
				t.Fatal(err)
			}
			asked, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(string(asked), `id="cancel-confirm"`) || !strings.Contains(string(asked), `name="confirm" value="1"`) ||
				strings.Contains(string(asked), `id="pay-button"`) || status(id) != "PENDING" {
				t.Fatalf("a first tap on cancel = %d, %s; want the question asked, the session PENDING:\n%s", res.StatusCode, status(id), asked)
			}
			if code := cancel(id); code != http.StatusSeeOther {
				t.Fatalf("cancel = %d; want 303 back to the page", code)
			}
			if got := status(id); got != "CANCELLED" {
				t.Fatalf("status = %s; want CANCELLED", got)
			}
			page := e.do("GET", "/pay/"+id, nil)
			if !strings.Contains(page.raw, `data-status="CANCELLED"`) || !strings.Contains(page.raw, `href="https://shop.example/cart"`) ||
				strings.Contains(page.raw, "cancel-button") || strings.Contains(page.raw, "pay-button") {
				t.Fatal("the cancelled page does not say so, send the customer to cancel_url, or still offers to pay")
			}
			if code := cancel(id); code != http.StatusConflict {
				t.Fatalf("cancel again = %d; want 409", code)
			}
			wantError(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "771234567"}), 409, "")
			events, _ := st.SessionEvents(context.Background(), id)
			if len(events) != 1 || events[0].Type != "payment.cancelled" {
				t.Fatalf("events = %+v; want one payment.cancelled", events)
			}
		})
		t.Run("ErrPaymentWaiting", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "771234567"}), 200)
			if page := e.do("GET", "/pay/"+id, nil); strings.Contains(page.raw, "cancel-button") {
				t.Fatal("the page offers to cancel while a payment waits on the phone")
			}
			if code := cancel(id); code != http.StatusConflict {
				t.Fatalf("cancel while a payment waits = %d; want 409", code)
			}
			if got := status(id); got != "PENDING" {
				t.Fatalf("status = %s; want PENDING", got)
			}
		})
		t.Run("TestSession", func(t *testing.T) {
			id := e.mustSession(keys["test_public"], `{"amount": 5000}`)
			if code := cancel(id); code != http.StatusSeeOther {
				t.Fatalf("cancel = %d", code)
			}
			if got := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["test_secret"])...).str("status"); got != "CANCELLED" {
				t.Fatalf("status = %s; want CANCELLED", got)
			}
		})
		t.Run("NodeClockBehind", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			e.clock.Add(-time.Minute) // the node serving the page lags the one that created the session
			defer e.clock.Add(time.Minute)
			if code := cancel(id); code != http.StatusSeeOther {
				t.Fatalf("cancel = %d; want 303", code)
			}
		})
		t.Run("ErrUnknown", func(t *testing.T) {
			if code := cancel("cs_" + strings.Repeat("a", 32)); code != http.StatusNotFound {
				t.Fatalf("cancel of an unknown session = %d; want 404", code)
			}
		})
	})
}

// TestBrowser_Cancel: the customer taps cancel on the live page, is asked
// by the page to confirm (declines: nothing changes, the methods are back),
// taps again, confirms, and is sent back to the merchant's cancel_url.
func TestBrowser_Cancel(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	e.addSimulatedGateway(ws, "SN")
	ctx := browser(t)
	cancelURL := e.url + "/healthz?from=cancel"
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "cancel_url": cancelURL})
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/pay/"+id), chromedp.Click(chromedp.ID("cancel-button")),
		chromedp.WaitVisible(chromedp.ID("cancel-confirm"))); err != nil {
		t.Fatal(err)
	}
	if asked, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("cancel-confirm"))); !strings.Contains(asked, "Cancel this payment") {
		t.Errorf("the page asks %q; want whether to cancel", asked)
	}
	if s, _ := e.store.Session(context.Background(), id); s.Status != cauri.SessionPending {
		t.Fatalf("session after the first tap = %s; want PENDING", s.Status)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("cancel-no")), chromedp.WaitVisible(chromedp.ID("pay-button"))); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.store.Session(context.Background(), id); s.Status != cauri.SessionPending {
		t.Fatalf("session after a declined confirmation = %s; want PENDING", s.Status)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("cancel-button")),
		chromedp.Click(chromedp.ID("cancel-yes")),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-status="CANCELLED"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.store.Session(context.Background(), id); s.Status != cauri.SessionCancelled {
		t.Fatalf("session after the confirmation = %s; want CANCELLED", s.Status)
	}
	waitLocation(t, ctx, cancelURL)
}
