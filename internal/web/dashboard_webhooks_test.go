package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/cauri-pay/cauri/webhook"
)

// TestDashboard_TestWebhook: without an address for the data shown the
// button is disabled with the reason and a post is refused (409); with
// one, a post sends one payment.completed marked as a test, signed with
// the mode's secret key whatever the event selection, and it shows in the
// delivery log with the receiver's answer; a refused one is failed at once,
// not retried; a form without its CSRF token is 403; the 31st in a minute
// is 429.
func TestDashboard_TestWebhook(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"] // the workspace is unverified: the dashboard shows test data
		addUser(t, st, "adjoa@example.com", "correct horse battery", e.ws.ID)
		b := e.newBrowserish()
		b.login("adjoa@example.com", "correct horse battery")

		_, body := b.get("/dashboard/webhooks")
		if !strings.Contains(body, `id="send-test" class="plain" disabled`) || !strings.Contains(body, `id="test-disabled"`) {
			t.Fatalf("without an address the test button is not disabled with its reason:\n%s", section(t, body, "test-webhook", "section"))
		}
		res, body := b.post("/dashboard/webhooks/test", url.Values{"csrf": {b.csrf()}})
		if res.StatusCode != 409 || !strings.Contains(body, "No webhook URL is set for test data") {
			t.Fatalf("test without an address = %d:\n%s", res.StatusCode, body)
		}

		answer := 200
		rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(answer) })
		// Only payment.failed selected: the test is sent all the same.
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url, "events": []string{"payment.failed"}})
		if res, _ := b.post("/dashboard/webhooks/test", url.Values{}); res.StatusCode != 403 {
			t.Fatalf("test without CSRF = %d; want 403", res.StatusCode)
		}
		if res, _ := b.post("/dashboard/webhooks/test", url.Values{"csrf": {b.csrf()}}); res.StatusCode != 303 {
			t.Fatalf("test = %d; want 303", res.StatusCode)
		}
		req := rc.wait(1)[0]
		if err := webhook.Verify(req.body, req.header, key, e.clock.Now()); err != nil {
			t.Fatalf("the test webhook does not verify with the test secret key: %v", err)
		}
		if err := webhook.Verify(req.body, req.header, e.keys["live_secret"], e.clock.Now()); err == nil {
			t.Fatal("the test webhook verifies with the live secret key")
		}
		data := req.event["data"].(map[string]any)
		md, _ := data["metadata"].(map[string]any)
		if req.event["event"] != "payment.completed" || req.event["livemode"] != false || md["cauri_test_webhook"] != "true" ||
			data["status"] != "SUCCESS" {
			t.Fatalf("test webhook body = %s", req.body)
		}
		list := e.deliveries(key, "")
		if len(list) != 1 || list[0]["id"] != req.header.Get(webhook.HeaderDelivery) {
			t.Fatalf("deliveries = %v; want the test's", list)
		}
		did := list[0]["id"].(string)
		waitFor(t, "the test delivered", func() bool { return e.delivery(key, did).str("status") == "delivered" })
		_, body = b.get("/dashboard/webhooks")
		if row := section(t, body, "deliveries", "table"); !strings.Contains(row, `data-id="`+did+`"`) || !strings.Contains(row, "delivered (1)") ||
			!strings.Contains(row, "test webhook") || !strings.Contains(row, "200 OK") {
			t.Fatalf("the log after the test:\n%s", row)
		}
		if !strings.Contains(section(t, body, "test-webhook", "section"), rc.url) {
			t.Fatal("the page does not say where the test goes")
		}

		answer = 500
		if res, _ := b.post("/dashboard/webhooks/test", url.Values{"csrf": {b.csrf()}}); res.StatusCode != 303 {
			t.Fatalf("second test = %d; want 303", res.StatusCode)
		}
		rc.wait(2)
		var failed map[string]any
		waitFor(t, "the refused test failed", func() bool {
			for _, d := range e.deliveries(key, "?status=failed") {
				failed = d
			}
			return failed != nil
		})
		if failed["attempts"] != 1.0 || failed["last_status_code"] != 500.0 || failed["next_attempt_at"] != nil {
			t.Fatalf("refused test = %v; want failed after its one attempt", failed)
		}

		// Limited as resends are, 30 a minute per workspace: three tests
		// counted so far (the refused one included).
		for i := 4; i <= 30; i++ {
			if res, _ := b.post("/dashboard/webhooks/test", url.Values{"csrf": {b.csrf()}}); res.StatusCode != 303 {
				t.Fatalf("test %d = %d; want 303", i, res.StatusCode)
			}
		}
		if res, _ := b.post("/dashboard/webhooks/test", url.Values{"csrf": {b.csrf()}}); res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
			t.Fatalf("test 31 in a minute = %d (Retry-After %q); want 429", res.StatusCode, res.Header.Get("Retry-After"))
		}
	})
}

// TestDashboard_TestWebhookLeasedElsewhere: a test webhook another node's
// worker leased first is left to it: SendNow sends nothing and returns the
// delivery pending (one request per test, never two).
func TestDashboard_TestWebhookLeasedElsewhere(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var worker *delivery.Worker
		// The env's worker looks once, at its start, then sleeps: only the
		// claim below holds the delivery.
		e := newEnv(t, st, func(d *Deps) { worker, d.Webhooks.Worker.Poll = d.Webhooks.Worker, time.Hour })
		rc := newReceiver(t, status(200))
		ctx := context.Background()
		now := e.clock.Now()
		ev := &cauri.Event{ID: cauri.NewID("evt_"), WorkspaceID: e.ws.ID, Type: cauri.EventPaymentCompleted, Data: []byte(`{}`), CreatedAt: now}
		id, err := st.InsertTestEvent(ctx, ev, rc.url, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, claimed, err := st.ClaimDeliveries(ctx, []string{id}, now, now.Add(time.Hour)); err != nil || len(claimed) != 1 {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		d, err := worker.SendNow(ctx, id)
		if err != nil || d.ID != id || d.Status != cauri.DeliveryPending || d.Attempts != 0 {
			t.Fatalf("SendNow of a leased delivery = %+v, %v; want it pending, unsent", d, err)
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("%d requests; want none from SendNow", n)
		}
	})
}
