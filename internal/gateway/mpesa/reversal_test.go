package mpesa

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestEncodeReversal_Golden holds the reversal to the portal's example
// (testdata/reversal_request.json): its fields, numbers as strings, and
// RecieverIdentifierType spelt as Safaricom spells it; Occasion, which the
// example leaves out, is the library's (src/endpoints/reversal.js).
func TestEncodeReversal_Golden(t *testing.T) {
	c := &Client{InitiatorName: "apiop37", ShortCode: "603021"}
	req := c.encodeReversal(ref1, "PDU91HIVIT", "200", "Payment reversal",
		"jUb+dOXJiBDui8FnruaFckZJQup3kmmCH5XJ4NY/Oo3KaUTmJbxUiVgzBjqdL533u5Q435MT2VJwr/ /1fuZvA===",
		"https://mydomain.com/reversal/result", "https://mydomain.com/reversal/queue")
	mine, documented := gatewaytest.DocumentedFields(t, req, "reversal_request.json")
	if _, ok := mine["Occasion"]; !ok || len(mine) != len(documented)+1 {
		t.Fatalf("request = %v; want the documented fields and Occasion", mine)
	}
	if r := c.encodeReversal(ref1, "PDU91HIVIT", "1", "", "x", "u", "v"); r.Remarks != "Refund" || r.Occasion != "0f8fad5bd9cb" {
		t.Fatalf("remarks %q, occasion %q", r.Remarks, r.Occasion)
	}
	till := &Client{ShortCode: "174379", TillNumber: "5123456"}
	if r := till.encodeReversal(ref1, "PDU91HIVIT", "1", "x", "x", "u", "v"); r.ReceiverParty != "5123456" {
		t.Fatalf("a till's ReceiverParty %q", r.ReceiverParty)
	}
}

// reversalEnv is a simulator, a client with an initiator, and Cauri's
// callback route as the client reads it.
func reversalEnv(t *testing.T) (*Simulator, *Client, *receiver, string) {
	t.Helper()
	s := &Simulator{ConsumerKey: "key", ConsumerSecret: "secret", ShortCode: sandboxShortCode, PassKey: sandboxPassKey, InitiatorName: "testapi"}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, ConsumerKey: "key", ConsumerSecret: "secret", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
		InitiatorName: "testapi", InitiatorPassword: "Safaricom999!*!", Environment: Sandbox, HTTP: srv.Client()}
	return s, c, newReceiver(t, c), srv.URL
}

// paidPush is an STK payment of 1,500 KES made through the simulator and
// confirmed as the service confirms it: its callback read, then its status
// query, whose ProviderRef is the callback's receipt.
func paidPush(t *testing.T, s *Simulator, c *Client, rcv *receiver) string {
	t.Helper()
	ctx := context.Background()
	col := collection(ref1, "+254708374149")
	col.NotifyURL = rcv.srv.URL + "/callbacks/gw_1"
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("Collect = %+v, %v", st, err)
	}
	if err := s.Settle(st.ProviderRef, "SUCCESS"); err != nil {
		t.Fatal(err)
	}
	// The callback comes back to the push's tokened CallBackURL: it names
	// our reference and proves the payment's receipt.
	if got := rcv.next(t); got != ref1 {
		t.Fatalf("callback reference %q; want our %q", got, ref1)
	}
	receipt := rcv.lastPaid
	paid, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: st.ProviderRef})
	if err != nil || paid.Outcome != gateway.Succeeded || !isReceipt(receipt) {
		t.Fatalf("CollectionStatus = %+v, %v, receipt %q; want succeeded with a receipt", paid, err, receipt)
	}
	paid.ProviderRef = receipt
	// A payment known by its receipt is a collected one: not asked again.
	calls := s.Calls()
	if again, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: paid.ProviderRef}); err != nil || again != paid || s.Calls() != calls {
		t.Fatalf("CollectionStatus by receipt = %+v, %v (%d calls)", again, err, s.Calls()-calls)
	}
	return paid.ProviderRef
}

func reversalOf(receipt, notify string) gateway.Refund {
	return gateway.Refund{Reference: "7d3c2a10-5b7e-4c41-9f0e-2a6b8d1e4f55", Collection: gateway.Ref{Reference: ref1, ProviderRef: receipt},
		Amount: 150000, Currency: "KES", Operator: "MPESA", Reason: "Order cancelled", NotifyURL: notify}
}

