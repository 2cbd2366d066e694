package mtnmomo

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestSimulator_SandboxNumbers holds the simulator to MTN's sandbox
// numbers (sandboxPayers, sandboxPayees): a request to pay or a transfer
// to one is accepted, then ends as its row of MTN's table says once
// settled, with its callback; a delayed one stays PENDING without one.
func TestSimulator_SandboxNumbers(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	for i, tc := range []struct {
		name, phone string
		payout      bool
		want        gateway.Status
	}{
		{"request to pay, failed", "+46733123450", false, gateway.Status{Outcome: gateway.Failed, Reason: "INTERNAL_PROCESSING_ERROR"}},
		{"request to pay, rejected", "+46733123451", false, gateway.Status{Outcome: gateway.Failed, Reason: "APPROVAL_REJECTED"}},
		{"request to pay, expired", "+46733123452", false, gateway.Status{Outcome: gateway.Failed, Reason: "EXPIRED"}},
		{"request to pay, ongoing", "+46733123453", false, gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "400000004"}},
		{"request to pay, delayed", "+46733123454", false, gateway.Status{Outcome: gateway.Pending}},
		{"request to pay, payer not found", "+46733123455", false, gateway.Status{Outcome: gateway.Failed, Reason: "PAYER_NOT_FOUND"}},
		{"request to pay, timed out", "+46733123463", false, gateway.Status{Outcome: gateway.Failed, Reason: "COULD_NOT_PERFORM_TRANSACTION"}},
		{"transfer, rejected", "+46733123451", true, gateway.Status{Outcome: gateway.Failed, Reason: "APPROVAL_REJECTED"}},
		{"transfer, delayed", "+46733123454", true, gateway.Status{Outcome: gateway.Pending}},
		{"transfer, not enough funds", "+46733123455", true, gateway.Status{Outcome: gateway.Failed, Reason: "NOT_ENOUGH_FUNDS", LowBalance: true}},
		{"transfer, payee not found", "+46733123457", true, gateway.Status{Outcome: gateway.Failed, Reason: "PAYEE_NOT_FOUND"}},
		{"transfer, ongoing", "+46733123453", true, gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "400000012"}},
	} {
		ref := fmt.Sprintf("%08d-2222-4333-8444-555555555555", i+1)
		start, status := func() (gateway.Status, error) {
			col := collection(ref, tc.phone)
			col.NotifyURL = hook.URL
			return c.Collect(ctx, col)
		}, func() (gateway.Status, error) { return c.CollectionStatus(ctx, gateway.Ref{Reference: ref}) }
		if tc.payout {
			start, status = func() (gateway.Status, error) {
				p := payout(ref, tc.phone)
				p.NotifyURL = hook.URL
				return c.Payout(ctx, p)
			}, func() (gateway.Status, error) { return c.PayoutStatus(ctx, gateway.Ref{Reference: ref}) }
		}
		if st, err := start(); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s: initiated = %+v, %v; want pending", tc.name, st, err)
		}
		_, _, before := hook.Last()
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ref)
		if st, err := status(); err != nil || st != tc.want {
			t.Errorf("%s: settled = %+v, %v; want %+v", tc.name, st, err, tc.want)
		}
		wantCallbacks := before + 1
		if tc.want.Outcome == gateway.Pending {
			wantCallbacks = before
		}
		if _, _, n := hook.Last(); n != wantCallbacks {
			t.Errorf("%s: %d callbacks; want %d", tc.name, n, wantCallbacks)
		}
	}
	// A delayed one still ends when told to.
	gatewaytest.Control(t, srv.URL, "/_sim/settle/00000005-2222-4333-8444-555555555555?status=SUCCESSFUL")
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: "00000005-2222-4333-8444-555555555555"}); st.Outcome != gateway.Succeeded {
		t.Fatalf("delayed, settled on demand = %+v", st)
	}
	// A status the lifecycle does not have is refused, nothing changes.
	if res, err := http.Post(srv.URL+"/_sim/settle/00000009-2222-4333-8444-555555555555?status=REJECTED", "", nil); err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("settle to REJECTED: %v, %v; want 400", res, err)
	} else {
		res.Body.Close()
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: "00000009-2222-4333-8444-555555555555"}); st.Outcome != gateway.Pending {
		t.Fatalf("after a refused settle = %+v; want pending", st)
	}
}

// TestSimulator_CallbackIsPut holds the simulator to MTN's callback: a
// PUT to the X-Callback-Url, sent before the control call that settles
// the transaction is answered.
func TestSimulator_CallbackIsPut(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	col := collection(simRef1, "+256772123456")
	col.NotifyURL = hook.URL + "/cb"
	if _, err := c.Collect(context.Background(), col); err != nil {
		t.Fatal(err)
	}
	calls := sim.Calls()
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+simRef1)
	reqs, bodies := hook.Received()
	if len(reqs) != 1 || reqs[0].Method != http.MethodPut || reqs[0].URL.Path != "/cb" || len(bodies[0]) == 0 {
		t.Fatalf("callbacks %v; want one PUT to /cb once settled", reqs)
	}
	if sim.Calls() != calls {
		t.Fatalf("sending the callback counted %d API calls", sim.Calls()-calls)
	}
	time.Sleep(50 * time.Millisecond)
	if _, _, n := hook.Last(); n != 1 {
		t.Fatalf("%d callbacks; want 1", n)
	}
}

// TestSimulator_CountsTokens holds Calls to counting the token endpoint's
// requests, which faults spare.
func TestSimulator_CountsTokens(t *testing.T) {
	sim, srv, _, _ := newSim(t)
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/collection/token/", nil)
	req.SetBasicAuth(sim.APIUser, sim.APIKey)
	req.Header.Set("Ocp-Apim-Subscription-Key", sim.CollectionKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || sim.Calls() != 1 {
		t.Fatalf("a token under fault 500 = %d, %d calls; want 200, 1 call", res.StatusCode, sim.Calls())
	}
}
