package flutterwave

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestRefund_Documented holds the connector's refunds to Flutterwave's
// documented request and answers (testdata/SOURCES.md, "Refunds").
func TestRefund_Documented(t *testing.T) {
	ctx := context.Background()
	a := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: a.URL, SecretKey: "FLWSECK-x", HTTP: &http.Client{Timeout: time.Second}}
	// 1 000 UGX of the charge verify_successful.json read (its data.id).
	refund := gateway.Refund{Reference: "0d6e1f3a-8b2c-4d5e-9f7a-1c3b5d7e9f20", Collection: gateway.Ref{Reference: "cauri-ug-7f3a2c", ProviderRef: "880410"},
		Amount: 1000, Currency: "UGX", Reason: "one item returned"}
	for _, tc := range []struct {
		name  string
		code  int
		reply string
		want  gateway.Status
	}{
		{"completed at once", 200, "refund_initiated.json", gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "90412"}},
		{"pending-momo", 200, "refund_initiated_pending_momo.json", gateway.Status{Outcome: gateway.Pending, ProviderRef: "90412"}},
		{"under the minimum", 400, "refund_minimum.json", gateway.Status{Outcome: gateway.Failed, Reason: "400 Amount should be above KES10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.Set("POST /transactions/880410/refund", tc.code, gatewaytest.Golden(t, tc.reply))
			st, err := c.Refund(ctx, refund)
			if err != nil || st != tc.want {
				t.Fatalf("Refund = %+v, %v; want %+v", st, err, tc.want)
			}
			var sent map[string]any
			json.Unmarshal(a.Body("POST /transactions/880410/refund"), &sent)
			if mine, _ := gatewaytest.DocumentedFields(t, sent, "refund_request.json"); len(mine) != 2 {
				t.Errorf("request = %v; want amount and comments", mine)
			}
		})
	}
	// Major units, written exactly: 25.50 GHS is 2550 minor units.
	a.Set("POST /transactions/880410/refund", 200, gatewaytest.Golden(t, "refund_initiated.json"))
	ghs := refund
	ghs.Amount, ghs.Currency = 2550, "GHS"
	c.Refund(ctx, ghs)
	if got := string(a.Body("POST /transactions/880410/refund")); !strings.Contains(got, `"amount":25.5,`) {
		t.Errorf("GHS request = %s; want amount 25.5, a JSON number", got)
	}
	a.Set("POST /transactions/880410/refund", 500, gatewaytest.Golden(t, "refund_minimum.json"))
	if _, err := c.Refund(ctx, refund); !gateway.IsTransient(err) {
		t.Errorf("a 500 = %v; want a transient error (it may have been made)", err)
	}
	calls := len(a.Calls())
	noID := refund
	noID.Collection.ProviderRef = ""
	if _, err := c.Refund(ctx, noID); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || len(a.Calls()) != calls {
		t.Errorf("without Flutterwave's transaction id = %v, %d calls; want not sent", err, len(a.Calls())-calls)
	}
	for _, tc := range []struct {
		reply string
		want  gateway.Status
	}{
		{"refund_fetched_pending_momo.json", gateway.Status{Outcome: gateway.Pending, ProviderRef: "90412"}},
		{"refund_fetched_completed_momo.json", gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "90412"}},
		{"refund_fetched_failed.json", gateway.Status{Outcome: gateway.Failed, ProviderRef: "90412", Reason: "failed: wallet not credited"}},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			a.Set("GET /refunds/90412", 200, gatewaytest.Golden(t, tc.reply))
			st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference, ProviderRef: "90412"})
			if err != nil || st != tc.want {
				t.Fatalf("RefundStatus = %+v, %v; want %+v", st, err, tc.want)
			}
		})
	}
	unknown := strings.Replace(string(gatewaytest.Golden(t, "refund_fetched_pending_momo.json")), "pending-momo", "reversed", 1)
	a.Set("GET /refunds/90412", 200, []byte(unknown))
	if st, err := c.RefundStatus(ctx, gateway.Ref{ProviderRef: "90412"}); err == nil || !strings.Contains(err.Error(), `"reversed"`) {
		t.Errorf("an unknown status = %+v, %v; want an error naming it (the refund stays pending)", st, err)
	}
	a.Set("GET /refunds/90412", 404, gatewaytest.Golden(t, "refund_not_found.json"))
	if st, err := c.RefundStatus(ctx, gateway.Ref{ProviderRef: "90412"}); err == nil || st.Outcome == gateway.NotFound {
		t.Errorf("a 404 = %+v, %v; want an error, never NotFound", st, err)
	}
	calls = len(a.Calls())
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference}); err == nil || st.Outcome == gateway.NotFound || len(a.Calls()) != calls {
		t.Errorf("without Flutterwave's id = %+v, %v; want an error, no call, never NotFound", st, err)
	}
	if c.IdempotentRefund() {
		t.Error("Flutterwave takes no idempotency key for a refund: a resend is not safe")
	}
}

