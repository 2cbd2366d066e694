package wave

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodePayout_Golden(t *testing.T) {
	p := gateway.Payout{Reference: "salary-2024-03-0001", Amount: 15000, Currency: "XOF", Phone: "+221761110001", Operator: "wave",
		Country: "SN", RecipientName: "Moustapha Mbengue", Description: "Salary March 2024", NotifyURL: "https://cauri.example/cb"}
	mine, documented := gatewaytest.DocumentedFields(t, encodePayout(p), "payout_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented fields", mine)
	}
	p.RecipientName, p.Description = "", " "
	b, _ := json.Marshal(encodePayout(p))
	if strings.Contains(string(b), `"name"`) || strings.Contains(string(b), `"payment_reason"`) {
		t.Fatalf("request = %s; want no empty name nor payment_reason", b)
	}
}

// TestPayout_AnswersThatConcludeNothing: what TestConformance cannot say
// of the payout's answers: a refusal carries no Wave id; a conflict on the
// idempotency-key, a 5xx or an answer without an id is transient and
// answered (the status, read by our reference, decides); a payout whose id
// could not be recorded is never "not sent".
func TestPayout_AnswersThatConcludeNothing(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, APIKey: "k"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "salary-2024-03-0001", Amount: 15000, Currency: "XOF", Phone: "+221761110001",
		RecipientName: "Moustapha Mbengue", Description: "Salary March 2024"}
	srv.Set("POST /v1/payout", http.StatusBadRequest, gatewaytest.Golden(t, "error_insufficient_funds.json"))
	if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Failed || st.ProviderRef != "" {
		t.Fatalf("refused = %+v, %v; want failed, no Wave id", st, err)
	}
	for _, tc := range []struct {
		code int
		body string
	}{
		{http.StatusConflict, `{"code":"idempotency-mismatch","message":"x"}`},
		{http.StatusInternalServerError, `{}`},
		{http.StatusOK, `{"status":"processing"}`},
		{http.StatusOK, `{"id":`},
	} {
		srv.Set("POST /v1/payout", tc.code, []byte(tc.body))
		if _, err := c.Payout(ctx, p); !gateway.IsTransient(err) || !gateway.ErrorOf(err).Answered {
			t.Errorf("%d %s: %v; want transient, answered", tc.code, tc.body, err)
		}
	}
	srv.Set("POST /v1/payout", http.StatusOK, gatewaytest.Golden(t, "payout_processing.json"))
	p.Created = func(string) error { return context.DeadlineExceeded }
	if _, err := c.Payout(ctx, p); !gateway.IsTransient(err) || gateway.ErrorOf(err).NotSent {
		t.Fatalf("unrecorded: %v; want transient, sent", err)
	}
}

