package pawapay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestEncodeDeposit_Golden holds the connector's request to the example of
// pawaPay's own documentation.
func TestEncodeDeposit_Golden(t *testing.T) {
	mine, documented := gatewaytest.DocumentedFields(t, encodeDeposit(gateway.Collection{
		Reference: "afb57b93-7849-49aa-babb-4c3ccbfe3d79", Amount: 100, Currency: "RWF",
		Phone: "+250783456789", Operator: "MTN_MOMO_RWA",
	}), "deposit_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
}

// TestDecode_Golden reads pawaPay's documented answers.
func TestDecode_Golden(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, Token: "t"}
	col := gateway.Collection{Reference: "f4401bd2-1568-4140-bf2d-eb77d2b2b639", Amount: 1500, Currency: "ZMW", Phone: "+260763456789", Operator: "MTN_MOMO_ZMB"}
	for _, tc := range []struct {
		fixture string
		call    func() (gateway.Status, error)
		want    gateway.Status
	}{
		{"deposit_accepted.json", func() (gateway.Status, error) { return c.Collect(context.Background(), col) }, gateway.Status{Outcome: gateway.Pending}},
		{"deposit_rejected.json", func() (gateway.Status, error) { return c.Collect(context.Background(), col) },
			gateway.Status{Outcome: gateway.Failed, Reason: "INVALID_PHONE_NUMBER: The phone number is not valid for the provider"}},
		{"deposit_status_completed.json", func() (gateway.Status, error) {
			return c.CollectionStatus(context.Background(), gateway.Ref{Reference: col.Reference})
		},
			gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "ABC123"}},
	} {
		srv.Set("", http.StatusOK, gatewaytest.Golden(t, tc.fixture))
		got, err := tc.call()
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.fixture, got, err, tc.want)
		}
	}
}

func TestCustomerMessage(t *testing.T) {
	for in, want := range map[string]string{"2 pagnes wax": "2 pagnes wax", "Commande n° 1042 — boutique Adjoa": "Commande n 1042  bouti", "ab": "", "": ""} {
		if got := customerMessage(in); got != want {
			t.Errorf("customerMessage(%q) = %q; want %q", in, got, want)
		}
	}
}

// simEnv is the connector facing its simulator over real HTTP on loopback,
// with a receiver for the simulator's callbacks.
type simEnv struct {
	sim       *Simulator
	srv       *httptest.Server
	client    *Client
	callbacks *gatewaytest.Receiver
}

