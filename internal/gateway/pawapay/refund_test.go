package pawapay

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

const (
	refundRef  = "8e2f4c61-3b7a-4d95-a0c8-6f1e2d3b4a57"
	depositRef = "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41"
)

// TestRefund_Documented holds the connector's refunds to pawaPay's
// documented requests and answers (testdata/, sources in SOURCES.md,
// "Refunds").
func TestRefund_Documented(t *testing.T) {
	ctx := context.Background()
	a := gatewaytest.NewAnswers(t)
	a.Set("GET /v2/active-conf", 200, gatewaytest.Golden(t, "active_conf.json"))
	c := &Client{BaseURL: a.URL, Token: "t", HTTP: &http.Client{Timeout: time.Second}}
	refund := gateway.Refund{Reference: refundRef, Collection: gateway.Ref{Reference: depositRef}, Amount: 1500, Currency: "XOF", Operator: "ORANGE_BFA"}
	for _, tc := range []struct {
		name  string
		code  int
		reply string
		want  gateway.Status
	}{
		{"accepted", 200, "refund_accepted.json", gateway.Status{Outcome: gateway.Pending}},
		{"duplicate", 200, "refund_duplicate_ignored.json", gateway.Status{Outcome: gateway.Pending}},
		{"no deposit", 200, "refund_rejected_not_found.json", gateway.Status{Outcome: gateway.Failed,
			Reason: "NOT_FOUND: Deposit with ID " + depositRef + " not found."}},
		{"deposit not final", 200, "refund_rejected_invalid_state.json", gateway.Status{Outcome: gateway.Failed,
			Reason: "INVALID_STATE: Deposit with ID " + depositRef + " has not finished processing."}},
		{"a parameter missing", 400, "refund_missing_parameter.json", gateway.Status{Outcome: gateway.Failed,
			Reason: "MISSING_PARAMETER: Request does not include the required parameter 'amount'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.Set("POST /v2/refunds", tc.code, gatewaytest.Golden(t, tc.reply))
			st, err := c.Refund(ctx, refund)
			if err != nil || st != tc.want {
				t.Fatalf("Refund = %+v, %v; want %+v", st, err, tc.want)
			}
			var sent map[string]any
			json.Unmarshal(a.Body("POST /v2/refunds"), &sent)
			mine, _ := gatewaytest.DocumentedFields(t, sent, "refund_request.json")
			if len(mine) != 4 {
				t.Errorf("request = %v; want exactly refundId, depositId, amount, currency", mine)
			}
		})
	}
	t.Run("unknown error", func(t *testing.T) {
		a.Set("POST /v2/refunds", 500, gatewaytest.Golden(t, "unknown_error.json"))
		if _, err := c.Refund(ctx, refund); !gateway.IsTransient(err) {
			t.Fatalf("a 500 = %v; want a transient error (it may have started)", err)
		}
	})
	for _, tc := range []struct {
		reply string
		code  int
		want  gateway.Status
	}{
		{"refund_status_processing.json", 200, gateway.Status{Outcome: gateway.Pending}},
		{"refund_status_completed.json", 200, gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "RF12345"}},
		{"refund_status_failed.json", 200, gateway.Status{Outcome: gateway.Failed, Reason: "RECIPIENT_NOT_FOUND: The recipient's wallet was not found"}},
		{"refund_status_not_found.json", 200, gateway.Status{Outcome: gateway.NotFound}},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			a.Set("GET /v2/refunds/"+refundRef, tc.code, gatewaytest.Golden(t, tc.reply))
			st, err := c.RefundStatus(ctx, gateway.Ref{Reference: refundRef})
			if err != nil || st != tc.want {
				t.Fatalf("RefundStatus = %+v, %v; want %+v", st, err, tc.want)
			}
		})
	}
	ref, err := c.CallbackReference(nil, gatewaytest.Golden(t, "refund_callback_completed.json"))
	if err != nil || ref != refundRef {
		t.Errorf("CallbackReference = %q, %v; want %s", ref, err, refundRef)
	}
	if !c.IdempotentRefund() {
		t.Error("a refundId sent again is DUPLICATE_IGNORED: idempotent")
	}
	if r, ok := gateway.Refunds(gateway.Observe(c, "pawapay", nil)); !ok || !r.IdempotentRefund() {
		t.Error("the observed connector lost its Refunder")
	}
}

