package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/cauri-pay/cauri/webhook"
)

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
	event  map[string]any
}

// receiver is a merchant's webhook endpoint on 127.0.0.1. answer decides
// each response from the number of the request (0 first). Every body is
// checked against the webhook payload schemas of openapi.yaml.
type receiver struct {
	t      *testing.T
	url    string
	mu     sync.Mutex
	got    []received
	answer func(n int, w http.ResponseWriter)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	rc := &receiver{t: t, answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("webhook body is not JSON: %s", body)
		}
		checkWebhookSchema(t, r.Header.Get(webhook.HeaderEvent), ev)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: body, event: ev})
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w)
		}
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/hooks/cauri"
	return rc
}

func checkWebhookSchema(t *testing.T, event string, body map[string]any) {
	doc, err := contractDoc()
	if err != nil {
		t.Fatal(err)
	}
	item := doc.Webhooks[event]
	if item == nil || item.Post == nil {
		t.Errorf("webhook %q is not in openapi.yaml", event)
		return
	}
	schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(body); err != nil {
		t.Errorf("webhook %s body does not match openapi.yaml: %v", event, err)
	}
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// wait returns once n requests came.
func (rc *receiver) wait(n int) []received {
	rc.t.Helper()
	waitFor(rc.t, fmt.Sprintf("%d webhook requests", n), func() bool { return len(rc.requests()) >= n })
	return rc.requests()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func status(code int) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.WriteHeader(code) }
}

func (e *env) setWebhook(key string, body any) response {
	e.t.Helper()
	r := e.do("PATCH", "/v1/config/webhook", body, bearer(key)...)
	wantStatus(e.t, r, 200)
	return r
}

// deliveries lists a key's deliveries of a session.
func (e *env) deliveries(key, query string) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/webhooks/deliveries"+query, nil, bearer(key)...)
	wantStatus(e.t, r, 200)
	var out []map[string]any
	for _, d := range r.body["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	if r.str("object") != "list" || int(r.body["count"].(float64)) != len(out) {
		e.t.Fatalf("envelope = %s", r.raw)
	}
	return out
}

func (e *env) delivery(key, id string) response {
	e.t.Helper()
	return e.do("GET", "/v1/webhooks/deliveries/"+id, nil, bearer(key)...)
}

func (e *env) settle(id, issue string) {
	e.t.Helper()
	wantStatus(e.t, e.do("POST", "/checkout/sandbox", map[string]string{"transactionId": id, "issue": issue}), 200)
}