// TestRefund_AgainstSimulator: the payment's receipt reversed whole,
// pending until its result reaches the callback route with its token,
// which names the refund and keeps the outcome for RefundStatus; a second
// reversal of it fails (R000001), as does one of an unknown receipt
// (R000002).
func TestRefund_AgainstSimulator(t *testing.T) {
	s, c, rcv, simURL := reversalEnv(t)
	ctx := context.Background()
	notify := rcv.srv.URL + "/callbacks/gw_1"
	receipt := paidPush(t, s, c, rcv)

	r := reversalOf(receipt, notify)
	st, err := c.Refund(ctx, r)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" {
		t.Fatalf("Refund = %+v, %v", st, err)
	}
	gatewaytest.Control(t, simURL, "/_sim/settle/"+st.ProviderRef)
	if got := rcv.next(t); got != r.Reference {
		t.Fatalf("result reference %q", got)
	}
	done, err := c.RefundStatus(ctx, gateway.Ref{Reference: r.Reference, ProviderRef: st.ProviderRef, NotifyURL: notify})
	if err != nil || done.Outcome != gateway.Succeeded || !strings.HasPrefix(done.ProviderRef, "SIR") {
		t.Fatalf("RefundStatus = %+v, %v", done, err)
	}

	for _, tc := range []struct{ receipt, code string }{{receipt, "R000001"}, {"QKL1234XYZ", "R000002"}} {
		r := reversalOf(tc.receipt, notify)
		r.Reference = "ref-" + tc.code
		st, err := c.Refund(ctx, r)
		if err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("Refund(%s) = %+v, %v", tc.receipt, st, err)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+st.ProviderRef)
		if got := rcv.next(t); got != r.Reference {
			t.Fatalf("result reference %q", got)
		}
		failed, err := c.RefundStatus(ctx, gateway.Ref{Reference: r.Reference, ProviderRef: st.ProviderRef, NotifyURL: notify})
		if err != nil || failed.Outcome != gateway.Failed || !strings.HasPrefix(failed.Reason, tc.code+": ") {
			t.Fatalf("RefundStatus(%s) = %+v, %v", tc.receipt, failed, err)
		}
	}
	if s.Reversals() != 3 {
		t.Fatalf("%d reversals; want 3", s.Reversals())
	}
}

