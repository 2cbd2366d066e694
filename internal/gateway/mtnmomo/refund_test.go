package mtnmomo

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// The references of the refund fixtures (refund_request.json).
const (
	refundRef = "3f8a2d14-6c1b-4e7a-9d52-8b0e4c7f1a36"
	paidRef   = "15c8e2a4-7b3d-4f91-a6e0-2d9c5b8f4e17"
)

func refundOf(ref, paid string, amount int64) gateway.Refund {
	return gateway.Refund{Reference: ref, Collection: gateway.Ref{Reference: paid}, Amount: amount, Currency: "EUR", Reason: "one item returned"}
}

// TestRefund_Documented holds the connector's refunds to MTN's documented
// request, headers and answers (testdata/SOURCES.md, "Refunds").
func TestRefund_Documented(t *testing.T) {
	srv, c := newAnswers(t)
	ctx := context.Background()
	r := refundOf(refundRef, paidRef, 500)
	r.NotifyURL = "https://cauri.example/callbacks/gw_1"
	srv.Set("POST /disbursement/v1_0/refund", http.StatusAccepted, gatewaytest.Golden(t, "accepted_no_body.txt"))
	if st, err := c.Refund(ctx, r); err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
		t.Fatalf("Refund = %+v, %v; want pending", st, err)
	}
	var sent map[string]any
	json.Unmarshal(srv.Body("POST /disbursement/v1_0/refund"), &sent)
	if mine, documented := gatewaytest.DocumentedFields(t, sent, "refund_request.json"); len(mine) != len(documented) {
		t.Errorf("request = %v; want exactly the documented fields", mine)
	}
	srv.Set("POST /disbursement/v1_0/refund", http.StatusConflict, gatewaytest.Golden(t, "error_already_exist.json"))
	if st, err := c.Refund(ctx, r); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("the same X-Reference-Id again = %+v, %v; want pending (MTN has it)", st, err)
	}
	srv.Set("POST /disbursement/v1_0/refund", http.StatusNotFound, gatewaytest.Golden(t, "error_not_found.json"))
	if st, err := c.Refund(ctx, r); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "RESOURCE_NOT_FOUND") {
		t.Fatalf("a refusal = %+v, %v; want failed with MTN's words", st, err)
	}
	for _, tc := range []struct {
		reply string
		want  gateway.Status
	}{
		{"refund_status_pending.json", gateway.Status{Outcome: gateway.Pending}},
		{"refund_status_successful.json", gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "981560142"}},
		{"refund_status_failed.json", gateway.Status{Outcome: gateway.Failed, Reason: "NOT_ENOUGH_FUNDS"}},
	} {
		srv.Set("GET /disbursement/v1_0/refund/"+refundRef, http.StatusOK, gatewaytest.Golden(t, tc.reply))
		if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refundRef}); err != nil || st != tc.want {
			t.Errorf("%s: RefundStatus = %+v, %v; want %+v", tc.reply, st, err, tc.want)
		}
	}
	srv.Set("GET /disbursement/v1_0/refund/"+refundRef, http.StatusNotFound, gatewaytest.Golden(t, "error_not_found.json"))
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refundRef}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("a refund MTN never received = %+v, %v; want NotFound", st, err)
	}
	calls := len(srv.Calls())
	for _, bad := range []gateway.Refund{refundOf("not-a-uuid", paidRef, 500), refundOf(refundRef, "att_1", 500), refundOf(refundRef, paidRef, 0)} {
		if st, err := c.Refund(ctx, bad); err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "not sent") {
			t.Errorf("Refund(%+v) = %+v, %v; want refused before sending", bad, st, err)
		}
	}
	if len(srv.Calls()) != calls {
		t.Errorf("%d calls for refunds that cannot be sent", len(srv.Calls())-calls)
	}
	if !c.IdempotentRefund() || c.RefundsUnavailable() != "" {
		t.Fatal("MTN refunds by X-Reference-Id: idempotent, available with the Disbursement key")
	}
	c.DisbursementKey = ""
	if why := c.RefundsUnavailable(); !strings.Contains(why, "disbursement_key") {
		t.Fatalf("without the Disbursement key: %q; want the missing credential named", why)
	}
	observed, ok := gateway.Refunds(gateway.Observe(c, "mtnmomo", nil))
	if why := gateway.RefundsUnavailable(observed); !ok || !strings.Contains(why, "disbursement_key") {
		t.Fatalf("through the observed wrapper: %q; want the missing credential named", why)
	}
}

// TestRefund_AgainstSimulator refunds a paid request to pay on the
// simulator over HTTP: in parts, never more than is left, the same
// X-Reference-Id never twice, each PENDING until settled, with its
// callback naming the refund.
func TestRefund_AgainstSimulator(t *testing.T) {
	s, srv, c, hook := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 1000, Currency: "EUR", Phone: "+46733123459",
		Description: "order 7"}
	if _, err := c.Collect(ctx, col); err != nil {
		t.Fatal(err)
	}
	first := refundOf("b1111111-2222-4333-8444-555555555555", col.Reference, 400)
	first.NotifyURL = hook.URL + "/refunds"
	if st, _ := c.Refund(ctx, first); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "NOT_ALLOWED") {
		t.Fatalf("a refund of an unpaid request = %+v; want refused", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	if st, err := c.Refund(ctx, first); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("refund = %+v, %v", st, err)
	}
	if st, err := c.Refund(ctx, first); err != nil || st.Outcome != gateway.Pending || s.Refunds() != 1 {
		t.Fatalf("sent again = %+v, %v, %d refunds; want one refund", st, err, s.Refunds())
	}
	over := refundOf("c1111111-2222-4333-8444-555555555555", col.Reference, 601)
	if st, _ := c.Refund(ctx, over); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "6 EUR") {
		t.Fatalf("more than is left = %+v; want refused", st)
	}
	unknown := refundOf("d1111111-2222-4333-8444-555555555555", "e1111111-2222-4333-8444-555555555555", 100)
	if st, _ := c.Refund(ctx, unknown); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "RESOURCE_NOT_FOUND") {
		t.Fatalf("a refund of an unknown request to pay = %+v; want refused", st)
	}
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: first.Reference}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v; want pending", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+first.Reference)
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: first.Reference}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("status once settled = %+v, %v", st, err)
	}
	reqs, bodies := waitCallbacks(t, hook, 1)
	if ref, err := c.CallbackReference(reqs[len(reqs)-1].Header, bodies[len(bodies)-1]); err != nil || ref != first.Reference {
		t.Fatalf("callback %s = %q, %v; want the refund's reference", bodies[len(bodies)-1], ref, err)
	}
	rest := refundOf("f1111111-2222-4333-8444-555555555555", col.Reference, 600)
	if st, err := c.Refund(ctx, rest); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("the rest = %+v, %v", st, err)
	}
	if st, err := c.RefundStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("a refund never sent = %+v, %v; want NotFound", st, err)
	}
	noKey := &Client{BaseURL: srv.URL, Environment: c.Environment, CollectionKey: c.CollectionKey, APIUser: c.APIUser, APIKey: c.APIKey}
	if _, err := noKey.Refund(ctx, refundOf("a2111111-2222-4333-8444-555555555555", col.Reference, 1)); err == nil {
		t.Fatal("a refund without the Disbursement key was sent")
	}
}