func TestPayout_IdempotencyKeyHeader(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.Write(gatewaytest.Golden(t, "payout_processing.json"))
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, APIKey: "k"}
	p := gateway.Payout{Reference: "salary-2024-03-0001", Amount: 15000, Currency: "XOF", Phone: "+221761110001"}
	c.Payout(context.Background(), p)
	c.Payout(context.Background(), p)
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] != p.Reference || keys[1] != p.Reference {
		t.Fatalf("idempotency keys = %q; want our reference each time", keys)
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	if !c.IdempotentPayout() {
		t.Fatal("Wave payouts not taken for idempotent")
	}
	ids := map[string][]string{}
	payout := func(ref, phone string) gateway.Payout {
		return gateway.Payout{Reference: ref, Amount: 15000, Currency: "XOF", Phone: phone, Country: "SN",
			RecipientName: "Moustapha Mbengue", Description: "Salary", Created: func(id string) error { ids[ref] = append(ids[ref], id); return nil }}
	}

	// Sent twice under one reference: one payout.
	p := payout("a1111111-2222-4333-8444-555555555555", "+221761110001")
	first, err := c.Payout(ctx, p)
	if err != nil || first.Outcome != gateway.Pending || first.ProviderRef == "" {
		t.Fatalf("payout = %+v, %v", first, err)
	}
	again, err := c.Payout(ctx, p)
	if err != nil || again != first || sim.Payouts() != 1 || len(ids[p.Reference]) != 2 || ids[p.Reference][1] != first.ProviderRef {
		t.Fatalf("again = %+v, %v; %d payouts, recorded %v", again, err, sim.Payouts(), ids[p.Reference])
	}
	ref := gateway.Ref{Reference: p.Reference, ProviderRef: first.ProviderRef}
	if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if st, _ := c.CollectionStatus(ctx, ref); st.Outcome != gateway.NotFound {
		t.Fatalf("a payout read as a checkout session = %+v; want not found", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	for _, r := range []gateway.Ref{ref, {Reference: p.Reference}} {
		if st, err := c.PayoutStatus(ctx, r); err != nil || st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: first.ProviderRef}) {
			t.Fatalf("status by %+v = %+v, %v", r, st, err)
		}
	}
	if again, _ := c.Payout(ctx, p); again.Outcome != gateway.Succeeded || sim.Payouts() != 1 {
		t.Fatalf("after paying, again = %+v (%d payouts)", again, sim.Payouts())
	}
	// The same reference for another amount is not the same payout: Wave refuses the key, nothing concluded.
	other := p
	other.Amount = 99
	if _, err := c.Payout(ctx, other); !gateway.IsTransient(err) || sim.Payouts() != 1 {
		t.Fatalf("reused key: %v (%d payouts)", err, sim.Payouts())
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+first.ProviderRef+"?status=reversed")
	if st, _ := c.PayoutStatus(ctx, ref); st.Outcome != gateway.Failed || st.Reason != "reversed" {
		t.Fatalf("reversed = %+v", st)
	}

	// The wallet lacks the funds: refused, nothing sent, nothing found.
	poor := payout("b1111111-2222-4333-8444-555555555555", "+221760000049")
	if st, err := c.Payout(ctx, poor); err != nil || st.Outcome != gateway.Failed || !st.LowBalance || st.ProviderRef != "" || ids[poor.Reference] != nil {
		t.Fatalf("low balance = %+v, %v", st, err)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: poor.Reference}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("low balance, read = %+v, %v", st, err)
	}
	// No Wave account to receive it: refused.
	refused := payout("c1111111-2222-4333-8444-555555555555", "+221760000039")
	if st, _ := c.Payout(ctx, refused); st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "400 invalid-wallet") {
		t.Fatalf("refused = %+v", st)
	}
	// Fails once settled.
	lost := payout("d1111111-2222-4333-8444-555555555555", "+221760000029")
	st, _ := c.Payout(ctx, lost)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+st.ProviderRef)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: lost.Reference, ProviderRef: st.ProviderRef}); st.Outcome != gateway.Failed ||
		st.LowBalance || !strings.HasPrefix(st.Reason, "failed: recipient-account-blocked") {
		t.Fatalf("failed payout = %+v", st)
	}
	// Wave's checks.
	bad := payout("e1111111-2222-4333-8444-555555555555", "221761110001")
	if st, _ := c.Payout(ctx, bad); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "request-validation-error") {
		t.Fatalf("not E.164 = %+v", st)
	}
	if sim.Payouts() != 2 {
		t.Fatalf("%d payouts; want 2", sim.Payouts())
	}
	// Without an idempotency-key, Wave refuses the payout.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/payout", strings.NewReader(`{"currency":"XOF","receive_amount":"100","mobile":"+221761110002"}`))
	req.Header.Set("Authorization", "Bearer "+sim.APIKey)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("no idempotency-key: %v, %v", res, err)
	} else {
		res.Body.Close()
	}
	// Wave sends no payout webhook.
	if _, _, n := hook.Last(); n != 0 {
		t.Fatalf("%d webhooks about payouts", n)
	}
	wrong := &Client{BaseURL: srv.URL, APIKey: "guess"}
	if _, err := wrong.Payout(ctx, payout("f1111111-2222-4333-8444-555555555555", "+221761110003")); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key: %v", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500-initiate")
	if _, err := c.Payout(ctx, payout("01111111-2222-4333-8444-555555555555", "+221761110004")); !gateway.IsTransient(err) {
		t.Fatalf("fault on the payout: %v", err)
	}
	if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Failed {
		t.Fatalf("status during a fault on POST only = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.PayoutStatus(ctx, ref); !gateway.IsTransient(err) {
		t.Fatalf("fault on the status: %v", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if sim.Payouts() != 2 {
		t.Fatalf("%d payouts; want 2", sim.Payouts())
	}
}

func TestPayout_SimulatorSettlesAfterDelay(t *testing.T) {
	sim := &Simulator{APIKey: "k", SettleAfter: 50 * time.Millisecond}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, APIKey: "k"}
	ctx := context.Background()
	for ref, phone := range map[string]string{"paid": "+221761110001", "stuck": "+221760000129"} {
		p := gateway.Payout{Reference: ref, Amount: 1000, Currency: "XOF", Phone: phone}
		if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s = %+v, %v", ref, st, err)
		}
	}
	waitSucceeded(t, func() (gateway.Status, error) { return c.PayoutStatus(ctx, gateway.Ref{Reference: "paid"}) })
	time.Sleep(100 * time.Millisecond)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: "stuck"}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payout: %+v; want still pending", st)
	}
}
