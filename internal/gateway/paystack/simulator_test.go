package paystack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// get reads the simulator's answer to GET path with the secret key.
func get(t *testing.T, baseURL, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, baseURL+path, nil)
	req.Header.Set("Authorization", "Bearer sk_test_sim")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	dec.Decode(&out)
	return res.StatusCode, out
}

// TestSimulator_SampleNumbers: the numbers of Paystack's own Charge API
// samples (doc-code-snippets src/doc/payments/payment-methods/mobile
// index.sh "0551234987", mobile-mpesa-offline index.sh "254700000000")
// are taken and pay once the customer approves.
func TestSimulator_SampleNumbers(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	for _, col := range []gateway.Collection{
		{Reference: "s1111111-2222-4333-8444-555555555555", Amount: 100, Currency: "GHS", Phone: "+233551234987", Operator: "mtn", Email: "customer@email.com"},
		{Reference: "s2111111-2222-4333-8444-555555555555", Amount: 100, Currency: "KES", Phone: "+254700000000", Operator: "mpesa", Email: "customer@email.com"},
	} {
		if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending || st.Instructions != approveText {
			t.Fatalf("%s: collect = %+v, %v; want pay_offline", col.Phone, st, err)
		}
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded {
			t.Fatalf("%s: after approval = %+v, %v; want succeeded", col.Phone, st, err)
		}
	}
	if _, _, n := hook.Last(); n != 2 {
		t.Fatalf("%d webhooks; want one charge.success each", n)
	}
}

// TestSimulator_Transaction: Verify Transaction shows the charge's amount,
// currency and, once paid, paid_at (doc-code-snippets
// src/api/transactions/verify/response.json); Paystack's id finds a
// payment for control calls only, not for the API, which goes by
// reference.
func TestSimulator_Transaction(t *testing.T) {
	sim, srv, c, _ := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "t1111111-2222-4333-8444-555555555555", Amount: 2550, Currency: "GHS", Phone: "+233241234567", Operator: "atl"}
	if _, err := c.Collect(ctx, col); err != nil {
		t.Fatal(err)
	}
	calls := sim.Calls()
	_, v := get(t, srv.URL, "/transaction/verify/"+col.Reference)
	data, _ := v["data"].(map[string]any)
	if data["amount"] != json.Number("2550") || data["currency"] != "GHS" || data["status"] != "pending" || data["paid_at"] != nil {
		t.Fatalf("verify = %v; want the amount, currency, pending and not paid", v)
	}
	id, _ := data["id"].(json.Number)
	if code, _ := get(t, srv.URL, "/transaction/verify/"+id.String()); id == "" || code != http.StatusBadRequest {
		t.Errorf("verify by Paystack's id = %d; want not found: Paystack verifies by reference", code)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id.String())
	_, v = get(t, srv.URL, "/transaction/verify/"+col.Reference)
	if data, _ := v["data"].(map[string]any); data["status"] != "success" || data["paid_at"] == nil {
		t.Fatalf("after settling by id = %v; want success, paid_at", v)
	}
	if got := sim.Calls() - calls; got != 3 {
		t.Errorf("%d API calls counted; want 3 (the control call is not one)", got)
	}
}

// TestSimulator_ChargeWebhooks: Paystack sends charge.success and no
// webhook for a failed charge; a callback control call on a failed charge
// sends none either, unless a status is claimed.
func TestSimulator_ChargeWebhooks(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "w1111111-2222-4333-8444-555555555555", Amount: 100, Currency: "GHS", Phone: "+233240000029", Operator: "mtn"}
	c.Collect(ctx, col)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+col.Reference)
	if _, body, n := hook.Last(); n != 0 {
		t.Fatalf("webhook %s for a failed charge; want none", body)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+col.Reference+"?status=success") // forged
	if h, body, n := hook.Last(); n != 1 || !strings.Contains(string(body), `"charge.success"`) {
		t.Fatalf("%d webhooks, last %s; want a claimed charge.success", n, body)
	} else if ref, err := c.CallbackReference(h, body); err != nil || ref != col.Reference {
		t.Fatalf("claimed webhook = %q, %v", ref, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("after a forged webhook = %+v; the charge stays failed", st)
	}
}

// TestSimulator_TransferStatuses: a transfer takes every status of openapi
// paths/transfer.yaml on a control call; webhooks go only for the events
// Paystack documents (transfer.success, transfer.failed,
// transfer.reversed); a status Paystack does not have is refused.
func TestSimulator_TransferStatuses(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	p := gateway.Payout{Reference: "u1111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "GHS", Phone: "+233241234567",
		Operator: "mtn", Country: "GH", RecipientName: "Ama Mensah"}
	st, err := c.Payout(ctx, p)
	if err != nil || !strings.HasPrefix(st.ProviderRef, "TRF_") {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	ref := gateway.Ref{Reference: p.Reference}
	if code := gatewaytest.ControlStatus(t, srv.URL, "/_sim/settle/"+p.Reference+"?status=paid"); code != http.StatusBadRequest {
		t.Fatalf("a status Paystack does not have = %d; want 400", code)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+st.ProviderRef+"?status=otp") // by transfer_code
	if st, _ := c.PayoutStatus(ctx, ref); st.Outcome != gateway.Pending || st.Reason != otpReason {
		t.Fatalf("at otp = %+v; want pending, waiting for the merchant's OTP", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference+"?status=abandoned")
	if st, _ := c.PayoutStatus(ctx, ref); st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "abandoned") {
		t.Fatalf("abandoned = %+v; want failed", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference) // ended once: stays abandoned
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+p.Reference)
	if _, body, n := hook.Last(); n != 0 {
		t.Fatalf("webhook %s for an abandoned transfer; Paystack documents no such event", body)
	}
	if st, _ := c.PayoutStatus(ctx, ref); st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "abandoned") {
		t.Fatalf("after settling again = %+v; want still abandoned", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+p.Reference+"?status=reversed")
	if _, body, n := hook.Last(); n != 1 || !strings.Contains(string(body), `"transfer.reversed"`) {
		t.Fatalf("%d webhooks, last %s; want a claimed transfer.reversed", n, body)
	}
}