func TestWebhookConfig(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		live, test := e.keys["live_secret"], e.keys["test_secret"]
		t.Run("Default", func(t *testing.T) {
			r := e.do("GET", "/v1/config/webhook", nil, bearer(live)...)
			wantStatus(t, r, 200)
			if r.body["success"] != true || r.body["webhookUrl"] != nil || r.body["testWebhookUrl"] != nil ||
				len(r.body["events"].([]any)) != 6 || len(r.body["available_events"].([]any)) != 6 {
				t.Fatalf("default config = %s", r.raw)
			}
		})
		t.Run("SetAndRemove", func(t *testing.T) {
			r := e.setWebhook(live, map[string]any{"webhookUrl": "http://127.0.0.1:9/live"})
			if r.str("webhookUrl") != "http://127.0.0.1:9/live" || r.body["testWebhookUrl"] != nil {
				t.Fatalf("after setting the live URL: %s", r.raw)
			}
			r = e.setWebhook(test, map[string]any{"webhookUrl": "http://127.0.0.1:9/test"}) // a test key's default mode is test
			if r.str("testWebhookUrl") != "http://127.0.0.1:9/test" || r.str("webhookUrl") != "http://127.0.0.1:9/live" {
				t.Fatalf("after setting the test URL: %s", r.raw)
			}
			r = e.setWebhook(live, map[string]any{"webhookUrl": "", "mode": "test"})
			if r.body["testWebhookUrl"] != nil || r.str("webhookUrl") == "" {
				t.Fatalf("after removing the test URL: %s", r.raw)
			}
			if g := e.do("GET", "/v1/config/webhook", nil, bearer(test)...); g.str("webhookUrl") != "http://127.0.0.1:9/live" {
				t.Fatalf("GET after PATCH = %s", g.raw)
			}
		})
		t.Run("Events", func(t *testing.T) {
			r := e.setWebhook(live, map[string]any{"events": []string{"payment.failed", "payment.completed", "payment.failed"}})
			if got := fmt.Sprint(r.body["events"]); got != "[payment.completed payment.failed]" {
				t.Fatalf("events = %s", got)
			}
			r = e.setWebhook(live, map[string]any{"events": cauri.EventNames})
			if len(r.body["events"].([]any)) != 6 {
				t.Fatalf("complete selection = %v", r.body["events"])
			}
			wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"events": []string{"payment.completed", "payment.refunded"}}, bearer(live)...), 400, `"payment.refunded" is not an event`)
			wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"events": []string{}}, bearer(live)...), 400, "at least one")
		})
		t.Run("EventsPerMode", func(t *testing.T) {
			// A test key selects the test events only: production keeps
			// receiving what it selected (issue 16: modes are walls).
			r := e.setWebhook(test, map[string]any{"events": []string{"transfer.failed"}})
			if got := fmt.Sprint(r.body["events"]); got != "[transfer.failed]" {
				t.Fatalf("test events = %s", got)
			}
			if g := e.do("GET", "/v1/config/webhook", nil, bearer(live)...); len(g.body["events"].([]any)) != 6 {
				t.Fatalf("live events after a test key's selection = %v; want all six still", g.body["events"])
			}
			if g := e.do("GET", "/v1/config/webhook", nil, bearer(test)...); fmt.Sprint(g.body["events"]) != "[transfer.failed]" {
				t.Fatalf("test events read back = %v", g.body["events"])
			}
			// The selections decide the deliveries: a test payment is not
			// sent, a live one is.
			e.setWebhook(live, map[string]any{"webhookUrl": "http://127.0.0.1:9/live"})
			id := e.mustSession(e.keys["test_public"], `{"amount": 1000}`)
			e.settle(id, "succes")
			if got := e.deliveries(test, "?transaction_id="+id); len(got) != 0 {
				t.Fatalf("deliveries of a test payment.completed = %v; want none (not selected for test)", got)
			}
			cfg, _ := st.WebhookConfig(context.Background(), e.ws.ID)
			if !cfg.Selects(cauri.EventPaymentCompleted, true) || cfg.Selects(cauri.EventPaymentCompleted, false) {
				t.Fatalf("selections = %+v; want payment.completed live only", cfg)
			}
			e.setWebhook(test, map[string]any{"events": cauri.EventNames})
		})
		t.Run("Errors", func(t *testing.T) {
			wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"webhookUrl": "http://127.0.0.1:9/x", "mode": "live"}, bearer(test)...), 403, "test key")
			wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"mode": "staging"}, bearer(live)...), 400, "mode")
			wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"webhookUrl": 5}, bearer(live)...), 400, "webhookUrl must be a string")
			wantError(t, e.do("GET", "/v1/config/webhook", nil, bearer(e.keys["test_public"])...), 401, "secret key")
			wantError(t, e.do("GET", "/v1/config/webhook", nil), 401, "Missing API key")
		})
	})
}

// fakeDNS answers for the test's names; nothing leaves the machine.
type fakeDNS map[string][]string

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range f[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return out, nil
}

var testDNS = fakeDNS{
	"shop.example":     {"93.184.216.34"},
	"v6.shop.example":  {"2606:4700::1111"},
	"internal.example": {"10.1.2.3"},
	"mixed.example":    {"93.184.216.34", "192.168.1.20"},
	"metadata.example": {"169.254.169.254"},
}

