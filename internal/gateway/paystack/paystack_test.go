package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestEncodeCharge_Golden: every field of a charge in the form of Paystack's
// own samples (Ghana's national number, Kenya's 254... digits); the
// connector adds its reference.
func TestEncodeCharge_Golden(t *testing.T) {
	for _, tc := range []struct {
		col     gateway.Collection
		fixture string
	}{
		{gateway.Collection{Reference: "ref-1", Amount: 2500, Currency: "GHS", Phone: "+233241234567", Operator: "mtn",
			Email: "ama.mensah@example.com"}, "charge_request.json"},
		{gateway.Collection{Reference: "ref-2", Amount: 15000, Currency: "KES", Phone: "+254712345678", Operator: "mpesa",
			Email: "wanjiru@example.com"}, "charge_request_kes.json"},
	} {
		mine, documented := gatewaytest.DocumentedFields(t, encodeCharge(tc.col), tc.fixture)
		if mine["reference"] != tc.col.Reference || len(mine) != len(documented)+1 {
			t.Errorf("%s: got %v; want the documented fields and reference %q", tc.fixture, mine, tc.col.Reference)
		}
	}
	noEmail := encodeCharge(gateway.Collection{Reference: "ref-3"})
	if noEmail.Email != "customer-ref-3@cauri.invalid" {
		t.Errorf("email without one = %q; want customer-ref-3@cauri.invalid", noEmail.Email)
	}
}

// TestCollectionStatus_SettledAsksNoStep: a settled transaction is read
// from Verify Transaction alone; Check Pending Charge is asked only while
// it waits (TestConformance holds both readings).
func TestCollectionStatus_SettledAsksNoStep(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	paid := gateway.Ref{Reference: "5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b40"}
	srv.Set("GET /transaction/verify/"+paid.Reference, 200, gatewaytest.Golden(t, "verify_success.json"))
	srv.Set("GET /charge/"+paid.Reference, 200, gatewaytest.Golden(t, "charge_send_otp.json"))
	if st, err := c.CollectionStatus(context.Background(), paid); err != nil || st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "61024"}) {
		t.Errorf("paid: got %+v, %v; want succeeded", st, err)
	}
	if slices.Contains(srv.Calls(), "GET /charge/"+paid.Reference) {
		t.Error("a settled transaction's charge step was asked for")
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

// TestTelecelVoucher_AgainstSimulator: a Telecel Cash charge waits for the
// customer's voucher (send_otp) until SubmitCode sends it; a wrong voucher
// fails the charge; the other operators and M-PESA go straight to the
// customer's approval (pay_offline).
func TestTelecelVoucher_AgainstSimulator(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "71111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "GHS", Phone: "+233201234567", Operator: "vod"}

	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || !st.NeedsCode || st.Instructions != voucherText {
		t.Fatalf("Telecel charge = %+v, %v; want pending, waiting for a voucher, with Paystack's words", st, err)
	}
	ref := gateway.Ref{Reference: col.Reference}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending || !st.NeedsCode || st.Instructions != voucherText {
		t.Fatalf("status while the voucher is awaited = %+v, %v; want NeedsCode again", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference) // no approval can come before the voucher
	if st, _ := c.CollectionStatus(ctx, ref); st.Outcome != gateway.Pending || !st.NeedsCode {
		t.Fatalf("settled without a voucher = %+v; want still waiting for it", st)
	}
	if st, err := c.SubmitCode(ctx, ref, "482913"); err != nil || st.Outcome != gateway.Pending || st.NeedsCode {
		t.Fatalf("voucher taken = %+v, %v; want pending, no code awaited", st, err)
	}
	if st, err := c.SubmitCode(ctx, ref, "482913"); err != nil || st.Outcome != gateway.Pending || st.NeedsCode || st.Reason == "" {
		t.Fatalf("voucher sent again = %+v, %v; want the charge as it stands and Paystack's refusal", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("after approval = %+v, %v; want succeeded", st, err)
	}
	if _, body, n := hook.Last(); n != 1 || !strings.Contains(string(body), `"charge.success"`) {
		t.Fatalf("%d webhooks, last %s; want one charge.success", n, body)
	}

	wrong := col
	wrong.Reference = "72111111-2222-4333-8444-555555555555"
	c.Collect(ctx, wrong)
	if st, err := c.SubmitCode(ctx, gateway.Ref{Reference: wrong.Reference}, wrongVoucher); err != nil || st.Outcome != gateway.Failed || st.Reason == "" {
		t.Fatalf("wrong voucher = %+v, %v; want failed with Paystack's reason", st, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: wrong.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("after a wrong voucher = %+v; want failed", st)
	}

	for _, other := range []gateway.Collection{
		{Reference: "73111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "GHS", Phone: "+233271234567", Operator: "atl"},
		{Reference: "74111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "KES", Phone: "+254712345678", Operator: "mpesa"},
	} {
		st, err := c.Collect(ctx, other)
		if err != nil || st.Outcome != gateway.Pending || st.NeedsCode || st.Instructions != approveText {
			t.Errorf("%s charge = %+v, %v; want pending, approved on the phone", other.Operator, st, err)
		}
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: other.Reference}); err != nil || st.Instructions != approveText {
			t.Errorf("%s status = %+v, %v; want the approval's instructions", other.Operator, st, err)
		}
	}
	mismatch := gateway.Collection{Reference: "75111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "KES", Phone: "+254712345678", Operator: "mtn"}
	if st, err := c.Collect(ctx, mismatch); err != nil || st.Outcome != gateway.Failed {
		t.Errorf("a Ghana provider in KES = %+v, %v; want refused", st, err)
	}
}

// TestTelecelVoucher_SettleAfter: the simulator settles a Telecel charge by
// itself only once its voucher is in.
func TestTelecelVoucher_SettleAfter(t *testing.T) {
	srv := httptest.NewServer(&Simulator{SecretKey: "sk_test_sim", SettleAfter: 20 * time.Millisecond})
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "sk_test_sim"}
	ctx := context.Background()
	ref := gateway.Ref{Reference: "76111111-2222-4333-8444-555555555555"}
	if _, err := c.Collect(ctx, gateway.Collection{Reference: ref.Reference, Amount: 1000, Currency: "GHS", Phone: "+233201234567", Operator: "vod"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if st, _ := c.CollectionStatus(ctx, ref); st.Outcome != gateway.Pending || !st.NeedsCode {
		t.Fatalf("before the voucher = %+v; want still waiting for it", st)
	}
	if _, err := c.SubmitCode(ctx, ref, "482913"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, _ := c.CollectionStatus(ctx, ref); st.Outcome == gateway.Succeeded {
			return
		}
	}
	t.Fatal("the charge never settled after its voucher")
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
		Amount: 100000, Currency: "GHS", Description: "Bonus for the week"}, "RCP_u2tnoyjjvh95pzm"), "transfer_request.json")
	if len(mine) != len(documented)+1 || mine["currency"] != "GHS" {
		t.Fatalf("transfer = %v; want the documented fields and currency", mine)
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