// TestRefund_LostAnswers: a reversal whose acknowledgement and result are
// lost is not sent again: RefundStatus asks the transaction status query
// about the payment, by its receipt, and the answer that it was reversed
// ends the refund; with the acknowledgement kept and the result lost, the
// query asks about the reversal by Daraja's OriginatorConversationID.
// Never NotFound.
func TestRefund_LostAnswers(t *testing.T) {
	s, c, rcv, _ := reversalEnv(t)
	ctx := context.Background()
	notify := rcv.srv.URL + "/callbacks/gw_1"
	receipt := paidPush(t, s, c, rcv)

	s.LoseReversalAnswers.Store(true)
	s.LoseResults.Store(true)
	r := reversalOf(receipt, notify)
	if st, err := c.Refund(ctx, r); err == nil || !gateway.IsTransient(err) || gateway.ErrorOf(err).NotSent {
		t.Fatalf("Refund without an answer = %+v, %v; want a transient error, maybe sent", st, err)
	}
	if c.IdempotentRefund() || s.Reversals() != 1 {
		t.Fatalf("%d reversals (idempotent %v)", s.Reversals(), c.IdempotentRefund())
	}
	ref := gateway.Ref{Reference: r.Reference, Collection: &gateway.Ref{Reference: ref1, ProviderRef: receipt}, NotifyURL: notify}
	// Not reversed yet: the payment is only "Completed", which concludes
	// nothing, and names no refund (nothing asks again at once).
	if st, err := c.RefundStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus = %+v, %v", st, err)
	}
	if got := rcv.next(t); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "concludes nothing") {
		t.Fatalf("status result of a payment not reversed read as %q", got)
	}
	if st, err := c.RefundStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus after a Completed payment = %+v, %v; want pending", st, err)
	}
	rcv.next(t) // that second query's own result: still not reversed
	// A receipt M-PESA does not have: 2032, which never ends a refund.
	unknown := gateway.Ref{Reference: "ref-unknown", Collection: &gateway.Ref{Reference: "x", ProviderRef: "SIM9999999"}, NotifyURL: notify}
	if st, err := c.RefundStatus(ctx, unknown); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus(unknown receipt) = %+v, %v", st, err)
	}
	if got := rcv.next(t); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "2032") {
		t.Fatalf("2032 about a refund read as %q", got)
	}
	if st, err := c.RefundStatus(ctx, unknown); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus after 2032 = %+v, %v; want pending", st, err)
	}
	rcv.next(t)
	lost := s.reversalBy(func(*simReversal) bool { return true })
	s.settleReversal(lost, "")
	if st, err := c.RefundStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus = %+v, %v", st, err)
	}
	if got := rcv.next(t); got != r.Reference {
		t.Fatalf("status result reference %q", got)
	}
	if st, err := c.RefundStatus(ctx, ref); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("RefundStatus after the payment was reversed = %+v, %v", st, err)
	}

	// The acknowledgement kept, the result lost: asked by Daraja's id.
	s.LoseReversalAnswers.Store(false)
	second := paidPush(t, s, c, rcv)
	r2 := reversalOf(second, notify)
	r2.Reference = "ref-2"
	st, err := c.Refund(ctx, r2)
	if err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("Refund = %+v, %v", st, err)
	}
	s.settleReversal(s.reversalBy(func(rv *simReversal) bool { return rv.origID == st.ProviderRef }), "")
	rcv.none(t)
	ref2 := gateway.Ref{Reference: r2.Reference, ProviderRef: st.ProviderRef, NotifyURL: notify}
	if got, err := c.RefundStatus(ctx, ref2); err != nil || got.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus = %+v, %v", got, err)
	}
	if got := rcv.next(t); got != r2.Reference {
		t.Fatalf("status result reference %q", got)
	}
	if got, err := c.RefundStatus(ctx, ref2); err != nil || got.Outcome != gateway.Succeeded || !strings.HasPrefix(got.ProviderRef, "SIR") {
		t.Fatalf("RefundStatus = %+v, %v", got, err)
	}
	if s.Reversals() != 2 {
		t.Fatalf("%d reversals; want 2, each sent once", s.Reversals())
	}
}

