package wave

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// paidSession is a checkout session of reference paid on the simulator,
// as the checkout service keeps it: its ref carries the transaction's id
// (T...), which Wave's refund route does not take.
func paidSession(t *testing.T, c *Client, srvURL, reference string) (sessionID string, col gateway.Ref) {
	t.Helper()
	ctx := context.Background()
	st, err := c.Collect(ctx, gateway.Collection{Reference: reference, Amount: 1000, Currency: "XOF", ReturnURL: "https://shop.example/back"})
	if err != nil || !strings.HasPrefix(st.ProviderRef, "cos-") {
		t.Fatalf("Collect = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srvURL, "/_sim/settle/"+reference)
	paid, err := c.CollectionStatus(ctx, gateway.Ref{Reference: reference, ProviderRef: st.ProviderRef})
	if err != nil || paid.Outcome != gateway.Succeeded || !strings.HasPrefix(paid.ProviderRef, "T") {
		t.Fatalf("paid = %+v, %v; want succeeded with the transaction's id", paid, err)
	}
	return st.ProviderRef, gateway.Ref{Reference: reference, ProviderRef: paid.ProviderRef}
}

// TestRefund_Simulator: a paid session is refunded whole at once (200,
// empty), found by our reference though the payment kept the transaction's
// id; asked again, or read by RefundStatus, it answers refunded without a
// second refund.
func TestRefund_Simulator(t *testing.T) {
	ctx := context.Background()
	sim, srv, c, _ := newSim(t)
	id, col := paidSession(t, c, srv.URL, "pay-refund-1")
	r := gateway.Refund{Reference: "re-1", Collection: col, Amount: 1000, Currency: "XOF"}
	st, err := c.Refund(ctx, r)
	if err != nil || st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}) {
		t.Fatalf("Refund = %+v, %v; want succeeded with the session's id %s", st, err, id)
	}
	if again, err := c.Refund(ctx, r); err != nil || again.Outcome != gateway.Succeeded {
		t.Fatalf("Refund again = %+v, %v; want succeeded", again, err)
	}
	for _, ref := range []gateway.Ref{{Reference: r.Reference, ProviderRef: id}, {Reference: r.Reference, Collection: &col}} {
		if got, err := c.RefundStatus(ctx, ref); err != nil || got.Outcome != gateway.Succeeded || got.ProviderRef != id {
			t.Fatalf("RefundStatus(%+v) = %+v, %v; want succeeded", ref, got, err)
		}
	}
	if n := sim.Refunds(); n != 1 {
		t.Fatalf("%d refunds at Wave; want 1", n)
	}
	if !c.IdempotentRefund() || !gateway.WholeRefundsOnly(c) {
		t.Fatal("Wave's refunds are idempotent and whole only")
	}
	if _, err := c.RefundStatus(ctx, gateway.Ref{Reference: r.Reference}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("RefundStatus without the session = %v; want an error", err)
	}
}