func newSimEnv(t *testing.T) *simEnv {
	e := &simEnv{sim: &Simulator{Token: "sandbox-token"}, callbacks: gatewaytest.NewReceiver(t)}
	e.sim.CallbackURL = e.callbacks.URL
	e.srv = httptest.NewServer(e.sim)
	t.Cleanup(e.srv.Close)
	e.client = &Client{BaseURL: e.srv.URL, Token: "sandbox-token", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return e
}

func (e *simEnv) control(t *testing.T, path string) {
	t.Helper()
	gatewaytest.Control(t, e.srv.URL, path)
}

func collection(ref, phone string) gateway.Collection {
	return gateway.Collection{Reference: ref, Amount: 5000, Currency: "XOF", Phone: phone, Operator: "WAVE_SEN", Description: "Commande 1042"}
}

const (
	ref1 = "11111111-2222-4333-8444-555555555555"
	ref2 = "21111111-2222-4333-8444-555555555555"
	ref3 = "31111111-2222-4333-8444-555555555555"
)

func TestClient_AgainstSimulator(t *testing.T) {
	ctx := context.Background()
	e := newSimEnv(t)
	t.Run("CollectAndSettle", func(t *testing.T) {
		st, err := e.client.Collect(ctx, collection(ref1, "+221771234567"))
		if err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("collect = %+v, %v", st, err)
		}
		if st, _ := e.client.Collect(ctx, collection(ref1, "+221771234567")); st.Outcome != gateway.Pending {
			t.Fatalf("duplicate = %+v; want pending (DUPLICATE_IGNORED)", st)
		}
		if st, _ := e.client.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); st.Outcome != gateway.Pending {
			t.Fatalf("status before settling = %+v", st)
		}
		e.control(t, "/_sim/settle/"+ref1)
		st, err = e.client.CollectionStatus(ctx, gateway.Ref{Reference: ref1})
		if err != nil || st.Outcome != gateway.Succeeded || !strings.HasPrefix(st.ProviderRef, "SIM") {
			t.Fatalf("status after settling = %+v, %v", st, err)
		}
		_, cbs := e.callbacks.Received()
		if len(cbs) != 1 {
			t.Fatalf("%d callbacks; want 1", len(cbs))
		}
		if ref, err := e.client.CallbackReference(nil, cbs[0]); err != nil || ref != ref1 {
			t.Fatalf("callback reference = %q, %v", ref, err)
		}
	})
	t.Run("PayerFails", func(t *testing.T) {
		e.client.Collect(ctx, collection(ref2, "+221770000029"))
		e.control(t, "/_sim/settle/"+ref2)
		if st, _ := e.client.CollectionStatus(ctx, gateway.Ref{Reference: ref2}); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "PAYER_NOT_FOUND") {
			t.Fatalf("status = %+v; want failed, PAYER_NOT_FOUND", st)
		}
	})
	t.Run("RefusedAtInitiation", func(t *testing.T) {
		if st, err := e.client.Collect(ctx, collection(ref3, "+221770000039")); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_PHONE_NUMBER") {
			t.Fatalf("collect = %+v, %v", st, err)
		}
		c := collection("41111111-2222-4333-8444-555555555555", "+221771234567")
		c.Operator = "NOPE_SEN"
		if st, _ := e.client.Collect(ctx, c); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_PROVIDER") {
			t.Fatalf("unknown provider = %+v", st)
		}
		c.Reference, c.Operator = "not-a-uuid", "WAVE_SEN"
		if st, _ := e.client.Collect(ctx, c); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_PARAMETER") {
			t.Fatalf("bad depositId = %+v", st)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		if st, err := e.client.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
			t.Fatalf("unknown deposit = %+v, %v", st, err)
		}
	})
	t.Run("WrongToken", func(t *testing.T) {
		bad := &Client{BaseURL: e.srv.URL, Token: "wrong"}
		if _, err := bad.Collect(ctx, collection("51111111-2222-4333-8444-555555555555", "+221771234567")); err == nil || gateway.IsTransient(err) {
			t.Fatalf("wrong token: %v; want a lasting error", err)
		}
	})
	t.Run("Faults", func(t *testing.T) {
		for _, mode := range []string{"500", "malformed", "slow&seconds=2"} {
			e.control(t, "/_sim/fault?mode="+mode)
			_, err := e.client.Collect(ctx, collection("61111111-2222-4333-8444-555555555555", "+221771234567"))
			if !gateway.IsTransient(err) {
				t.Errorf("fault %s: %v; want a transient error", mode, err)
			}
		}
		e.control(t, "/_sim/fault?mode=none")
		if st, err := e.client.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); err != nil || st.Outcome != gateway.Succeeded {
			t.Fatalf("after the faults: %+v, %v", st, err)
		}
	})
	t.Run("DuplicateCallback", func(t *testing.T) {
		e.control(t, "/_sim/callback/"+ref1)
		_, cbs := e.callbacks.Received()
		if n := len(cbs); n != 3 || string(cbs[n-1]) != string(cbs[0]) {
			t.Fatalf("callbacks = %d; want the first sent again", n)
		}
	})
}

func TestSimulator_SettlesAfterDelay(t *testing.T) {
	e := newSimEnv(t)
	e.sim.SettleAfter = 50 * time.Millisecond
	ctx := context.Background()
	e.client.Collect(ctx, collection(ref1, "+221771234567"))
	e.client.Collect(ctx, collection(ref2, "+221770000129")) // never settles
	time.Sleep(300 * time.Millisecond)
	if st, _ := e.client.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay: %+v", st)
	}
	if st, _ := e.client.CollectionStatus(ctx, gateway.Ref{Reference: ref2}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payment: %+v; want still pending", st)
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	sim := &Simulator{Token: "tok", CallbackURL: hook.URL}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: "tok"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "XOF", Phone: "+221771234567", Operator: "WAVE_SEN", Country: "SN"}
	for range 3 { // sent again with the same payoutId: one payout
		if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("payout = %+v, %v", st, err)
		}
	}
	if sim.Payouts() != 1 {
		t.Fatalf("%d payouts for one payoutId", sim.Payouts())
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v", st)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.NotFound {
		t.Fatalf("a payout read as a deposit = %+v; want not found", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("settled = %+v", st)
	}
	_, bodies := hook.Received()
	ref, err := c.CallbackReference(nil, bodies[0])
	if err != nil || ref != p.Reference {
		t.Fatalf("payout callback = %q, %v", ref, err)
	}
	poor := p
	poor.Reference, poor.Phone = "b1111111-2222-4333-8444-555555555555", "+221770000049"
	if st, _ := c.Payout(ctx, poor); st.Outcome != gateway.Failed || !st.LowBalance {
		t.Fatalf("low balance = %+v", st)
	}
	lost := p
	lost.Reference, lost.Phone = "c1111111-2222-4333-8444-555555555555", "+221770000029"
	c.Payout(ctx, lost)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+lost.Reference)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: lost.Reference}); st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "RECIPIENT_NOT_FOUND") {
		t.Fatalf("failed payout = %+v", st)
	}
}