func TestWebhookConfig_AddressSafety(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), guardWith(testDNS)) // nothing exempt
	key := e.keys["live_secret"]
	for _, tc := range []struct{ name, url string }{
		{"Loopback", "https://127.0.0.1/hook"},
		{"LoopbackOtherPort", "https://127.0.0.2:8443/hook"},
		{"LoopbackV6", "https://[::1]/hook"},
		{"RFC1918a", "https://10.0.0.1/hook"},
		{"RFC1918b", "https://172.16.5.4/hook"},
		{"RFC1918c", "https://192.168.1.1/hook"},
		{"LinkLocalMetadata", "https://169.254.169.254/latest/meta-data"},
		{"LinkLocalV6", "https://[fe80::1]/hook"},
		{"CGNAT", "https://100.64.0.1/hook"},
		{"UniqueLocalV6", "https://[fd12:3456::1]/hook"},
		{"MappedPrivate", "https://[::ffff:10.0.0.1]/hook"},
		{"MappedLoopback", "https://[::ffff:127.0.0.1]/hook"},
		{"Multicast", "https://224.0.0.1/hook"},
		{"MulticastV6", "https://[ff02::1]/hook"},
		{"Unspecified", "https://0.0.0.0/hook"},
		{"UnspecifiedV6", "https://[::]/hook"},
		{"Decimal", "https://2130706433/hook"},
		{"Octal", "https://0177.0.0.1/hook"},
		{"Hex", "https://0x7f.0.0.1/hook"},
		{"HexWhole", "https://0x7f000001/hook"},
		{"Short", "https://127.1/hook"},
		{"NameToPrivate", "https://internal.example/hook"},
		{"NameToMetadata", "https://metadata.example/hook"},
		{"NameWithOnePrivateAddress", "https://mixed.example/hook"},
		{"LocalhostName", "https://localhost/hook"},
		{"PlainHTTP", "http://shop.example/hook"},
		{"NotHTTP", "ftp://shop.example/hook"},
		{"Relative", "/hook"},
		{"Unresolvable", "https://nowhere.example/hook"},
		{"PortZero", "https://shop.example:0/hook"},
		{"PortTooHigh", "https://shop.example:65536/hook"},
		{"Credentials", "https://user:pass@shop.example/hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"webhookUrl": tc.url}, bearer(key)...), 400, "webhookUrl")
		})
	}
	// The refusals a local receiver meets name the setting that allows it.
	for _, url := range []string{"http://127.0.0.1:9000/hook", "https://127.0.0.1/hook", "https://192.168.1.1/hook"} {
		wantError(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"webhookUrl": url}, bearer(key)...), 400, "CAURI_WEBHOOK_ALLOWED_CIDRS")
	}
	// A body that is not an object (null was a PATCH that changed nothing, 200).
	for _, body := range []string{"null", "[]", `"https://shop.example/hook"`} {
		wantError(t, e.do("PATCH", "/v1/config/webhook", body, bearer(key)...), 400, "JSON object")
	}
	for _, ok := range []string{"https://shop.example/hook", "https://shop.example:8443/hook", "https://v6.shop.example/hook", "https://93.184.216.34/x", "https://[2606:4700::1111]/x"} {
		if r := e.do("PATCH", "/v1/config/webhook", map[string]any{"webhookUrl": ok}, bearer(key)...); r.status != 200 {
			t.Errorf("%s refused: %s", ok, r.raw)
		}
	}
}

