package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// refundedCharge is the refunded charge's reference in the refund fixtures.
const refundedCharge = "5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b40"

// TestRefund_Documented holds the connector's refunds to Paystack's
// documented request and answers (testdata/SOURCES.md, "Refunds").
func TestRefund_Documented(t *testing.T) {
	ctx := context.Background()
	a := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: a.URL, SecretKey: "sk_live_x", HTTP: &http.Client{Timeout: time.Second}}
	refund := gateway.Refund{Reference: "0d6e1f3a-8b2c-4d5e-9f7a-1c3b5d7e9f20", Collection: gateway.Ref{Reference: refundedCharge, ProviderRef: "61024"},
		Amount: 1000, Currency: "GHS", Operator: "mtn", Reason: "one item returned"}
	for _, tc := range []struct {
		name  string
		code  int
		reply string
		want  gateway.Status
	}{
		{"queued", 200, "refund_pending.json", gateway.Status{Outcome: gateway.Pending, ProviderRef: "3018291"}},
		{"refused", 400, "refund_refused.json", gateway.Status{Outcome: gateway.Failed,
			Reason: "Refund amount cannot be more than the transaction's unrefunded amount"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.Set("POST /refund", tc.code, gatewaytest.Golden(t, tc.reply))
			st, err := c.Refund(ctx, refund)
			if err != nil || st != tc.want {
				t.Fatalf("Refund = %+v, %v; want %+v", st, err, tc.want)
			}
			var sent map[string]any
			json.Unmarshal(a.Body("POST /refund"), &sent)
			if mine, _ := gatewaytest.DocumentedFields(t, sent, "refund_request.json"); len(mine) != 4 {
				t.Errorf("request = %v; want transaction, amount, currency, merchant_note", mine)
			}
		})
	}
	for _, tc := range []struct {
		code  int
		reply string
		want  bool // a transient error
	}{{429, "refund_refused.json", false}, {500, "refund_refused.json", true}, {200, "refund_not_found.json", false}} {
		a.Set("POST /refund", tc.code, gatewaytest.Golden(t, tc.reply))
		st, err := c.Refund(ctx, refund)
		if tc.code == 200 {
			if err != nil || st.Outcome != gateway.Failed {
				t.Errorf("status false with 200 = %+v, %v; want a refusal", st, err)
			}
			continue
		}
		if err == nil || gateway.IsTransient(err) != tc.want {
			t.Errorf("%d = %+v, %v; want an error, transient %v", tc.code, st, err, tc.want)
		}
	}
	for _, tc := range []struct {
		reply string
		want  gateway.Status
	}{
		{"refund_fetch_processing.json", gateway.Status{Outcome: gateway.Pending, ProviderRef: "3018291"}},
		{"refund_fetch_processed.json", gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "3018291"}},
		{"refund_fetch_failed.json", gateway.Status{Outcome: gateway.Failed, ProviderRef: "3018291", Reason: "failed: The wallet could not be credited"}},
		{"refund_fetch_needs_attention.json", gateway.Status{Outcome: gateway.Pending, ProviderRef: "3018291", Reason: needsAttention}},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			a.Set("GET /refund/3018291", 200, gatewaytest.Golden(t, tc.reply))
			st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference, ProviderRef: "3018291"})
			if err != nil || st != tc.want {
				t.Fatalf("RefundStatus = %+v, %v; want %+v", st, err, tc.want)
			}
		})
	}
	a.Set("GET /refund/3018291", 404, gatewaytest.Golden(t, "refund_not_found.json"))
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference, ProviderRef: "3018291"}); err == nil || st.Outcome == gateway.NotFound {
		t.Errorf("a 404 for a refund Paystack gave the id of = %+v, %v; want an error, never NotFound", st, err)
	}
	calls := len(a.Calls())
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference}); err == nil || st.Outcome == gateway.NotFound || len(a.Calls()) != calls {
		t.Errorf("without Paystack's id = %+v, %v, %d calls; want an error, no call, never NotFound", st, err, len(a.Calls())-calls)
	}
	if c.IdempotentRefund() {
		t.Error("Paystack takes no idempotency key for a refund: a resend is not safe")
	}
}

// sign signs body as Paystack signs its webhooks.
func sign(key string, body []byte) http.Header {
	mac := hmac.New(sha512.New, []byte(key))
	mac.Write(body)
	return http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}}
}