// TestRefund_Refusals: a session not paid is refused
// (checkout-refund-failed: failed, in Wave's words), an unknown one too
// (checkout-session-not-found), and nothing is refunded; a refused key is
// an error that moved nothing; a 5xx is transient and answered, a timeout
// transient and unanswered; a payment Wave knows no session of is not sent.
func TestRefund_Refusals(t *testing.T) {
	ctx := context.Background()
	sim, srv, c, _ := newSim(t)
	open, err := c.Collect(ctx, gateway.Collection{Reference: "pay-open", Amount: 1000, Currency: "XOF", ReturnURL: "https://shop.example/back"})
	if err != nil {
		t.Fatal(err)
	}
	refund := func(c *Client, col gateway.Ref) (gateway.Status, error) {
		return c.Refund(ctx, gateway.Refund{Reference: "re-x", Collection: col, Amount: 1000, Currency: "XOF"})
	}
	st, err := refund(c, gateway.Ref{Reference: "pay-open", ProviderRef: open.ProviderRef})
	if err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "checkout-refund-failed") {
		t.Fatalf("refund of an unpaid session = %+v, %v; want failed, checkout-refund-failed", st, err)
	}
	// Asked again by a status read, the same refusal cannot tell that an
	// earlier call refunded nothing: the refund stays pending (an error).
	rs, err := c.RefundStatus(ctx, gateway.Ref{Reference: "re-x", Collection: &gateway.Ref{Reference: "pay-open", ProviderRef: open.ProviderRef}})
	if !gateway.IsTransient(err) || rs.Outcome != "" {
		t.Fatalf("status read refused = %+v, %v; want a transient error, never failed", rs, err)
	}
	st, err = refund(c, gateway.Ref{Reference: "pay-none", ProviderRef: "cos-unknown"})
	if err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "checkout-session-not-found") {
		t.Fatalf("refund of an unknown session = %+v, %v; want failed, checkout-session-not-found", st, err)
	}
	_, col := paidSession(t, c, srv.URL, "pay-refund-2")
	bad := *c
	bad.APIKey = "wave_sn_prod_revoked"
	if st, err := refund(&bad, gateway.Ref{Reference: col.Reference, ProviderRef: "cos-sim00000001"}); err == nil || gateway.IsTransient(err) || st.Outcome != "" {
		t.Fatalf("refund with a refused key = %+v, %v; want a non-transient error", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := refund(c, col); !gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("refund when its session cannot be found (5xx) = %v; want not sent", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	id, _ := paidSession(t, c, srv.URL, "pay-refund-3")
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := refund(c, gateway.Ref{Reference: "pay-refund-3", ProviderRef: id}); !gateway.IsTransient(err) || !gateway.ErrorOf(err).Answered || gateway.ErrorOf(err).NotSent {
		t.Fatalf("refund answered 500 = %v; want transient, answered", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=slow&seconds=1")
	if _, err := refund(c, gateway.Ref{Reference: "pay-refund-3", ProviderRef: id}); !gateway.IsTransient(err) || gateway.ErrorOf(err).Answered || gateway.ErrorOf(err).NotSent {
		t.Fatalf("refund timed out = %v; want transient, not answered", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if _, err := refund(c, gateway.Ref{Reference: "pay-unknown"}); err == nil || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("refund of a payment Wave knows no session of = %v; want not sent", err)
	}
	if n := sim.Refunds(); n != 0 {
		t.Fatalf("%d refunds at Wave; want none", n)
	}
}

// TestRefund_ErrorShapes: Wave's refusals are read in each shape the
// sources show (code and message at the top, under "error", as error_code
// and error_message), on 400 or 409; 403 is the key's.
func TestRefund_ErrorShapes(t *testing.T) {
	ctx := context.Background()
	a := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: a.URL, APIKey: "k"}
	r := gateway.Refund{Reference: "re-1", Collection: gateway.Ref{Reference: "pay-1", ProviderRef: "cos-18qq25rgr100a"}, Amount: 1000, Currency: "XOF"}
	const route = "POST /v1/checkout/sessions/cos-18qq25rgr100a/refund"
	for _, tc := range []struct {
		code int
		body string
	}{
		{http.StatusBadRequest, `{"code":"checkout-refund-failed","message":"insufficient balance"}`},
		{http.StatusConflict, `{"error":{"code":"checkout-refund-failed","message":"insufficient balance","httpcode":409}}`},
		{http.StatusConflict, `{"error_code":"checkout-refund-failed","error_message":"insufficient balance"}`},
	} {
		a.Set(route, tc.code, []byte(tc.body))
		if st, err := c.Refund(ctx, r); err != nil || st.Outcome != gateway.Failed || st.Reason != "checkout-refund-failed: insufficient balance" {
			t.Errorf("%d %s = %+v, %v; want failed with Wave's words", tc.code, tc.body, st, err)
		}
	}
	a.Set(route, http.StatusForbidden, []byte(`{"code":"unauthorized-wallet","message":"x"}`))
	if _, err := c.Refund(ctx, r); err == nil || gateway.IsTransient(err) || !strings.Contains(err.Error(), "unauthorized-wallet") {
		t.Errorf("403 = %v; want a non-transient error naming Wave's code", err)
	}
	a.Set(route, http.StatusOK, nil)
	if st, err := c.Refund(ctx, r); err != nil || st.Outcome != gateway.Succeeded {
		t.Errorf("200 empty = %+v, %v; want succeeded", st, err)
	}
	if sent := a.Body(route); len(sent) != 0 {
		t.Errorf("refund sent %q; want no body", sent)
	}
}