// TestReversalCallback_Forged: a reversal result without the token of its
// reference, or with another's, or about another receipt or amount, ends
// nothing; the documented results end the refund as Daraja says.
func TestReversalCallback_Forged(t *testing.T) {
	c := &Client{ConsumerSecret: "secret"}
	success, failed := b2cFixture(t, "reversal_result_success.json"), b2cFixture(t, "reversal_result_failed.json")
	const reference = "7d3c2a10-5b7e-4c41-9f0e-2a6b8d1e4f55"
	header := resultHeader
	// a result address as the connector makes them, for amount and receipt.
	addr := func(amount, receipt string) url.Values {
		u, err := c.resultURLFor("https://cauri.example/callbacks/gw_1", "reversal", reference, amount, receipt)
		if err != nil {
			t.Fatal(err)
		}
		return addressParts(u)
	}
	right := addr("1", "SKC82PACB8")
	tampered := func(key, value string) url.Values {
		q := url.Values{}
		for k, v := range right {
			q[k] = v
		}
		q.Set(key, value)
		return q
	}
	for name, q := range map[string]url.Values{
		"no token":          {kindKey: {"reversal"}, refKey: {reference}, amountKey: {"1"}, subjectKey: {"SKC82PACB8"}},
		"wrong token":       tampered(tokenKey, "AAAA"),
		"another refund":    tampered(refKey, "another"),
		"another amount":    tampered(amountKey, "1000"),
		"another receipt":   tampered(subjectKey, "SKC82PACB9"),
		"about another one": addr("1", "QKL1234XYZ"),
		"of another amount": addr("2", "SKC82PACB8"),
	} {
		if ref, err := c.CallbackReference(header(q), success); err == nil {
			t.Errorf("%s: read as %q; want ignored", name, ref)
		}
	}
	if _, ok := c.results.take(reference); ok {
		t.Fatal("an ignored result was kept")
	}
	if ref, err := c.CallbackReference(header(right), success); err != nil || ref != reference {
		t.Fatalf("the documented result = %q, %v", ref, err)
	}
	if st, err := c.RefundStatus(context.Background(), gateway.Ref{Reference: reference}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef != "SKE52PAWR9" {
		t.Fatalf("RefundStatus = %+v, %v", st, err)
	}
	if ref, err := c.CallbackReference(header(right), failed); err != nil || ref != reference {
		t.Fatalf("the documented failure = %q, %v", ref, err)
	}
	if st, _ := c.RefundStatus(context.Background(), gateway.Ref{Reference: reference}); st.Outcome != gateway.Failed ||
		st.Reason != "R000002: The OriginalTransactionID is invalid." {
		t.Fatalf("RefundStatus = %+v", st)
	}
	// A timeout is only a signal: it names the refund, concludes nothing.
	timeout, _ := c.resultURLFor("https://cauri.example/callbacks/gw_1", "reversal_timeout", reference, "1", "SKC82PACB8")
	if ref, err := c.CallbackReference(addressHeader(timeout), []byte(`{}`)); err != nil || ref != reference {
		t.Fatalf("timeout = %q, %v", ref, err)
	}
	if _, ok := c.results.take(reference); ok {
		t.Fatal("a timeout concluded")
	}
	// The initiator's results say what to fix.
	for code, words := range map[string]string{"21": "Org Reversals Initiator", "2001": "initiator_password", "8006": "initiator_password"} {
		body := []byte(`{"Result":{"ResultType":0,"ResultCode":"` + code + `","ResultDesc":"x","TransactionID":"SKE0000000"}}`)
		if _, err := c.CallbackReference(header(right), body); err != nil {
			t.Fatal(err)
		}
		st, _ := c.RefundStatus(context.Background(), gateway.Ref{Reference: reference})
		if st.Outcome != gateway.Failed || !strings.Contains(st.Reason, words) || !st.CredentialsRefused {
			t.Fatalf("%s: %+v", code, st)
		}
	}
}

// TestRefund_RefusedBeforeSending: what cannot be reversed is refused
// without a call: no receipt known, no initiator, cents, another currency.
func TestRefund_RefusedBeforeSending(t *testing.T) {
	a := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: a.URL, ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
		InitiatorName: "testapi", SecurityCredential: "cred", HTTP: &http.Client{Timeout: time.Second}}
	ctx := context.Background()
	if !c.WholeRefundsOnly() || c.IdempotentRefund() || c.RefundsUnavailable() != "" {
		t.Fatal("a reversal is of a whole payment, without an idempotency key, available with an initiator")
	}
	noReceipt := reversalOf("ws_CO_191220191020363925", "https://cauri.example/callbacks/gw_1")
	if _, err := c.Refund(ctx, noReceipt); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || !strings.Contains(err.Error(), "receipt") {
		t.Fatalf("no receipt: %v", err)
	}
	cents := reversalOf("PDU91HIVIT", "https://cauri.example/callbacks/gw_1")
	cents.Amount = 150050
	if st, err := c.Refund(ctx, cents); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "whole shillings") {
		t.Fatalf("cents: %+v, %v", st, err)
	}
	other := reversalOf("PDU91HIVIT", "https://cauri.example/callbacks/gw_1")
	other.Currency = "XOF"
	if st, err := c.Refund(ctx, other); err != nil || st.Outcome != gateway.Failed {
		t.Fatalf("XOF: %+v, %v", st, err)
	}
	noNotify := reversalOf("PDU91HIVIT", "")
	if _, err := c.Refund(ctx, noNotify); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("no callback address: %v", err)
	}
	for _, cc := range []*Client{{InitiatorPassword: "x"}, {InitiatorName: "testapi"}} {
		if why := cc.RefundsUnavailable(); !strings.Contains(why, "initiator") {
			t.Fatalf("RefundsUnavailable = %q", why)
		}
	}
	if calls := a.Calls(); len(calls) != 0 {
		t.Fatalf("calls %v; want none", calls)
	}
}

