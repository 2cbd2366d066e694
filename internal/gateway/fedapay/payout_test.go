package fedapay

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

func TestEncodePayout_Golden(t *testing.T) {
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 2000, Currency: "XOF", Phone: "+22997808080",
		Operator: "mtn_open", Country: "BJ", RecipientName: "Koffi Adjovi"}
	mine, documented := gatewaytest.DocumentedFields(t, encodePayout(p), "payout_request.json")
	if len(mine) != len(documented)+1 || mine["custom_metadata"] == nil {
		t.Fatalf("request = %v; want the documented fields and custom_metadata", mine)
	}
	p.Description = "Salaire mars"
	if r := encodePayout(p); r.Description != "Salaire mars" {
		t.Fatalf("description = %q", r.Description)
	}
}

// TestPayout_Calls holds what the conformance suite does not: the creation
// then the start, in order, the start's body, FedaPay's id recorded
// (Created) before the start, and the API reference's bare list as the
// start's answer. The answers' readings are TestConformance's.
func TestPayout_Calls(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	ctx := context.Background()
	srv.Set("POST /payouts", http.StatusOK, gatewaytest.Golden(t, "payout_created.json"))
	srv.Set("PUT /payouts/start", http.StatusOK, gatewaytest.Golden(t, "payout_started.json"))
	var recorded string
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 2000, Currency: "XOF", Phone: "+22997808080",
		Operator: "mtn_open", Country: "BJ", Created: func(id string) error { recorded = id; return nil }}
	st, err := c.Payout(ctx, p)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef != "17" || recorded != "17" {
		t.Fatalf("payout = %+v, %v (recorded %q)", st, err, recorded)
	}
	if sent, start := srv.Calls(), srv.Body("PUT /payouts/start"); strings.Join(sent, ", ") != "POST /payouts, PUT /payouts/start" || string(start) != `{"payouts":[{"id":17}]}` {
		t.Fatalf("calls = %v, start %s", sent, start)
	}
	// The API reference's form of the start's answer: a bare list.
	po := startedPayout(gatewaytest.Golden(t, "payouts_start_reference.json"), 1)
	if po == nil {
		t.Fatal("the reference's start answer is unread")
	}
	if st, known := payoutStatus(*po, "1"); !known || st.Outcome != gateway.Succeeded || st.LowBalance {
		t.Fatalf("reference answer = %+v (known %v)", st, known)
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t, time.Now())
	ctx := context.Background()
	if c.IdempotentPayout() {
		t.Fatal("FedaPay payouts taken for idempotent")
	}
	ids := map[string]string{}
	startedAtCreation := map[string]int{}
	record := func(ref string) func(string) error {
		return func(id string) error { ids[ref], startedAtCreation[ref] = id, sim.Payouts(); return nil }
	}
	payout := func(ref, phone string) gateway.Payout {
		p := gateway.Payout{Reference: ref, Amount: 1500, Currency: "XOF", Phone: phone, Operator: "mtn_open", Country: "BJ",
			RecipientName: "Adjoa Mensah", Description: "Remboursement"}
		p.Created = record(ref)
		return p
	}

	p := payout("a1111111-2222-4333-8444-555555555555", "+22997123456")
	st, err := c.Payout(ctx, p)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" || st.ProviderRef != ids[p.Reference] {
		t.Fatalf("payout = %+v, %v (recorded %q)", st, err, ids[p.Reference])
	}
	if startedAtCreation[p.Reference] != 0 || sim.Payouts() != 1 {
		t.Fatalf("started %d when the id was recorded, %d after; want it recorded before the start", startedAtCreation[p.Reference], sim.Payouts())
	}
	ref := gateway.Ref{Reference: p.Reference, ProviderRef: ids[p.Reference]}
	if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, ref); err == nil || st.Outcome == gateway.NotFound {
		t.Fatalf("a payout read as a transaction = %+v, %v; want an error, never not found", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef != ref.ProviderRef {
		t.Fatalf("status = %+v, %v", st, err)
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks", len(hooks))
	}
	var ev struct{ Name string }
	json.Unmarshal(bodies[0], &ev)
	got, err := c.CallbackReference(hooks[0].Header, bodies[0])
	_, forged := c.CallbackReference(http.Header{"X-Fedapay-Signature": {"t=1,s=abcd"}}, bodies[0])
	_, tampered := c.CallbackReference(hooks[0].Header, []byte(strings.Replace(string(bodies[0]), `"sent"`, `"failed"`, 1)))
	if err != nil || got != p.Reference || ev.Name != "payout.sent" || forged == nil || tampered == nil {
		t.Fatalf("webhook %s = %q, %v; forged accepted: %v; tampered accepted: %v", ev.Name, got, err, forged == nil, tampered == nil)
	}

	// The merchant's balance cannot fund it: refused at the start, never sent.
	poor := payout("b1111111-2222-4333-8444-555555555555", "+22997000049")
	if st, err := c.Payout(ctx, poor); err != nil || st.Outcome != gateway.Failed || !st.LowBalance || st.ProviderRef == "" {
		t.Fatalf("low balance = %+v, %v", st, err)
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: poor.Reference, ProviderRef: ids[poor.Reference]}); st.Outcome != gateway.Failed || !st.LowBalance {
		t.Fatalf("low balance, read again = %+v", st)
	}
	// The recipient's account fails once the payout is settled.
	lost := payout("c1111111-2222-4333-8444-555555555555", "+22997000029")
	if st, err := c.Payout(ctx, lost); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ids[lost.Reference])
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: lost.Reference, ProviderRef: ids[lost.Reference]}); st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "invalid_account") {
		t.Fatalf("failed payout = %+v", st)
	}
	// An invalid recipient is refused at the creation: no id, nothing to record.
	refused := payout("d1111111-2222-4333-8444-555555555555", "+22997000039")
	if st, err := c.Payout(ctx, refused); err != nil || st.Outcome != gateway.Failed || st.ProviderRef != "" || ids[refused.Reference] != "" || !strings.Contains(st.Reason, "400") {
		t.Fatalf("refused = %+v, %v", st, err)
	}
	if sim.Payouts() != 2 {
		t.Fatalf("%d payouts started; want 2", sim.Payouts())
	}
	// A payout whose id could not be recorded is never started.
	unrecorded := payout("e1111111-2222-4333-8444-555555555555", "+22997123457")
	unrecorded.Created = func(string) error { return context.DeadlineExceeded }
	if _, err := c.Payout(ctx, unrecorded); err == nil || gateway.IsTransient(err) {
		t.Fatalf("unrecorded: %v; want a lasting error", err)
	}
	if sim.Payouts() != 2 {
		t.Fatalf("an unrecorded payout was started (%d payouts)", sim.Payouts())
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "x"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("no FedaPay id = %+v, %v", st, err)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "x", ProviderRef: "999999"}); err == nil || st.Outcome == gateway.NotFound {
		t.Fatalf("unknown id = %+v, %v; want an error, never not found", st, err)
	}
	wrong := &Client{BaseURL: srv.URL, SecretKey: "guess"}
	if _, err := wrong.Payout(ctx, payout("f1111111-2222-4333-8444-555555555555", "+22997123458")); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key: %v", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.Payout(ctx, payout("01111111-2222-4333-8444-555555555555", "+22997123459")); !gateway.IsTransient(err) {
		t.Fatalf("fault on the payout: %v", err)
	}
	if _, err := c.PayoutStatus(ctx, ref); !gateway.IsTransient(err) {
		t.Fatalf("fault on the status: %v", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if sim.Payouts() != 2 {
		t.Fatalf("%d payouts started; want 2", sim.Payouts())
	}
}

func TestPayout_SimulatorSettlesAfterDelay(t *testing.T) {
	sim := &Simulator{SecretKey: "sk", SettleAfter: 50 * time.Millisecond}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	ctx := context.Background()
	ids := map[string]string{}
	for ref, phone := range map[string]string{"paid": "+22997123456", "stuck": "+22997000129"} {
		p := gateway.Payout{Reference: ref, Amount: 1000, Currency: "XOF", Phone: phone, Operator: "moov", Country: "BJ",
			Created: func(id string) error { ids[ref] = id; return nil }}
		if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s = %+v, %v", ref, st, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: "paid", ProviderRef: ids["paid"]}); st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay: %+v", st)
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: "stuck", ProviderRef: ids["stuck"]}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payout: %+v; want still pending", st)
	}
}