// TestRefund_AgainstSimulator refunds a paid Uganda charge on the
// simulator over HTTP by the id verify gave: in parts, never more than is
// left, each pending-momo until completed-momo.
func TestRefund_AgainstSimulator(t *testing.T) {
	sim, srv, c, _ := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "71111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567",
		Operator: "MTN", Country: "UG"}
	if _, err := c.Collect(ctx, col); err != nil {
		t.Fatal(err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	paid, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference})
	if err != nil || paid.Outcome != gateway.Succeeded || paid.ProviderRef == "" {
		t.Fatalf("charge = %+v, %v", paid, err)
	}
	refund := gateway.Refund{Collection: gateway.Ref{Reference: col.Reference, ProviderRef: paid.ProviderRef}, Amount: 5000, Currency: "UGX"}
	first, err := c.Refund(ctx, refund)
	if err != nil || first.Outcome != gateway.Pending || first.ProviderRef == "" {
		t.Fatalf("refund = %+v, %v; want pending with Flutterwave's id", first, err)
	}
	over := refund
	over.Amount = 10001
	if st, err := c.Refund(ctx, over); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "10000") {
		t.Fatalf("more than is left = %+v, %v; want refused", st, err)
	}
	if st, err := c.RefundStatus(ctx, gateway.Ref{ProviderRef: first.ProviderRef}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v; want pending-momo", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+first.ProviderRef)
	if st, err := c.RefundStatus(ctx, gateway.Ref{ProviderRef: first.ProviderRef}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("status once completed = %+v, %v", st, err)
	}
	rest := refund
	rest.Amount = 10000
	second, err := c.Refund(ctx, rest)
	if err != nil || second.Outcome != gateway.Pending {
		t.Fatalf("the rest = %+v, %v", second, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+second.ProviderRef+"?status=failed")
	if st, _ := c.RefundStatus(ctx, gateway.Ref{ProviderRef: second.ProviderRef}); st.Outcome != gateway.Failed {
		t.Fatalf("failed refund = %+v", st)
	}
	if third, err := c.Refund(ctx, rest); err != nil || third.Outcome != gateway.Pending {
		t.Fatalf("the rest again, the failed one holding nothing = %+v, %v", third, err)
	}
	if st, _ := c.Refund(ctx, gateway.Refund{Collection: refund.Collection, Amount: 1, Currency: "UGX"}); st.Outcome != gateway.Failed {
		t.Fatalf("a refund once nothing is left = %+v; want refused", st)
	}
	byRef := refund
	byRef.Collection.ProviderRef = "1"
	if st, _ := c.Refund(ctx, byRef); st.Outcome != gateway.Failed {
		t.Fatalf("a refund of an unknown transaction = %+v; want refused", st)
	}
	if sim.Refunds() != 3 {
		t.Fatalf("%d refunds made; want 3", sim.Refunds())
	}
}
