package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestEncodeCharge_Golden: every field of Paystack's own sample is sent the
// same; the connector adds its reference.
func TestEncodeCharge_Golden(t *testing.T) {
	mine, _ := gatewaytest.DocumentedFields(t, encodeCharge(gateway.Collection{Reference: "ref-1", Amount: 100, Currency: "KES",
		Phone: "+254700000000", Operator: "mpesa_offline", Email: "customer@email.com"}), "charge_request.json")
	if mine["reference"] != "ref-1" {
		t.Errorf("reference = %v", mine["reference"])
	}
	noEmail := encodeCharge(gateway.Collection{Reference: "ref-2"})
	if noEmail.Email != "customer-ref-2@cauri.invalid" {
		t.Errorf("email without one = %q", noEmail.Email)
	}
}

// newSim starts the simulator on loopback, its webhooks to hook, and a
// client facing it.
func newSim(t *testing.T) (sim *Simulator, srv *httptest.Server, c *Client, hook *gatewaytest.Receiver) {
	hook = gatewaytest.NewReceiver(t)
	sim = &Simulator{SecretKey: "sk_test_sim", WebhookURL: hook.URL}
	srv = httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c = &Client{BaseURL: srv.URL, SecretKey: "sk_test_sim", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return sim, srv, c, hook
}

func TestClient_AgainstSimulator(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "GHS", Phone: "+233241234567", Operator: "mtn"}

	if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	if st, _ := c.Collect(ctx, col); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Duplicate") {
		t.Fatalf("same reference again = %+v; want refused", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("after settling = %+v, %v", st, err)
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks; want 1", len(hooks))
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	forged := hooks[0].Header.Clone()
	forged.Set("X-Paystack-Signature", strings.Repeat("0", 128))
	_, forgedErr := c.CallbackReference(forged, bodies[0])
	if err != nil || ref != col.Reference {
		t.Fatalf("signed webhook = %q, %v", ref, err)
	}
	if forgedErr == nil {
		t.Fatal("a webhook with a wrong signature was read")
	}
	mac := hmac.New(sha512.New, []byte("another key"))
	mac.Write(bodies[0])
	if _, err := c.CallbackReference(http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}}, bodies[0]); err == nil {
		t.Fatal("a webhook signed with another key was read")
	}

	refused := col
	refused.Reference, refused.Phone = "21111111-2222-4333-8444-555555555555", "+233240000039"
	if st, _ := c.Collect(ctx, refused); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "phone") {
		t.Fatalf("refused number = %+v", st)
	}
	failing := col
	failing.Reference, failing.Phone = "31111111-2222-4333-8444-555555555555", "+233240000029"
	c.Collect(ctx, failing)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+failing.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: failing.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("declined = %+v", st)
	}
	poor := col
	poor.Reference, poor.Phone = "41111111-2222-4333-8444-555555555555", "+233240000049"
	c.Collect(ctx, poor)
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+poor.Reference) // early: a signed charge.success while the charge is pending
	early, earlyBody, _ := hook.Last()
	if ref, err := c.CallbackReference(early, earlyBody); err != nil || ref != poor.Reference {
		t.Fatalf("claimed webhook = %q, %v", ref, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("status after an early webhook = %+v; the charge is still pending", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+poor.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Insufficient Funds") {
		t.Fatalf("low balance = %+v", st)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown reference = %+v, %v", st, err)
	}
	if _, err := (&Client{BaseURL: srv.URL, SecretKey: "wrong"}).Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key = %v; want a lasting error", err)
	}
	for _, mode := range []string{"500", "malformed", "slow&seconds=2"} {
		gatewaytest.Control(t, srv.URL, "/_sim/fault?mode="+mode)
		if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
			t.Errorf("fault %s: %v; want transient", mode, err)
		}
	}
}

// TestEncodeTransfer_Golden holds the recipient and the transfer to the
// examples of Paystack's Transfers guide.
func TestEncodeTransfer_Golden(t *testing.T) {
	rec, ok := encodeRecipient(gateway.Payout{Phone: "+233551234987", Operator: "mtn", Currency: "GHS", Country: "GH", RecipientName: "Abina Nana"})
	mine, documented := gatewaytest.DocumentedFields(t, rec, "transfer_recipient_request.json")
	if !ok || len(mine) != len(documented) {
		t.Fatalf("recipient = %v; want exactly the documented %v", mine, documented)
	}
	mpesa, ok := encodeRecipient(gateway.Payout{Phone: "+254712345678", Operator: "mpesa", Currency: "KES", Country: "KE"})
	if !ok || mpesa.AccountNumber != "0712345678" || mpesa.BankCode != "MPESA" || mpesa.Name != "0712345678" {
		t.Fatalf("M-PESA recipient = %+v", mpesa)
	}
	if _, ok := encodeRecipient(gateway.Payout{Operator: "orange"}); ok {
		t.Fatal("a recipient for an operator Paystack does not pay")
	}
	mine, documented = gatewaytest.DocumentedFields(t, encodeTransfer(gateway.Payout{Reference: "acv_9ee55786-2323-4760-98e2-6380c9cb3f68",
		Amount: 100000, Currency: "GHS", Description: "Bonus for the week"}, "RCP_gd9vgag7n5lr5ix"), "transfer_request.json")
	if len(mine) != len(documented)+1 || mine["currency"] != "GHS" {
		t.Fatalf("transfer = %v; want the documented fields and currency", mine)
	}
}

