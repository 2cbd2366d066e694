package mtnmomo

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// payRef is the reference of the payout fixtures (transfer_request.json).
const payRef = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

func payout(ref, phone string) gateway.Payout {
	return gateway.Payout{Reference: ref, Amount: 15000, Currency: "RWF", Phone: phone, Operator: "mtnrwanda", Country: "RW",
		RecipientName: "Jean Uwimana", Description: "Salary March 2024"}
}

func TestEncodeTransfer_Golden(t *testing.T) {
	p := payout(payRef, "+250788123456")
	p.NotifyURL = "https://cauri.example/callbacks/gw_1"
	mine, documented := gatewaytest.DocumentedFields(t, encodeTransfer(p), "transfer_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented fields", mine)
	}
	p.Description, p.Currency, p.Amount = " ", "ZMW", 250075
	if r := encodeTransfer(p); r.PayeeNote != payRef || r.Amount != "2500.75" {
		t.Fatalf("transfer = %+v", r)
	}
}

func TestPayout_Headers(t *testing.T) {
	token := gatewaytest.Golden(t, "token.json")
	srv := gatewaytest.NewRecorder(t, func(r *http.Request) (int, []byte) {
		if strings.HasSuffix(r.URL.Path, "/token/") {
			return http.StatusOK, token
		}
		return http.StatusAccepted, nil
	})
	c := &Client{BaseURL: srv.URL, Environment: "mtnrwanda", CollectionKey: "col-key", DisbursementKey: "dis-key", APIUser: "u", APIKey: "k"}
	p := payout(payRef, "+250788123456")
	p.NotifyURL = "https://cauri.example/callbacks/gw_1"
	ctx := context.Background()
	if st, err := c.Payout(ctx, p); err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	c.CollectionStatus(ctx, gateway.Ref{Reference: payRef})
	reqs := srv.Requests()
	var paths []string
	for _, r := range reqs {
		paths = append(paths, r.Method+" "+r.Path+" "+r.Header.Get("Ocp-Apim-Subscription-Key"))
	}
	// Each product its key and its token.
	if strings.Join(paths, ", ") != "POST /disbursement/token/ dis-key, POST /disbursement/v1_0/transfer dis-key, "+
		"POST /collection/token/ col-key, GET /collection/v1_0/requesttopay/"+payRef+" col-key" {
		t.Fatalf("calls = %v", paths)
	}
	tr := reqs[1]
	for k, want := range map[string]string{"Authorization": "Bearer " + gatewaytest.DocumentedToken(t), "X-Reference-Id": payRef,
		"X-Target-Environment": "mtnrwanda", "X-Callback-Url": p.NotifyURL, "Content-Type": "application/json"} {
		if got := tr.Header.Get(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	var sent map[string]any
	json.Unmarshal(tr.Body, &sent)
	if mine, documented := gatewaytest.DocumentedFields(t, sent, "transfer_request.json"); len(mine) != len(documented) {
		t.Fatalf("sent %v", mine)
	}
}

func TestPayout_NeedsDisbursementKey(t *testing.T) {
	srv, c := newAnswers(t)
	c.DisbursementKey = ""
	ctx := context.Background()
	_, err := c.Payout(ctx, payout(payRef, "+250788123456"))
	if err == nil || gateway.IsTransient(err) || !strings.Contains(err.Error(), "payouts need the disbursement subscription key") ||
		!strings.Contains(err.Error(), "disbursement_key") {
		t.Fatalf("payout without the key: %v; want a lasting error naming it", err)
	}
	if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: payRef}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("status without the key: %v", err)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("calls %v; want none", calls)
	}
	if st, err := c.Payout(ctx, payout("salary-1", "+250788123456")); err != nil || st.Outcome != gateway.Failed {
		t.Fatalf("reference not a UUID = %+v, %v; want failed", st, err)
	}
	if !c.IdempotentPayout() {
		t.Fatal("transfers not taken for idempotent")
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	send := func(ref, phone string) gateway.Payout {
		p := payout(ref, phone)
		p.Currency, p.NotifyURL = "UGX", hook.URL+"/callbacks/gw_mtn"
		return p
	}

	// Sent three times under one reference: one payout.
	p := send(simRef1, "+256772123456")
	for range 3 {
		if st, err := c.Payout(ctx, p); err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
			t.Fatalf("payout = %+v, %v", st, err)
		}
	}
	if sim.Payouts() != 1 || simCount(sim, "transfer") != 1 {
		t.Fatalf("%d payouts for one reference", sim.Payouts())
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("a payout read as a request to pay = %+v, %v; want not found", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference})
	if err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("settled = %+v, %v", st, err)
	}
	reqs, bodies := waitCallbacks(t, hook, 1)
	if ref, err := c.CallbackReference(reqs[0].Header, bodies[0]); err != nil || ref != p.Reference || reqs[0].Method != http.MethodPut ||
		!strings.Contains(string(bodies[0]), `"payee"`) {
		t.Fatalf("payout callback %s %s = %q, %v", reqs[0].Method, bodies[0], ref, err)
	}
	if st, _ := c.Payout(ctx, p); st.Outcome != gateway.Pending || sim.Payouts() != 1 {
		t.Fatalf("after paying, again = %+v (%d payouts)", st, sim.Payouts())
	}

	// The merchant's account lacks the funds: refused, nothing sent, nothing found.
	poor := send(simRef2, "+256770000049")
	if st, err := c.Payout(ctx, poor); err != nil || st.Outcome != gateway.Failed || !st.LowBalance || !strings.Contains(st.Reason, "NOT_ENOUGH_FUNDS") {
		t.Fatalf("low balance = %+v, %v", st, err)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: poor.Reference}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("low balance, read = %+v, %v", st, err)
	}
	// No MoMo account to receive it: refused.
	if st, _ := c.Payout(ctx, send(simRef3, "+256770000039")); st.Outcome != gateway.Failed || st.LowBalance || !strings.HasPrefix(st.Reason, "400 PAYEE_NOT_FOUND") {
		t.Fatalf("refused = %+v", st)
	}
	// Fails once settled; failed on demand.
	for _, tc := range []struct{ ref, phone, settle string }{{simRef4, "+256770000029", ""}, {simRef5, "+256772123457", "?status=FAILED"}} {
		c.Payout(ctx, send(tc.ref, tc.phone))
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+tc.ref+tc.settle)
		if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: tc.ref}); st != (gateway.Status{Outcome: gateway.Failed, Reason: "PAYEE_NOT_ALLOWED_TO_RECEIVE"}) {
			t.Fatalf("failed payout %s = %+v", tc.phone, st)
		}
	}
	if sim.Payouts() != 3 {
		t.Fatalf("%d payouts; want 3", sim.Payouts())
	}
	// A simulator without the Disbursement product refuses the key.
	sim.DisbursementKey = ""
	if _, err := c.Payout(ctx, send("61111111-2222-4333-8444-555555555555", "+256772123456")); err == nil || gateway.IsTransient(err) {
		t.Fatalf("no disbursement product: %v; want a lasting error", err)
	}
}

func TestPayout_SimulatorSettlesAfterDelay(t *testing.T) {
	sim := &Simulator{APIUser: "u", APIKey: "k", CollectionKey: "ck", DisbursementKey: "dk", SettleAfter: 50 * time.Millisecond}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, CollectionKey: "ck", DisbursementKey: "dk", APIUser: "u", APIKey: "k"}
	ctx := context.Background()
	for ref, phone := range map[string]string{simRef1: "+256772123456", simRef2: "+256770000129"} {
		if st, err := c.Payout(ctx, payout(ref, phone)); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s = %+v, %v", phone, st, err)
		}
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: simRef1}); err == nil && st.Outcome == gateway.Succeeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the payout did not settle after the delay")
		}
	}
	time.Sleep(100 * time.Millisecond)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: simRef2}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payout: %+v; want still pending", st)
	}
}
