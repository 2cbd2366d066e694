package fedapay

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// eventName is the name of the last webhook hook received, "" for none.
func eventName(hook *gatewaytest.Receiver) string {
	_, body, _ := hook.Last()
	var ev struct{ Name string }
	json.Unmarshal(body, &ev)
	return ev.Name
}

// TestSimulator_Lifecycle holds FedaPay's statuses: a transaction
// canceled (transaction.canceled, docs.fedapay.com webhooks), a word
// FedaPay does not use refused, a payout that waits until it is started,
// scheduled or started without a webhook, and an end in a payout's words.
func TestSimulator_Lifecycle(t *testing.T) {
	s, srv, c, hook := newSim(t, time.Now())
	ctx := context.Background()
	var id string
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 1500, Currency: "XOF", Phone: "+22997123456",
		Operator: "mtn_open", Country: "BJ", Created: func(got string) error { id = got; return nil }}
	if _, err := c.Collect(ctx, col); err != nil {
		t.Fatal(err)
	}
	if code := gatewaytest.ControlStatus(t, srv.URL, "/_sim/settle/"+id+"?status=expired"); code != http.StatusBadRequest {
		t.Fatalf("settle to expired = %d; want 400, no such status", code)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference+"?status=canceled")
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference, ProviderRef: id}); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "canceled") {
		t.Fatalf("canceled = %+v, %v", st, err)
	}
	if name := eventName(hook); name != "transaction.canceled" {
		t.Fatalf("webhook %q; want transaction.canceled", name)
	}

	// Created, not started: nothing ends it, nothing is counted.
	p := payoutRequest{Amount: "1500", Currency: map[string]string{"iso": "XOF"}, Mode: "mtn_open",
		Customer: newCustomer("Adjoa Mensah", "", "+22997123456", "BJ"), CustomMetadata: map[string]string{metadataKey: "a1111111-2222-4333-8444-555555555555"}}
	var e envelope
	if code, err := c.call(ctx, http.MethodPost, "/payouts", p, &e); err != nil || code != http.StatusOK || e.Payout == nil {
		t.Fatalf("create = %d, %v", code, err)
	}
	ref := gateway.Ref{Reference: "a1111111-2222-4333-8444-555555555555", ProviderRef: strconv.FormatInt(e.Payout.ID, 10)}
	_, _, hooks := hook.Last()
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ref.Reference)
	if st, _ := c.PayoutStatus(ctx, ref); st.Outcome != gateway.Pending || s.Payouts() != 0 {
		t.Fatalf("a payout never started, settled = %+v (%d payouts); want pending, none", st, s.Payouts())
	}
	if code, err := c.call(ctx, http.MethodPut, "/payouts/start", startRequest{Payouts: []startItem{{ID: e.Payout.ID}}}, &json.RawMessage{}); err != nil || code != http.StatusOK || s.Payouts() != 1 {
		t.Fatalf("start = %d, %v (%d payouts)", code, err, s.Payouts())
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ref.ProviderRef+"?status=scheduled")
	var got envelope
	c.call(ctx, http.MethodGet, "/payouts/"+ref.ProviderRef, nil, &got)
	if st, _ := c.PayoutStatus(ctx, ref); got.Payout == nil || got.Payout.Status != "scheduled" || st.Outcome != gateway.Pending {
		t.Fatalf("scheduled = %+v, %+v", got.Payout, st)
	}
	if _, _, n := hook.Last(); n != hooks {
		t.Fatal("a webhook for a payout not ended")
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ref.Reference+"?status=approved")
	if st, _ := c.PayoutStatus(ctx, ref); st.Outcome != gateway.Succeeded || eventName(hook) != "payout.sent" {
		t.Fatalf("approved payout = %+v, webhook %q; want sent", st, eventName(hook))
	}
}

// TestSimulator_CreatedWebhook: FedaPay's transaction.created, sent when
// asked for, signed like the others.
func TestSimulator_CreatedWebhook(t *testing.T) {
	s, _, c, hook := newSim(t, time.Now())
	s.CreatedWebhook = true
	col := gateway.Collection{Reference: "21111111-2222-4333-8444-555555555555", Amount: 1500, Currency: "XOF", Card: true}
	if _, err := c.Collect(context.Background(), col); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); eventName(hook) == "" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	h, body, n := hook.Last()
	if ref, err := c.CallbackReference(h, body); n != 1 || eventName(hook) != "transaction.created" || err != nil || ref != col.Reference {
		t.Fatalf("%d webhooks, last %s: %q, %v", n, body, ref, err)
	}
}