// TestCallbackReference_Refunds: the documented refund webhooks name the
// refunded transaction (gateway.RefundsOf its reference), whether or not
// they carry the refund's id; charge webhooks still name the charge.
func TestCallbackReference_Refunds(t *testing.T) {
	c := &Client{SecretKey: "sk_live_x"}
	for _, f := range []string{"webhook_refund_processed.json", "webhook_refund_needs_attention.json", "webhook_refund_pending.json"} {
		body := gatewaytest.Golden(t, f)
		ref, err := c.CallbackReference(sign("sk_live_x", body), body)
		if got, ok := gateway.RefundedCollection(ref); err != nil || !ok || got != refundedCharge {
			t.Errorf("%s = %q, %v; want the refunds of %s", f, ref, err, refundedCharge)
		}
		if _, err := c.CallbackReference(sign("another", body), body); err == nil {
			t.Errorf("%s signed with another key was read", f)
		}
	}
	body := gatewaytest.Golden(t, "webhook_charge_success.json")
	if ref, err := c.CallbackReference(sign("sk_live_x", body), body); err != nil || strings.HasPrefix(ref, "refunds-of:") || ref == "" {
		t.Errorf("charge.success = %q, %v; want the charge's reference", ref, err)
	}
	noRef := []byte(`{"event":"refund.processed","data":{"status":"processed"}}`)
	if _, err := c.CallbackReference(sign("sk_live_x", noRef), noRef); err == nil {
		t.Error("a refund webhook without transaction_reference was read")
	}
}

// TestRefund_AgainstSimulator refunds a paid charge on the simulator over
// HTTP: in two parts, never more than is left, each pending until it is
// processed, with its signed refund webhook naming the transaction.
func TestRefund_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "71111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "GHS", Phone: "+233241234567", Operator: "mtn"}
	refund := gateway.Refund{Reference: "r1111111-2222-4333-8444-555555555555", Collection: gateway.Ref{Reference: col.Reference},
		Amount: 1000, Currency: "GHS", Reason: "one item returned"}
	if _, err := c.Collect(ctx, col); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Refund(ctx, refund); err != nil || st.Outcome != gateway.Failed {
		t.Fatalf("refund of an unpaid charge = %+v, %v; want refused", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	first, err := c.Refund(ctx, refund)
	if err != nil || first.Outcome != gateway.Pending || first.ProviderRef == "" {
		t.Fatalf("refund = %+v, %v; want pending with Paystack's id", first, err)
	}
	over := refund
	over.Amount = 1501
	if st, err := c.Refund(ctx, over); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "1500") {
		t.Fatalf("more than is left = %+v, %v; want refused", st, err)
	}
	other := refund
	other.Currency = "KES"
	if st, _ := c.Refund(ctx, other); st.Outcome != gateway.Failed {
		t.Fatalf("another currency = %+v; want refused", st)
	}
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference, ProviderRef: first.ProviderRef}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v; want pending", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+first.ProviderRef)
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refund.Reference, ProviderRef: first.ProviderRef}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("status once processed = %+v, %v", st, err)
	}
	h, body, _ := hook.Last()
	if ref, err := c.CallbackReference(h, body); err != nil || ref != gateway.RefundsOf(col.Reference) || !strings.Contains(string(body), `"refund.processed"`) {
		t.Fatalf("webhook %s = %q, %v", body, ref, err)
	}
	rest := refund
	rest.Amount = 1500
	second, err := c.Refund(ctx, rest)
	if err != nil || second.Outcome != gateway.Pending || second.ProviderRef == first.ProviderRef {
		t.Fatalf("the rest = %+v, %v", second, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+second.ProviderRef+"?status=failed")
	if st, _ := c.RefundStatus(ctx, gateway.Ref{ProviderRef: second.ProviderRef}); st.Outcome != gateway.Failed {
		t.Fatalf("failed refund = %+v", st)
	}
	// A failed refund holds nothing: the rest may be asked again.
	third, err := c.Refund(ctx, rest)
	if err != nil || third.Outcome != gateway.Pending {
		t.Fatalf("the rest again = %+v, %v", third, err)
	}
	if st, _ := c.Refund(ctx, gateway.Refund{Collection: gateway.Ref{Reference: col.Reference}, Amount: 1, Currency: "GHS"}); st.Outcome != gateway.Failed {
		t.Fatalf("a refund once nothing is left = %+v; want refused", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+third.ProviderRef+"?status=needs-attention")
	if st, _ := c.RefundStatus(ctx, gateway.Ref{ProviderRef: third.ProviderRef}); st.Outcome != gateway.Pending || st.Reason != needsAttention {
		t.Fatalf("needs-attention = %+v; want pending, the merchant to act", st)
	}
	if sim.Refunds() != 3 {
		t.Fatalf("%d refunds made; want 3", sim.Refunds())
	}
	if _, err := c.RefundStatus(ctx, gateway.Ref{ProviderRef: "999"}); err == nil {
		t.Fatal("an unknown refund id was answered")
	}
}