func TestWebhookDelivery_SignedPerMode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Verified shop", true)
		liveRC, testRC := newReceiver(t, status(200)), newReceiver(t, status(204))
		e.setWebhook(keys["live_secret"], map[string]any{"webhookUrl": liveRC.url})
		e.setWebhook(keys["test_secret"], map[string]any{"webhookUrl": testRC.url})

		t.Run("TestEventToTestURL", func(t *testing.T) {
			id := e.mustSession(keys["test_secret"], `{"amount": 2500, "customer_email": "awa@example.com", "metadata": {"order_id": "A-7"}}`)
			e.settle(id, "succes")
			req := testRC.wait(1)[0]
			if err := webhook.Verify(req.body, req.header, keys["test_secret"], e.clock.Now()); err != nil {
				t.Fatalf("test event does not verify with the test secret key: %v", err)
			}
			if err := webhook.Verify(req.body, req.header, keys["live_secret"], e.clock.Now()); err == nil {
				t.Fatal("test event verifies with the live secret key")
			}
			ev, data := req.event, req.event["data"].(map[string]any)
			if ev["event"] != "payment.completed" || ev["livemode"] != false || !strings.HasPrefix(ev["id"].(string), "evt_") ||
				ev["timestamp"] != "2026-11-22T10:00:00.000Z" || data["id"] != id || data["status"] != "SUCCESS" ||
				data["order_id"] != "A-7" || data["customer_email"] != "awa@example.com" || data["amount"] != 2500.0 {
				t.Fatalf("body = %s", req.body)
			}
			h := req.header
			list := e.deliveries(keys["test_secret"], "?transaction_id="+id)
			if len(list) != 1 {
				t.Fatalf("deliveries = %v", list)
			}
			d := list[0]
			if h.Get("X-Service-Event") != "payment.completed" || h.Get("X-Service-Delivery") != d["id"] || h.Get("User-Agent") != "Cauri-Webhooks/2" ||
				h.Get("X-Service-Timestamp") != fmt.Sprint(e.clock.Now().Unix()) || h.Get("Webhook-Id") != d["id"] {
				t.Fatalf("headers = %v", h)
			}
			waitFor(t, "delivered", func() bool { return e.delivery(keys["test_secret"], d["id"].(string)).str("status") == "delivered" })
			got := e.delivery(keys["test_secret"], d["id"].(string))
			if got.body["attempts"] != 1.0 || got.body["last_status_code"] != 204.0 || got.body["delivered_at"] == nil ||
				got.body["next_attempt_at"] != nil || got.body["livemode"] != false || got.str("url") != testRC.url || got.str("transaction_id") != id {
				t.Fatalf("delivery = %s", got.raw)
			}
			if len(liveRC.requests()) != 0 {
				t.Fatal("the live URL got a test event")
			}
		})
		t.Run("TestEventToLiveURLWithoutTestURL", func(t *testing.T) {
			e.setWebhook(keys["test_secret"], map[string]any{"webhookUrl": ""})
			id := e.mustSession(keys["test_secret"], `{"amount": 100}`)
			e.settle(id, "echec")
			req := liveRC.wait(1)[0]
			if req.event["livemode"] != false || req.event["event"] != "payment.failed" {
				t.Fatalf("body = %s", req.body)
			}
			if err := webhook.Verify(req.body, req.header, keys["test_secret"], e.clock.Now()); err != nil {
				t.Fatalf("a test event to the live URL is signed with the test key: %v", err)
			}
		})
		t.Run("LiveEvent", func(t *testing.T) {
			id := e.mustSession(keys["live_secret"], `{"amount": 9000}`)
			// What an aggregator's confirmation does (gateways come later).
			_, err := st.UpdateSession(context.Background(), id, func(s *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
				now := e.clock.Now()
				s.Status, s.Provider, s.UpdatedAt, s.CompletedAt = cauri.SessionSuccess, "pawapay", now, &now
				data, _ := json.Marshal(s.Object(e.srv.PayURL))
				return cauri.SessionEvent(s, data, now), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			e.srv.Webhooks.Worker.Wake()
			req := liveRC.wait(2)[1]
			if req.event["livemode"] != true {
				t.Fatalf("body = %s", req.body)
			}
			if err := webhook.Verify(req.body, req.header, keys["live_secret"], e.clock.Now()); err != nil {
				t.Fatalf("live event does not verify with the live secret key: %v", err)
			}
			if n := len(e.deliveries(keys["live_secret"], "")); n != 1 {
				t.Fatalf("the live key sees %d deliveries; want only the live one", n)
			}
			if n := len(e.deliveries(keys["test_secret"], "")); n != 2 {
				t.Fatalf("the test key sees %d deliveries; want the two test ones", n)
			}
			_ = ws
		})
		t.Run("UnselectedEventOrNoURL", func(t *testing.T) {
			e.setWebhook(keys["test_secret"], map[string]any{"events": []string{"payment.failed"}}) // the test events' selection
			id := e.mustSession(keys["test_secret"], `{"amount": 100}`)
			e.settle(id, "succes")
			if n := len(e.deliveries(keys["test_secret"], "?transaction_id="+id)); n != 0 {
				t.Fatalf("%d deliveries of an unselected event", n)
			}
			e.setWebhook(keys["live_secret"], map[string]any{"webhookUrl": "", "events": cauri.EventNames})
			id = e.mustSession(keys["test_secret"], `{"amount": 100}`)
			e.settle(id, "echec")
			if n := len(e.deliveries(keys["test_secret"], "?transaction_id="+id)); n != 0 {
				t.Fatalf("%d deliveries without a URL", n)
			}
		})
	})
}