// TestDecodeTransfer_Golden reads Paystack's documented transfer answers.
func TestDecodeTransfer_Golden(t *testing.T) {
	type answer struct {
		code    int
		fixture string
	}
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "acv_9ee55786-2323-4760-98e2-6380c9cb3f68", Amount: 100000, Currency: "GHS", Phone: "+233551234987",
		Operator: "mtn", Country: "GH", RecipientName: "Abina Nana",
		Created: func(string) error { t.Error("Created was called: Paystack is asked by our reference"); return nil }}
	set := func(call string, a answer) { srv.Set(call, a.code, gatewaytest.Golden(t, a.fixture)) }
	set("POST /transferrecipient", answer{200, "transfer_recipient_created.json"})
	for _, tc := range []struct {
		answer
		want gateway.Status
	}{
		{answer{200, "transfer_queued.json"}, gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "TRF_v5tip3zx8nna9o78"}},
		{answer{200, "transfer_otp.json"}, gateway.Status{Outcome: gateway.Pending, ProviderRef: "TRF_1aqrqhoomp0rjro", Reason: otpReason}},
		{answer{400, "transfer_low_balance.json"}, gateway.Status{Outcome: gateway.Failed, Reason: "Your balance is not enough to fulfil this request", LowBalance: true}},
	} {
		set("POST /transfer", tc.answer)
		if st, err := c.Payout(ctx, p); err != nil || st != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.fixture, st, err, tc.want)
		}
	}
	var sent transferRequest
	json.Unmarshal(srv.Body("POST /transfer"), &sent)
	if sent.Recipient != "RCP_u2tnoyjjvh95pzm" {
		t.Errorf("transfer sent to recipient %q; want the created recipient's code", sent.Recipient)
	}
	set("GET /transfer/verify/acv_9ee55786-2323-4760-98e2-6380c9cb3f67", answer{200, "transfer_verify_success.json"})
	set("GET /transfer/verify/acv_9ee55786-2323-4760-98e2-6380c9cb3f68", answer{404, "transfer_not_found.json"})
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "acv_9ee55786-2323-4760-98e2-6380c9cb3f67"}); err != nil ||
		st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "TRF_8opchtrhtjlfz90n"}) {
		t.Errorf("verified = %+v, %v", st, err)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.NotFound {
		t.Errorf("not found = %+v, %v", st, err)
	}
	set("GET /transfer/verify/another", answer{200, "transfer_verify_success.json"})
	if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "another"}); err == nil {
		t.Error("a transfer about another reference was taken for this one")
	}
}