// TestRefund_Simulator: the connector against pawaPay's simulator over
// real HTTP: a deposit refunded in parts, a duplicate ignored, an
// over-refund and a refund of an unfinished deposit rejected, the refund's
// outcome read and called back.
func TestRefund_Simulator(t *testing.T) {
	ctx := context.Background()
	e := newSimEnv(t)
	if _, err := e.client.Collect(ctx, collection(ref1, "+221771234567")); err != nil { // 5000 XOF
		t.Fatal(err)
	}
	refund := func(id string, amount int64) gateway.Status {
		t.Helper()
		st, err := e.client.Refund(ctx, gateway.Refund{Reference: id, Collection: gateway.Ref{Reference: ref1}, Amount: amount,
			Currency: "XOF", Operator: "WAVE_SEN"})
		if err != nil {
			t.Fatalf("refund %s: %v", id, err)
		}
		return st
	}
	if st := refund(ref2, 2000); st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "INVALID_STATE") {
		t.Fatalf("a refund of a deposit not final = %+v; want INVALID_STATE", st)
	}
	e.control(t, "/_sim/settle/"+ref1)
	if st := refund(ref2, 2000); st.Outcome != gateway.Pending {
		t.Fatalf("refund = %+v; want pending", st)
	}
	if st := refund(ref2, 2000); st.Outcome != gateway.Pending {
		t.Fatalf("the same refund again = %+v; want pending (DUPLICATE_IGNORED)", st)
	}
	const ref4 = "41111111-2222-4333-8444-555555555555"
	if st := refund(ref4, 3001); st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "AMOUNT_TOO_LARGE") {
		t.Fatalf("more than is left = %+v; want REJECTED AMOUNT_TOO_LARGE", st)
	}
	if st := refund(ref3, 3000); st.Outcome != gateway.Pending { // exactly the rest
		t.Fatalf("the rest = %+v; want pending", st)
	}
	if code, fc, _ := e.raw(t, "/v2/refunds", `{"refundId": "`+ref4+`", "depositId": "`+ref1+`"}`); code != 200 || fc != "AMOUNT_TOO_LARGE" {
		t.Fatalf("a refund without amount of a deposit refunded whole = %d %s; want REJECTED AMOUNT_TOO_LARGE", code, fc)
	}
	if code, fc, _ := e.raw(t, "/v2/refunds", `{"refundId": "`+ref4+`", "depositId": "51111111-2222-4333-8444-555555555555", "amount": "10", "currency": "XOF"}`); code != 200 || fc != "NOT_FOUND" {
		t.Fatalf("a refund of no deposit = %d %s; want REJECTED NOT_FOUND", code, fc)
	}
	if code, fc, _ := e.raw(t, "/v2/refunds", `{"refundId": "nope", "depositId": "`+ref1+`"}`); code != 400 || fc != "INVALID_PARAMETER" {
		t.Fatalf("a refundId not a UUID = %d %s; want 400 INVALID_PARAMETER", code, fc)
	}
	st, err := e.client.RefundStatus(ctx, gateway.Ref{Reference: ref2})
	if err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status before the end = %+v, %v", st, err)
	}
	e.control(t, "/_sim/settle/"+ref2)
	e.control(t, "/_sim/settle/"+ref3+"?status=FAILED")
	if st, _ := e.client.RefundStatus(ctx, gateway.Ref{Reference: ref2}); st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("completed = %+v", st)
	}
	if st, _ := e.client.RefundStatus(ctx, gateway.Ref{Reference: ref3}); st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "RECIPIENT_NOT_FOUND") {
		t.Fatalf("failed = %+v", st)
	}
	if st, _ := e.client.RefundStatus(ctx, gateway.Ref{Reference: ref4}); st.Outcome != gateway.NotFound {
		t.Fatalf("a refund never accepted = %+v; want not found", st)
	}
	// The failed part holds nothing: refunded again.
	if st := refund(ref4, 3000); st.Outcome != gateway.Pending {
		t.Fatalf("a refund after a failed one = %+v; want pending", st)
	}
	// Final refunds were called back, with their refundId.
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, bodies := e.callbacks.Received()
		var got []string
		for _, b := range bodies {
			if ref, err := e.client.CallbackReference(nil, b); err == nil && (ref == ref2 || ref == ref3) {
				got = append(got, ref)
			}
		}
		if len(got) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund callbacks = %v; want %s and %s", got, ref2, ref3)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