func TestWebhookDelivery_RetrySchedule(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		failing := true
		var mu sync.Mutex
		rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
			mu.Lock()
			defer mu.Unlock()
			if failing {
				w.WriteHeader(500)
			}
		})
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url})
		id := e.mustSession(key, `{"amount": 100}`)
		e.settle(id, "succes")
		rc.wait(1)
		did := e.deliveries(key, "")[0]["id"].(string)
		for n := 1; n < 10; n++ {
			var d response
			waitFor(t, "attempt recorded", func() bool { d = e.delivery(key, did); return d.body["attempts"] == float64(n) })
			step := cauri.DefaultRetrySchedule[n]
			want := e.clock.Now().Add(step).UTC().Format(cauri.TimeFormat)
			if d.str("status") != "pending" || d.str("next_attempt_at") != want || d.body["last_status_code"] != 500.0 {
				t.Fatalf("after attempt %d: %s; want pending, next at %s", n, d.raw, want)
			}
			e.clock.Add(step - time.Second)
			e.srv.Webhooks.Worker.Wake()
			time.Sleep(30 * time.Millisecond)
			if got := len(rc.requests()); got != n {
				t.Fatalf("attempt %d came %v early", n+1, time.Second)
			}
			e.clock.Add(time.Second)
			e.srv.Webhooks.Worker.Wake()
			rc.wait(n + 1)
		}
		var d response
		waitFor(t, "failed", func() bool { d = e.delivery(key, did); return d.str("status") == "failed" })
		if d.body["attempts"] != 10.0 || d.body["max_attempts"] != 10.0 || d.body["next_attempt_at"] != nil {
			t.Fatalf("after the last attempt: %s", d.raw)
		}
		for i, req := range rc.requests() {
			if req.header.Get("X-Service-Delivery") != did {
				t.Fatalf("attempt %d carries delivery id %q; want %s on every attempt", i+1, req.header.Get("X-Service-Delivery"), did)
			}
		}
		notes, _, err := st.UnreadNotifications(context.Background(), e.ws.ID, false, 10)
		if err != nil || len(notes) != 1 || notes[0].DeliveryID != did || notes[0].Kind != store.NotificationDeliveryFailed {
			t.Fatalf("notifications = %+v, %v; want one for the failed delivery", notes, err)
		}
		// The dashboard shows the notification and the failed delivery.
		addUser(t, st, "adjoa@example.com", "correct horse battery", e.ws.ID)
		b := e.newBrowserish()
		b.login("adjoa@example.com", "correct horse battery")
		b.post("/dashboard/workspace", url.Values{"workspace": {e.ws.ID}, "mode": {"test"}, "csrf": {b.csrf()}})
		t.Run("Dashboard", func(t *testing.T) {
			res, body := b.get("/dashboard/webhooks")
			if res.StatusCode != 200 || !strings.Contains(body, `class="notice notification" data-id="`+notes[0].ID) ||
				!strings.Contains(body, `<tr data-id="`+did) || !strings.Contains(body, "failed (10)") || !strings.Contains(body, "500 Internal Server Error") {
				t.Fatalf("webhooks page = %d %s", res.StatusCode, body)
			}
			if !strings.Contains(body, `id="acknowledge-all"`) || strings.Contains(body, `id="unread"`) {
				t.Fatalf("webhooks page: a dismiss-all button and no count (all unread are shown) expected: %s", body)
			}
			if res, _ := b.post("/dashboard/notifications/read", url.Values{}); res.StatusCode != 403 {
				t.Fatalf("dismiss all without CSRF = %d", res.StatusCode)
			}
			if res, _ := b.post("/dashboard/notifications/"+notes[0].ID+"/read", url.Values{}); res.StatusCode != 403 {
				t.Fatalf("dismiss without CSRF = %d", res.StatusCode)
			}
			if res, _ := b.post("/dashboard/notifications/"+notes[0].ID+"/read", url.Values{"csrf": {b.csrf()}}); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("dismiss = %d", res.StatusCode)
			}
			if _, body := b.get("/dashboard/webhooks"); strings.Contains(body, "notification") {
				t.Fatal("a dismissed notification is still shown")
			}
			if res, _ := b.post("/dashboard/notifications/"+notes[0].ID+"/read", url.Values{"csrf": {b.csrf()}}); res.StatusCode != 404 {
				t.Fatalf("dismiss twice = %d", res.StatusCode)
			}
			if res, _ := b.post("/dashboard/notifications/read", url.Values{"csrf": {b.csrf()}}); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("dismiss all = %d", res.StatusCode)
			}
			// The configuration form: a private address is refused, shown on the page.
			if res, body := b.post("/dashboard/webhooks", url.Values{"url": {"http://10.0.0.1/hook"}, "events": {"payment.completed"}, "csrf": {b.csrf()}}); res.StatusCode != 400 || !strings.Contains(body, `id="error"`) {
				t.Fatalf("private address = %d", res.StatusCode)
			}
			if res, _ := b.post("/dashboard/webhooks", url.Values{"url": {rc.url}, "events": {}, "csrf": {b.csrf()}}); res.StatusCode != 400 {
				t.Fatalf("no event = %d", res.StatusCode)
			}
		})
		t.Run("ResendFailed", func(t *testing.T) {
			mu.Lock()
			failing = false
			mu.Unlock()
			e.clock.Add(time.Hour)
			r := e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(key)...)
			wantStatus(t, r, 200)
			if r.str("status") != "delivered" || r.body["attempts"] != 11.0 || r.body["last_status_code"] != 200.0 {
				t.Fatalf("resend of a failed delivery = %s", r.raw)
			}
			last := rc.requests()[10]
			if last.header.Get("X-Service-Timestamp") == rc.requests()[9].header.Get("X-Service-Timestamp") {
				t.Fatal("resend reused the old timestamp")
			}
			if err := webhook.Verify(last.body, last.header, key, e.clock.Now()); err != nil {
				t.Fatalf("resend signature: %v", err)
			}
		})
		t.Run("DashboardResend", func(t *testing.T) {
			if res, _ := b.post("/dashboard/deliveries/"+did+"/resend", url.Values{"csrf": {b.csrf()}}); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("resend from the dashboard = %d", res.StatusCode)
			}
			if _, body := b.get("/dashboard/webhooks"); !strings.Contains(body, "delivered (12)") {
				t.Fatalf("after the dashboard's resend: %s", body)
			}
		})
	})
}