func TestTransferStatus(t *testing.T) {
	for status, want := range map[string]gateway.Outcome{"pending": gateway.Pending, "received": gateway.Pending, "otp": gateway.Pending,
		"success": gateway.Succeeded, "failed": gateway.Failed, "reversed": gateway.Failed, "abandoned": gateway.Failed,
		"blocked": gateway.Failed, "rejected": gateway.Failed, "new-one": gateway.Pending} {
		var a transferAnswer
		a.Data.Status, a.Data.GatewayResponse = status, "Account closed"
		st := transferStatus(a)
		if st.Outcome != want || want == gateway.Failed && !strings.HasPrefix(st.Reason, status+": ") {
			t.Errorf("%s = %+v; want %s", status, st, want)
		}
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "GHS", Phone: "+233241234567",
		Operator: "mtn", Country: "GH", RecipientName: "Ama Mensah", Description: "Remboursement commande 1042",
		Created: func(string) error { t.Error("Created was called: Paystack is asked by our reference"); return nil }}

	st, err := c.Payout(ctx, p)
	if err != nil || st.Outcome != gateway.Pending || !strings.HasPrefix(st.ProviderRef, "TRF_") {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	if again, err := c.Payout(ctx, p); err != nil || again.Outcome != gateway.Pending || again.ProviderRef != st.ProviderRef || sim.Payouts() != 1 {
		t.Fatalf("same reference again = %+v, %v, %d payouts; want the first transfer, paid once", again, err, sim.Payouts())
	}
	if c.IdempotentPayout() {
		t.Error("Paystack refuses a reference again rather than answering like the first time")
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.NotFound {
		t.Fatalf("a transfer read as a charge = %+v; want not found", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("after settling = %+v, %v", st, err)
	}
	h, body, n := hook.Last()
	if n != 1 || !strings.Contains(string(body), `"transfer.success"`) {
		t.Fatalf("%d webhooks, last %s; want one transfer.success", n, body)
	}
	if ref, err := c.CallbackReference(h, body); err != nil || ref != p.Reference {
		t.Fatalf("signed transfer webhook = %q, %v", ref, err)
	}
	forged := h.Clone()
	forged.Set("X-Paystack-Signature", strings.Repeat("0", 128))
	if _, err := c.CallbackReference(forged, body); err == nil {
		t.Fatal("a transfer webhook with a wrong signature was read")
	}

	poor := p
	poor.Reference, poor.Phone = "b1111111-2222-4333-8444-555555555555", "+233240000049"
	if st, err := c.Payout(ctx, poor); err != nil || st.Outcome != gateway.Failed || !st.LowBalance {
		t.Fatalf("low balance = %+v, %v", st, err)
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.NotFound {
		t.Fatalf("a transfer refused for balance = %+v; want never created", st)
	}
	refused := p
	refused.Reference, refused.Phone = "c1111111-2222-4333-8444-555555555555", "+233240000039"
	if st, _ := c.Payout(ctx, refused); st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "recipient") {
		t.Fatalf("refused recipient = %+v", st)
	}
	failing := p
	failing.Reference, failing.Phone = "d1111111-2222-4333-8444-555555555555", "+233240000029"
	if st, _ := c.Payout(ctx, failing); st.Outcome != gateway.Pending {
		t.Fatalf("failing recipient at first = %+v", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+failing.Reference)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: failing.Reference}); st.Outcome != gateway.Failed || st.LowBalance || !strings.HasPrefix(st.Reason, "failed") {
		t.Fatalf("failed transfer = %+v", st)
	}
	if h, body, _ := hook.Last(); !strings.Contains(string(body), `"transfer.failed"`) {
		t.Fatalf("webhook %s; want transfer.failed", body)
	} else if ref, err := c.CallbackReference(h, body); err != nil || ref != failing.Reference {
		t.Fatalf("failed webhook = %q, %v", ref, err)
	}
	reversed := p
	reversed.Reference, reversed.Phone = "e1111111-2222-4333-8444-555555555555", "+233240000129" // never settles alone
	c.Payout(ctx, reversed)
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+reversed.Reference) // early: a signed transfer.success while it is pending
	if h, body, _ := hook.Last(); !strings.Contains(string(body), `"transfer.success"`) {
		t.Fatalf("claimed webhook %s; want transfer.success", body)
	} else if ref, err := c.CallbackReference(h, body); err != nil || ref != reversed.Reference {
		t.Fatalf("claimed webhook = %q, %v", ref, err)
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: reversed.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("after an early webhook = %+v; the transfer is still pending", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+reversed.Reference+"?status=reversed")
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: reversed.Reference}); st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "reversed") {
		t.Fatalf("reversed = %+v", st)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown reference = %+v, %v", st, err)
	}
	other := p
	other.Reference, other.Operator = "f1111111-2222-4333-8444-555555555555", "orange"
	if st, err := c.Payout(ctx, other); err != nil || st.Outcome != gateway.Failed {
		t.Fatalf("an operator Paystack does not pay = %+v, %v", st, err)
	}
	if _, err := (&Client{BaseURL: srv.URL, SecretKey: "wrong"}).Payout(ctx, p); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key = %v; want a lasting error", err)
	}
	if sim.Payouts() != 3 {
		t.Fatalf("%d payouts accepted; want 3", sim.Payouts())
	}
	next := p
	next.Reference = "a2111111-2222-4333-8444-555555555555"
	for _, mode := range []string{"500", "malformed"} {
		gatewaytest.Control(t, srv.URL, "/_sim/fault?mode="+mode)
		if _, err := c.Payout(ctx, next); !gateway.IsTransient(err) {
			t.Errorf("payout, fault %s: %v; want transient", mode, err)
		}
		if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); !gateway.IsTransient(err) {
			t.Errorf("status, fault %s: %v; want transient", mode, err)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if sim.Payouts() != 3 {
		t.Fatalf("%d payouts after faults; want 3", sim.Payouts())
	}
}

// TestPayout_SettleAfter: the simulator settles a transfer by itself.
func TestPayout_SettleAfter(t *testing.T) {
	srv := httptest.NewServer(&Simulator{SecretKey: "sk_test_sim", SettleAfter: 20 * time.Millisecond})
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "sk_test_sim"}
	ref := gateway.Ref{Reference: "a3111111-2222-4333-8444-555555555555"}
	if _, err := c.Payout(context.Background(), gateway.Payout{Reference: ref.Reference, Amount: 1000, Currency: "KES",
		Phone: "+254712345678", Operator: "mpesa", Country: "KE"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, _ := c.PayoutStatus(context.Background(), ref); st.Outcome == gateway.Succeeded {
			return
		}
	}
	t.Fatal("the transfer never settled")
}
