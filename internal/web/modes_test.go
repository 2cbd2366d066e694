package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestModes_EveryKeyRoute audits every route an API key reaches (issue 16:
// modes are walls): with a workspace that has live objects (a paid live
// session with its webhook delivery, a payment link, a transfer, a refund), the test
// secret key neither reads nor changes any of them. A route added without
// a case here fails the test.
func TestModes_EveryKeyRoute(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Walls shop", true)
		live, test := bearer(keys["live_secret"]), bearer(keys["test_secret"])
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer receiver.Close()
		wantStatus(t, e.do("PATCH", "/v1/config/webhook", map[string]any{"webhookUrl": receiver.URL + "/live"}, live...), 200)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		session := e.mustSession(keys["live_public"], `{"amount": 1500, "customer_email": "live-payer@example.com"}`)
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": session, "gatewayId": g.ID, "code": "FREE_SEN", "phone": "76 123 45 67"}), 200)
		attempts, _ := st.Attempts(ctx, session)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
		if v := e.do("POST", "/checkout/verify", map[string]string{"transactionId": session}); v.str("status") != "SUCCESS" {
			t.Fatalf("live session = %s", v.raw)
		}
		deliveries := e.deliveries(keys["live_secret"], "?transaction_id="+session)
		if len(deliveries) == 0 {
			t.Fatal("the live payment made no delivery")
		}
		delivery := deliveries[0]["id"].(string)
		link := e.do("POST", "/v1/payment-links", map[string]any{"title": "Live link", "amount": 5000}, live...).str("id")
		transfer := e.do("POST", "/v1/transfers", wave, live...)
		if transfer.status != 201 {
			t.Fatalf("live transfer = %d %s", transfer.status, transfer.raw)
		}
		refund := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": session, "amount": 500}, live...)
		if refund.status != 201 {
			t.Fatalf("live refund = %d %s", refund.status, refund.raw)
		}
		secrets := []string{session, delivery, link, transfer.str("id"), refund.str("id"), "live-payer@example.com"}

		// Each route with a test secret key: the status it must answer
		// (2xx: it may answer, about test objects only).
		cases := map[string]struct {
			method, path string
			body         any
			want         int
		}{
			"POST /v1/checkout/sessions":             {"POST", "/v1/checkout/sessions", map[string]any{"amount": 100}, 201},
			"GET /v1/checkout/sessions/{id}/status":  {"GET", "/v1/checkout/sessions/" + session + "/status", nil, 404},
			"GET /v1/checkout/sessions/{id}/methods": {"GET", "/v1/checkout/sessions/" + session + "/methods", nil, 404},
			"POST /v1/payment-links":                 {"POST", "/v1/payment-links", map[string]any{"title": "T", "amount": 100}, 403},
			"GET /v1/payment-links/{id}/check":       {"GET", "/v1/payment-links/" + link + "/check", nil, 404},
			"GET /v1/payment-links":                  {"GET", "/v1/payment-links", nil, 403},
			"GET /v1/payment-links/{id}":             {"GET", "/v1/payment-links/" + link, nil, 403},
			"PATCH /v1/payment-links/{id}":           {"PATCH", "/v1/payment-links/" + link, map[string]any{"active": false}, 403},
			"GET /v1/payment-links/{id}/qr":          {"GET", "/v1/payment-links/" + link + "/qr", nil, 403},
			"GET /v1/transactions/export":            {"GET", "/v1/transactions/export", nil, 401},
			"POST /v1/route": {"POST", "/v1/route", map[string]any{"country": "SN", "amount": 1000, "currency": "XOF",
				"availableProviders": []string{"pawapay"}}, 200},
			"GET /v1/route":            {"GET", "/v1/route?country=SN", nil, 200},
			"POST /v1/transfers":       {"POST", "/v1/transfers", wave, 403},
			"GET /v1/transfers":        {"GET", "/v1/transfers", nil, 403},
			"GET /v1/transfers/{id}":   {"GET", "/v1/transfers/" + transfer.str("id"), nil, 403},
			"POST /v1/transfers/batch": {"POST", "/v1/transfers/batch", map[string]any{"transfers": []any{wave}}, 403},
			"POST /v1/refunds":         {"POST", "/v1/refunds", map[string]any{"transaction_id": session}, 404},
			"GET /v1/refunds":          {"GET", "/v1/refunds", nil, 200},
			"GET /v1/refunds/{id}":     {"GET", "/v1/refunds/" + refund.str("id"), nil, 404},
			"POST /v1/transfers/recipient": {"POST", "/v1/transfers/recipient", map[string]any{"country": "SN", "operator": "wave",
				"phone": "77 123 45 67"}, 403},
			"GET /v1/config/webhook":                   {"GET", "/v1/config/webhook", nil, 200},
			"PATCH /v1/config/webhook":                 {"PATCH", "/v1/config/webhook", map[string]any{"events": []string{"transfer.failed"}}, 200},
			"GET /v1/webhooks/deliveries":              {"GET", "/v1/webhooks/deliveries", nil, 200},
			"GET /v1/webhooks/deliveries/{id}":         {"GET", "/v1/webhooks/deliveries/" + delivery, nil, 404},
			"POST /v1/webhooks/deliveries/{id}/resend": {"POST", "/v1/webhooks/deliveries/" + delivery + "/resend", nil, 404},
		}
		for _, p := range routeList(t) {
			if !strings.Contains(p, " /v1/") || strings.Contains(p, "/v1/partner/") || strings.Contains(p, "/v1/openapi.") {
				continue // not reached with an API key
			}
			c, ok := cases[p]
			if !ok {
				t.Errorf("route %s has no case in the mode audit", p)
				continue
			}
			t.Run(p, func(t *testing.T) {
				r := e.do(c.method, c.path, c.body, test...)
				if r.status != c.want {
					t.Fatalf("with a test key = %d %s; want %d", r.status, r.raw, c.want)
				}
				for _, s := range secrets {
					if strings.Contains(r.raw, s) && !strings.Contains(c.path+fmt.Sprint(c.body), s) { // naming what was asked is no leak
						t.Fatalf("a test key read %q (live):\n%s", s, r.raw)
					}
				}
			})
		}
		// Nothing live changed: the live events, the live link, the delivery.
		cfg, _ := st.WebhookConfig(ctx, ws.ID)
		if !cfg.Selects(cauri.EventPaymentCompleted, true) {
			t.Fatal("a test key changed the live events")
		}
		if r := e.do("GET", "/v1/payment-links/"+link, nil, live...); r.status != 200 || r.body["active"] != true {
			t.Fatalf("the live link after the audit = %d %s", r.status, r.raw)
		}
		if r := e.do("GET", "/v1/webhooks/deliveries/"+delivery, nil, live...); r.status != 200 || r.str("status") == "" {
			t.Fatalf("the live delivery after the audit = %d %s", r.status, r.raw)
		}
	})
}