func TestWebhookDelivery_RetryAfter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		rc := newReceiver(t, func(n int, w http.ResponseWriter) {
			switch n {
			case 0:
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(429)
			case 1:
				w.Header().Set("Retry-After", "100000")
				w.WriteHeader(503)
			default:
				w.Header().Set("Retry-After", "60")
				w.WriteHeader(503)
			}
		})
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url})
		e.settle(e.mustSession(key, `{"amount": 100}`), "succes")
		rc.wait(1)
		did := e.deliveries(key, "")[0]["id"].(string)
		for n, wantStep := range []time.Duration{2 * time.Minute, 10 * time.Minute, 15 * time.Minute} {
			var d response
			waitFor(t, "attempt recorded", func() bool { d = e.delivery(key, did); return d.body["attempts"] == float64(n+1) })
			if want := e.clock.Now().Add(wantStep).UTC().Format(cauri.TimeFormat); d.str("next_attempt_at") != want {
				t.Fatalf("after answer %d: next at %s; want %s (Retry-After, at most twice the schedule's step)", n+1, d.str("next_attempt_at"), want)
			}
			e.clock.Add(wantStep)
			e.srv.Webhooks.Worker.Wake()
			rc.wait(n + 2)
		}
	})
}

func TestWebhookDelivery_ResendAndList(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		var mu sync.Mutex
		code := 200
		rc := newReceiver(t, func(_ int, w http.ResponseWriter) { mu.Lock(); w.WriteHeader(code); mu.Unlock() })
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url})
		paid, failed := e.mustSession(key, `{"amount": 100}`), e.mustSession(key, `{"amount": 200}`)
		e.settle(paid, "succes")
		rc.wait(1)
		e.clock.Add(time.Second)
		e.settle(failed, "echec")
		rc.wait(2)
		waitFor(t, "two delivered", func() bool { return len(e.deliveries(key, "?status=delivered")) == 2 })

		t.Run("List", func(t *testing.T) {
			all := e.deliveries(key, "")
			if len(all) != 2 || all[0]["transaction_id"] != failed || all[1]["transaction_id"] != paid {
				t.Fatalf("list = %v; want newest first", all)
			}
			if l := e.deliveries(key, "?event=payment.failed"); len(l) != 1 || l[0]["transaction_id"] != failed {
				t.Fatalf("event filter = %v", l)
			}
			if l := e.deliveries(key, "?limit=1"); len(l) != 1 {
				t.Fatalf("limit = %v", l)
			}
			if l := e.deliveries(key, "?status=failed"); len(l) != 0 {
				t.Fatalf("status filter = %v", l)
			}
			for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?status=lost", "?event=payment.refunded"} {
				wantStatus(t, e.do("GET", "/v1/webhooks/deliveries"+q, nil, bearer(key)...), 400)
			}
			if n := len(e.deliveries(e.keys["live_secret"], "")); n != 2 {
				t.Fatalf("unverified workspace, live key: %d deliveries; its mode is test, want 2", n)
			}
		})
		did := e.deliveries(key, "?transaction_id="+paid)[0]["id"].(string)
		t.Run("ResendDelivered", func(t *testing.T) {
			e.clock.Add(10 * time.Minute)
			r := e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(key)...)
			wantStatus(t, r, 200)
			got := rc.wait(3)[2]
			if got.header.Get("X-Service-Delivery") != did || got.header.Get("X-Service-Timestamp") != fmt.Sprint(e.clock.Now().Unix()) {
				t.Fatalf("resend headers = %v", got.header)
			}
			if r.body["attempts"] != 2.0 || r.str("status") != "delivered" {
				t.Fatalf("after resend: %s", r.raw)
			}
		})
		t.Run("ResendFailingKeepsState", func(t *testing.T) {
			mu.Lock()
			code = 500
			mu.Unlock()
			r := e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(key)...)
			if r.str("status") != "delivered" || r.body["last_status_code"] != 500.0 || r.body["attempts"] != 3.0 {
				t.Fatalf("failed resend of a delivered delivery = %s; want it still delivered, the attempt recorded", r.raw)
			}
		})
		t.Run("ErrOthers", func(t *testing.T) {
			_, other := e.newWorkspace("Other", false)
			wantStatus(t, e.delivery(other["test_secret"], did), 404)
			wantStatus(t, e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(other["test_secret"])...), 404)
			wantStatus(t, e.delivery(key, "whd_"+strings.Repeat("a", 32)), 404)
			wantStatus(t, e.delivery(key, "nope"), 404)
		})
		t.Run("ResendRateLimit", func(t *testing.T) {
			mu.Lock()
			code = 200
			mu.Unlock()
			for i := 2; i < 30; i++ { // two resends so far this minute
				wantStatus(t, e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(key)...), 200)
			}
			r := e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(key)...)
			wantError(t, r, 429, "at most 30 a minute per workspace")
			if r.str("code") != "rate_limited" || r.header.Get("Retry-After") == "" {
				t.Fatalf("over the limit = %s (Retry-After %q)", r.raw, r.header.Get("Retry-After"))
			}
		})
	})
}