// TestRefund_ReversalInitiator: a gateway with a reversal initiator of its
// own (Safaricom's "Org Reversals Initiator" role, given apart from "ORG
// B2C API Initiator") reverses with it, and asks about its reversals with
// it, while B2C payouts keep theirs; without one, the B2C initiator
// reverses, which Daraja refuses (21) when only the other has the role;
// a wrong reversal credential names the reversal credentials.
func TestRefund_ReversalInitiator(t *testing.T) {
	s, c, rcv, simURL := reversalEnv(t)
	s.ReversalInitiatorName, s.ReversalCredential = "revapi", base64.StdEncoding.EncodeToString(make([]byte, 256))
	c.ReversalInitiatorName, c.ReversalSecurityCredential = "revapi", s.ReversalCredential
	ctx := context.Background()
	notify := rcv.srv.URL + "/callbacks/gw_1"
	if why := c.RefundsUnavailable(); why != "" {
		t.Fatalf("RefundsUnavailable = %q", why)
	}

	receipt := paidPush(t, s, c, rcv)
	r := reversalOf(receipt, notify)
	st, err := c.Refund(ctx, r)
	if err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("Refund = %+v, %v", st, err)
	}
	// Its result lost: the status query, by the reversal initiator, finds
	// it reversed.
	s.LoseResults.Store(true)
	gatewaytest.Control(t, simURL, "/_sim/settle/"+st.ProviderRef)
	ref := gateway.Ref{Reference: r.Reference, ProviderRef: st.ProviderRef, NotifyURL: notify}
	if got, err := c.RefundStatus(ctx, ref); err != nil || got.Outcome != gateway.Pending {
		t.Fatalf("RefundStatus = %+v, %v", got, err)
	}
	if got := rcv.next(t); got != r.Reference {
		t.Fatalf("status result reference %q", got)
	}
	if got, err := c.RefundStatus(ctx, ref); err != nil || got.Outcome != gateway.Succeeded {
		t.Fatalf("RefundStatus after its status result = %+v, %v; want reversed by the reversal initiator", got, err)
	}
	s.LoseResults.Store(false)
	// B2C payouts keep the B2C initiator.
	if st, err := c.Payout(ctx, payout("ref-payout", "+254708374149", notify)); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("Payout = %+v, %v", st, err)
	}
	gatewaytest.Control(t, simURL, "/_sim/settle/ref-payout")
	rcv.next(t)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: "ref-payout", NotifyURL: notify}); st.Outcome != gateway.Succeeded {
		t.Fatalf("the B2C initiator's payout = %+v", st)
	}

	for _, tc := range []struct {
		name       string
		client     func(*Client)
		code, word string
	}{
		{"shared initiator without the role", func(c *Client) { c.ReversalInitiatorName, c.ReversalSecurityCredential = "", "" },
			"21", `the gateway's initiator_name needs the "Org Reversals Initiator" role`},
		{"wrong reversal credential", func(c *Client) { c.ReversalSecurityCredential = "d3Jvbmc=" },
			"2001", "reversal_initiator_password or reversal_security_credential"},
	} {
		cc := &Client{BaseURL: c.BaseURL, ConsumerKey: c.ConsumerKey, ConsumerSecret: c.ConsumerSecret, ShortCode: c.ShortCode, PassKey: c.PassKey,
			InitiatorName: c.InitiatorName, InitiatorPassword: c.InitiatorPassword, Environment: c.Environment, HTTP: c.HTTP,
			ReversalInitiatorName: c.ReversalInitiatorName, ReversalSecurityCredential: c.ReversalSecurityCredential}
		tc.client(cc)
		rcv := newReceiver(t, cc)
		again := reversalOf(paidPush(t, s, cc, rcv), rcv.srv.URL+"/callbacks/gw_1")
		again.Reference = "ref-" + tc.code
		st, err := cc.Refund(ctx, again)
		if err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s: Refund = %+v, %v", tc.name, st, err)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+st.ProviderRef)
		rcv.next(t)
		got, _ := cc.RefundStatus(ctx, gateway.Ref{Reference: again.Reference, ProviderRef: st.ProviderRef})
		if got.Outcome != gateway.Failed || !strings.HasPrefix(got.Reason, tc.code+": ") || !strings.Contains(got.Reason, tc.word) || !got.CredentialsRefused {
			t.Fatalf("%s: %+v; want %s naming %q", tc.name, got, tc.code, tc.word)
		}
	}
}
