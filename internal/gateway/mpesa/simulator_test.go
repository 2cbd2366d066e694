package mpesa

import (
	"context"
	"net/http"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestSimulator_ResultCodes holds the simulator to Daraja's ResultCodes:
// the numbers that end a push with 1037 (the phone did not answer) and
// 2001 (a wrong PIN), each with its stkCallback and the same ResultCode
// on the query; a control call's FAILED in any case is 1032, and a
// ResultCode the simulator does not know is refused, the push still
// being processed.
func TestSimulator_ResultCodes(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	for i, tc := range []struct{ phone, settle, reason, code string }{
		{"+254712341037", "", "1037: DS timeout user cannot be reached", "1037"},
		{"+254712342001", "", "2001: The initiator information is invalid.", "2001"},
		{"+254712345678", "?status=failed", "1032: Request cancelled by user", "1032"},
	} {
		id := collectSim(t, c, hook, tc.phone)
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id+tc.settle)
		if st, err := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id}); err != nil ||
			st != (gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: tc.reason}) {
			t.Errorf("%s%s settled = %+v, %v; want failed %s", tc.phone, tc.settle, st, err, tc.reason)
		}
		_, bodies := waitCallbacks(t, hook, i+1)
		if cb, items := stk(t, bodies[i]); cb.CheckoutRequestID != id || cb.ResultCode.String() != tc.code || len(items) != 0 {
			t.Errorf("%s callback = %s; want ResultCode %s, no metadata", tc.phone, bodies[i], tc.code)
		}
	}

	id := collectSim(t, c, hook, "+254712345678")
	res, err := http.Post(srv.URL+"/_sim/settle/"+id+"?status=4242", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("settle to ResultCode 4242 = %d; want 400", res.StatusCode)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("after a refused settle = %+v, %v; want still being processed", st, err)
	}
	if _, _, n := hook.Last(); n != 3 {
		t.Fatalf("%d callbacks; want 3", n)
	}
}

// TestSimulator_CountsTokens holds Calls to counting the OAuth endpoint's
// requests, which faults spare.
func TestSimulator_CountsTokens(t *testing.T) {
	sim, srv, _, _ := newSim(t)
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/oauth/v1/generate?grant_type=client_credentials", nil)
	req.SetBasicAuth(sim.ConsumerKey, sim.ConsumerSecret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || sim.Calls() != 1 {
		t.Fatalf("a token under fault 500 = %d, %d calls; want 200, 1 call", res.StatusCode, sim.Calls())
	}
}