func TestWebhookDelivery_ConnectTimeGuard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st, guardWith(testDNS)) // loopback not exempt
		rc := newReceiver(t, status(200))
		port := strings.Split(strings.TrimPrefix(rc.url, "http://127.0.0.1:"), "/")[0]
		key := e.keys["test_secret"]
		for i, url := range []string{rc.url, "https://127.0.0.1:" + port + "/x", "https://localhost:" + port + "/x"} {
			// As if the name had resolved to a public address when it was set,
			// and to this one now (DNS rebinding): the connection is refused.
			if _, err := e.store.UpdateWebhookConfig(context.Background(), e.ws.ID, func(c *cauri.WebhookConfig) error { c.TestURL = url; return nil }); err != nil {
				t.Fatal(err)
			}
			id := e.mustSession(key, `{"amount": 100}`)
			e.settle(id, "succes")
			var d map[string]any
			waitFor(t, "attempt", func() bool {
				l := e.deliveries(key, "?transaction_id="+id)
				if len(l) == 1 && l[0]["attempts"] == 1.0 {
					d = l[0]
				}
				return d != nil
			})
			if d["status"] != "pending" || !strings.Contains(fmt.Sprint(d["last_error"]), "not allowed") {
				t.Fatalf("delivery %d to %s = %v; want refused at connect time", i, url, d)
			}
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("the receiver on loopback got %d requests", n)
		}
	})
}

func TestWebhookDelivery_RedirectNotFollowed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		followed := newReceiver(t, status(200))
		rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
			w.Header().Set("Location", followed.url) // or 169.254.169.254: it is never fetched
			w.WriteHeader(302)
		})
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url})
		id := e.mustSession(key, `{"amount": 100}`)
		e.settle(id, "succes")
		rc.wait(1)
		var d map[string]any
		waitFor(t, "attempt", func() bool { d = e.deliveries(key, "")[0]; return d["attempts"] == 1.0 })
		if d["status"] != "pending" || d["last_status_code"] != 302.0 || !strings.Contains(fmt.Sprint(d["last_error"]), "redirect not followed") {
			t.Fatalf("delivery = %v", d)
		}
		if len(followed.requests()) != 0 {
			t.Fatal("the redirect was followed")
		}
	})
}

