package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestSandboxSettle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		settle := func(id, issue string) response {
			return e.do("POST", "/checkout/sandbox", map[string]string{"transactionId": id, "issue": issue})
		}
		t.Run("Success", func(t *testing.T) {
			id := e.mustSession(e.keys["test_secret"], `{"amount": 5000, "metadata": {"order_id": "A-9"}}`)
			e.clock.Add(90_000_000_000) // 90 s later
			r := settle(id, "succes")
			wantStatus(t, r, 200)
			if r.body["success"] != true || r.body["sandbox"] != true || r.str("status") != "SUCCESS" || r.str("message") == "" {
				t.Fatalf("settle = %s", r.raw)
			}
			s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys["test_secret"])...)
			if s.str("status") != "SUCCESS" || s.body["paid"] != true || s.str("provider") != "sandbox" || s.str("completed_at") != "2026-11-22T10:01:30.000Z" {
				t.Fatalf("status after settle = %s", s.raw)
			}
			events, err := st.SessionEvents(context.Background(), id)
			if err != nil || len(events) != 1 {
				t.Fatalf("events = %v, %v; want one", events, err)
			}
			ev := events[0]
			var data map[string]any
			json.Unmarshal(ev.Data, &data)
			if ev.Type != cauri.EventPaymentCompleted || ev.Livemode || data["id"] != id || data["status"] != "SUCCESS" || data["order_id"] != "A-9" {
				t.Fatalf("event = %s %v %s", ev.Type, ev.Livemode, ev.Data)
			}
		})
		t.Run("FailureThenRetrySucceeds", func(t *testing.T) {
			id := e.mustSession(e.keys["test_secret"], `{"amount": 5000}`)
			if r := settle(id, "echec"); r.status != 200 || r.str("status") != "FAILED" || r.body["success"] != true {
				t.Fatalf("echec = %d %s", r.status, r.raw)
			}
			e.clock.Add(1_000_000_000)
			if r := settle(id, "succes"); r.status != 200 || r.str("status") != "SUCCESS" {
				t.Fatalf("succes after echec = %d %s; a failed session can be paid again", r.status, r.raw)
			}
			events, _ := st.SessionEvents(context.Background(), id)
			if len(events) != 2 || events[0].Type != cauri.EventPaymentFailed || events[1].Type != cauri.EventPaymentCompleted {
				t.Fatalf("events = %v; want payment.failed then payment.completed", events)
			}
		})
		t.Run("ErrAlreadyPaid", func(t *testing.T) {
			id := e.mustSession(e.keys["test_secret"], `{"amount": 5000}`)
			settle(id, "succes")
			r := settle(id, "echec")
			wantError(t, r, 409, "can no longer be paid")
			if r.body["success"] != false {
				t.Fatalf("error shape = %s; want success false", r.raw)
			}
			events, _ := st.SessionEvents(context.Background(), id)
			if len(events) != 1 {
				t.Fatalf("%d events after a refused settle; want 1", len(events))
			}
		})
		t.Run("ErrLiveSession", func(t *testing.T) {
			_, keys := e.newWorkspace("Live", true)
			id := e.mustSession(keys["live_secret"], `{"amount": 5000}`)
			wantError(t, settle(id, "succes"), 403, "real money")
		})
		t.Run("ErrUnknown", func(t *testing.T) {
			for _, id := range []string{"cs_unknown", "\x00", "cs_" + strings.Repeat("b", 32)} {
				r := settle(id, "succes")
				wantError(t, r, 404, "not found")
				if r.body["success"] != false {
					t.Fatalf("error shape = %s", r.raw)
				}
			}
		})
		t.Run("ErrBadRequest", func(t *testing.T) {
			wantError(t, settle("", "succes"), 400, "transactionId is required")
			wantError(t, settle("cs_x", "success"), 400, "issue must be")
			wantError(t, e.do("POST", "/checkout/sandbox", `{"transactionId": 5}`), 400, "transactionId must be a string")
			wantError(t, e.do("POST", "/checkout/sandbox", `{`), 400, "truncated")
		})
	})
}

func TestCheckoutPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		id := e.mustSession(e.keys["test_secret"], `{"amount": 1500000, "description": "Commande 42", "merchant_name": "Chez Adjoa", "success_url": "https://shop.example/ok?o=42"}`)
		t.Run("Pending", func(t *testing.T) {
			r := e.do("GET", "/pay/"+id, nil, "Accept-Language", "fr-CI,fr;q=0.9")
			wantStatus(t, r, 200)
			for _, want := range []string{"Chez Adjoa", "1\u202f500\u202f000 FCFA (XOF)", "Commande 42", "Mode test", "Simuler un succès", "Simuler un échec", `data-session="` + id + `"`} {
				if !strings.Contains(r.raw, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP = %q", csp)
			}
		})
		t.Run("FormWithoutJavaScript", func(t *testing.T) {
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := client.PostForm(e.url+"/pay/"+id, url.Values{"issue": {"succes"}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("form post = %d; want 303 back to the page", res.StatusCode)
			}
			r := e.do("GET", "/pay/"+id, nil)
			for _, want := range []string{`data-status="SUCCESS"`, `content="3;url=https://shop.example/ok?o=42"`, `href="https://shop.example/ok?o=42"`} {
				if !strings.Contains(r.raw, want) {
					t.Errorf("paid page lacks %q", want)
				}
			}
			if strings.Contains(r.raw, "simulate-success") {
				t.Error("paid page still offers to simulate")
			}
		})
		t.Run("FormErrShownOnPage", func(t *testing.T) {
			res, err := http.PostForm(e.url+"/pay/"+id, url.Values{"issue": {"echec"}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusConflict {
				t.Fatalf("settling a paid session through the form = %d; want 409 with the page", res.StatusCode)
			}
		})
		t.Run("ErrUnknown", func(t *testing.T) {
			for _, id := range []string{"cs_unknown", "%00", "%ff"} {
				r := e.do("GET", "/pay/"+id, nil)
				if r.status != 404 || !strings.Contains(r.raw, "not-found") {
					t.Fatalf("page %s = %d", id, r.status)
				}
			}
		})
		t.Run("EscapesMerchantText", func(t *testing.T) {
			id := e.mustSession(e.keys["test_secret"], `{"amount": 10, "description": "<script>alert(1)</script>"}`)
			if r := e.do("GET", "/pay/"+id, nil); strings.Contains(r.raw, "<script>alert(1)") {
				t.Fatal("description is not escaped")
			}
		})
		t.Run("Static", func(t *testing.T) {
			for _, p := range []string{"/static/checkout.css", "/static/checkout.js"} {
				if r := e.do("GET", p, nil); r.status != 200 || len(r.raw) < 100 {
					t.Fatalf("%s = %d", p, r.status)
				}
			}
			if r := e.do("GET", "/static/", nil); r.status != 404 {
				t.Fatalf("/static/ = %d; want 404, no listing", r.status)
			}
		})
	})
}