// TestWebhookDelivery_SlowReceiverHoldsNobodyElse: one merchant's dead
// receiver, with a small backlog or one longer than the worker's list (16
// here), does not hold back another merchant's delivery.
func TestWebhookDelivery_SlowReceiverHoldsNobodyElse(t *testing.T) {
	for _, backlog := range []int{6, 40} {
		t.Run(fmt.Sprint("Backlog", backlog), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, st *store.Store) {
				e := newEnv(t, st, workerWith(4, 2, time.Second))
				release := make(chan struct{})
				var mu sync.Mutex
				var arrivals []time.Time // the slow receiver's requests
				slow := newReceiver(t, func(int, http.ResponseWriter) {
					mu.Lock()
					arrivals = append(arrivals, time.Now())
					mu.Unlock()
					select {
					case <-release:
					case <-time.After(3 * time.Second):
					}
				})
				defer close(release)
				fast := newReceiver(t, status(200))
				_, other := e.newWorkspace("Other shop", false)
				e.setWebhook(e.keys["test_secret"], map[string]any{"webhookUrl": slow.url})
				e.setWebhook(other["test_secret"], map[string]any{"webhookUrl": fast.url})
				for range backlog {
					e.settle(e.mustSession(e.keys["test_secret"], `{"amount": 100}`), "succes")
					e.clock.Add(2 * time.Second) // the sandbox route allows one every 2 s after a burst of 30
				}
				slow.wait(2)
				start := time.Now()
				e.settle(e.mustSession(other["test_secret"], `{"amount": 100}`), "succes")
				fast.wait(1)
				if d := time.Since(start); d > 500*time.Millisecond {
					t.Fatalf("the other workspace waited %v behind a slow receiver's backlog of %d", d, backlog)
				}
				// Until the first attempt times out (1 s) and frees its slot,
				// at most 2 may have started (on a busy machine the backlog's
				// settlements may take longer than that).
				mu.Lock()
				held := 0
				for _, at := range arrivals {
					if at.Before(arrivals[0].Add(900 * time.Millisecond)) {
						held++
					}
				}
				mu.Unlock()
				if held > 2 {
					t.Fatalf("the slow receiver holds %d slots; want at most 2", held)
				}
				// The slow receiver's attempts end at the timeout, recorded as such.
				var d map[string]any
				waitFor(t, "timeout recorded", func() bool {
					for _, x := range e.deliveries(e.keys["test_secret"], "?limit=200") {
						if x["attempts"] == 1.0 {
							d = x
						}
					}
					return d != nil
				})
				if !strings.Contains(fmt.Sprint(d["last_error"]), "timeout") || d["last_status_code"] != nil {
					t.Fatalf("slow delivery = %v; want a timeout", d)
				}
			})
		})
	}
}

// TestWebhookDelivery_ResendRacesWorker: a resend that delivers while the
// worker's own attempt is still waiting on the receiver stays delivered
// when the worker's attempt then fails.
func TestWebhookDelivery_ResendRacesWorker(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		release := make(chan struct{})
		rc := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n == 0 {
				<-release // the worker's attempt hangs...
				w.WriteHeader(500)
			}
		})
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url})
		e.settle(e.mustSession(key, `{"amount": 100}`), "succes")
		rc.wait(1)
		did := e.deliveries(key, "")[0]["id"].(string)
		r := e.do("POST", "/v1/webhooks/deliveries/"+did+"/resend", nil, bearer(key)...) // ...while a resend delivers
		if r.str("status") != "delivered" {
			t.Fatalf("resend = %s", r.raw)
		}
		close(release)
		waitFor(t, "the worker's attempt recorded", func() bool { return e.delivery(key, did).body["attempts"] == 2.0 })
		d := e.delivery(key, did)
		if d.str("status") != "delivered" || d.body["next_attempt_at"] != nil {
			t.Fatalf("after the worker's late failure: %s; want still delivered", d.raw)
		}
	})
}

// TestWebhookDelivery_AddressReadAtEveryAttempt: an attempt goes to the
// address configured when it is made, not when the event happened.
func TestWebhookDelivery_AddressReadAtEveryAttempt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		oldRC, newRC := newReceiver(t, status(500)), newReceiver(t, status(200))
		e.setWebhook(key, map[string]any{"webhookUrl": oldRC.url})
		e.settle(e.mustSession(key, `{"amount": 100}`), "succes")
		oldRC.wait(1)
		did := e.deliveries(key, "")[0]["id"].(string)
		waitFor(t, "first attempt recorded", func() bool { return e.delivery(key, did).body["attempts"] == 1.0 })
		e.setWebhook(key, map[string]any{"webhookUrl": newRC.url})
		e.clock.Add(time.Minute)
		e.srv.Webhooks.Worker.Wake()
		got := newRC.wait(1)[0]
		if got.header.Get("X-Service-Delivery") != did {
			t.Fatalf("the new address got delivery %q; want %s", got.header.Get("X-Service-Delivery"), did)
		}
		waitFor(t, "delivered", func() bool { return e.delivery(key, did).str("status") == "delivered" })
		if d := e.delivery(key, did); d.str("url") != newRC.url {
			t.Fatalf("delivery url = %s; want the new address", d.str("url"))
		}
	})
}
