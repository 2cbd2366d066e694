package web

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestRefunds_Sandbox: a test payment refunded through the API with a
// test key, in two parts: each succeeds at once (201), the second makes
// the session REFUNDED, each end is a payment.updated; a replay is 200
// with Idempotent-Replayed; every refusal has its code; a live key never
// sees the test refund.
func TestRefunds_Sandbox(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		_, keys := e.newWorkspace("Verified shop", true) // its live key is live
		key := keys["test_secret"]
		id := e.mustSession(keys["test_public"], map[string]any{"amount": 10000, "metadata": map[string]string{"order_id": "A-1"}})
		refund := func(body any, headers ...string) response {
			return e.do("POST", "/v1/refunds", body, append(bearer(key), headers...)...)
		}
		// Not paid yet.
		wantCode(t, refund(map[string]any{"transaction_id": id}), 400, "not_refundable")
		e.settle(id, "succes")

		r := refund(map[string]any{"transaction_id": id, "amount": 4000, "reason": "one item back"}, "Idempotency-Key", "rf-1")
		wantStatus(t, r, 201)
		if r.str("status") != "succeeded" || r.str("object") != "refund" || r.body["amount"] != 4000.0 || r.str("method") != "aggregator" ||
			r.str("provider") != "sandbox" || r.body["livemode"] != false || r.str("transaction_id") != id || r.str("completed_at") == "" {
			t.Fatalf("refund = %s", r.raw)
		}
		again := refund(map[string]any{"transaction_id": id, "amount": 4000, "reason": "one item back"}, "Idempotency-Key", "rf-1")
		wantStatus(t, again, 200)
		if again.header.Get("Idempotent-Replayed") != "true" || again.str("id") != r.str("id") {
			t.Fatalf("replay = %v %s", again.header, again.raw)
		}
		wantCode(t, refund(map[string]any{"transaction_id": id, "amount": 100}, "Idempotency-Key", "rf-1"), 422, "idempotency_key_reused")
		wantCode(t, refund(map[string]any{"transaction_id": id, "amount": 6001}), 400, "refund_exceeds_payment")
		wantCode(t, refund(map[string]any{"transaction_id": id, "amount": "600"}), 400, "invalid_amount")
		wantCode(t, refund(map[string]any{"transaction_id": id, "amount": 10.5}), 400, "invalid_amount")
		wantCode(t, refund(map[string]any{"transaction_id": id, "method": "cash"}), 400, "invalid_body")
		wantCode(t, refund(map[string]any{"transaction_id": id, "tip": 1}), 400, "invalid_body")
		wantCode(t, refund(map[string]any{}), 400, "invalid_body")
		wantCode(t, refund(map[string]any{"transaction_id": cauri.NewID("cs_")}), 404, "transaction_not_found")
		wantCode(t, e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}, bearer(keys["live_secret"])...), 404, "transaction_not_found")
		wantCode(t, e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}, bearer(keys["test_public"])...), 401, "unauthorized")
		wantCode(t, e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}), 401, "unauthorized")
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionSuccess {
			t.Fatalf("after a partial refund: %s; want SUCCESS", s.Status)
		}
		e.clock.Add(1e9)

		// The rest, through the client: the session is REFUNDED.
		c := client.New(e.url, key, client.WithRetries(0, 0))
		rest, replayed, err := c.CreateRefund(ctx, client.RefundCreateRequest{TransactionId: id}, "rf-2")
		if err != nil || replayed || rest.Status != client.RefundStatusSucceeded || rest.Amount.String() != "6000" {
			t.Fatalf("the rest = %+v, %v, %v", rest, replayed, err)
		}
		status := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(key)...)
		if status.str("status") != "REFUNDED" || status.body["paid"] != false {
			t.Fatalf("session = %s", status.raw)
		}
		var apiErr *client.APIError
		if _, _, err := c.CreateRefund(ctx, client.RefundCreateRequest{TransactionId: id}, ""); !errors.As(err, &apiErr) || apiErr.Status != 400 || string(apiErr.Code) != "not_refundable" {
			t.Fatalf("a refund of a REFUNDED session = %v; want 400 not_refundable", err)
		}
		// A replay once REFUNDED is still the refund.
		wantStatus(t, refund(map[string]any{"transaction_id": id, "amount": 4000, "reason": "one item back"}, "Idempotency-Key", "rf-1"), 200)

		// Read and listed, newest first, a page at a time.
		got, err := c.Refund(ctx, r.str("id"))
		if err != nil || got.Id != r.str("id") || got.Reason == nil || *got.Reason != "one item back" {
			t.Fatalf("Refund = %+v, %v", got, err)
		}
		page, err := c.ListRefunds(ctx, client.RefundQuery{TransactionID: id, Limit: 1})
		if err != nil || page.Count != 1 || page.Data[0].Id != rest.Id {
			t.Fatalf("first page = %+v, %v", page, err)
		}
		page, err = c.ListRefunds(ctx, client.RefundQuery{StartingAfter: rest.Id})
		if err != nil || page.Count != 1 || page.Data[0].Id != r.str("id") {
			t.Fatalf("second page = %+v, %v", page, err)
		}
		wantCode(t, e.do("GET", "/v1/refunds?status=done", nil, bearer(key)...), 400, "invalid_body")
		wantCode(t, e.do("GET", "/v1/refunds?limit=0", nil, bearer(key)...), 400, "invalid_body")
		wantCode(t, e.do("GET", "/v1/refunds?starting_after=re_nope", nil, bearer(key)...), 400, "invalid_body")
		live := e.do("GET", "/v1/refunds", nil, bearer(keys["live_secret"])...)
		if live.status != 200 || live.body["count"] != 0.0 {
			t.Fatalf("live list = %s; want empty", live.raw)
		}
		wantCode(t, e.do("GET", "/v1/refunds/"+r.str("id"), nil, bearer(keys["live_secret"])...), 404, "refund_not_found")
		wantCode(t, e.do("GET", "/v1/refunds/"+r.str("id"), nil, bearer(e.keys["test_secret"])...), 404, "refund_not_found") // another workspace
		wantCode(t, e.do("GET", "/v1/refunds/re_nope", nil, bearer(key)...), 404, "refund_not_found")

		// Each end emitted payment.updated (after the sandbox's payment.completed).
		events, _ := st.SessionEvents(ctx, id)
		var updated []*cauri.Event
		for _, ev := range events {
			if ev.Type == cauri.EventPaymentUpdated {
				updated = append(updated, ev)
			}
		}
		if len(updated) != 2 {
			t.Fatalf("%d payment.updated; want 2", len(updated))
		}
		var data map[string]any
		json.Unmarshal(updated[1].Data, &data)
		if data["status"] != "REFUNDED" || data["amount_refunded"] != 10000.0 || data["order_id"] != "A-1" {
			t.Errorf("last payment.updated = %s", updated[1].Data)
		}
	})
}

// TestRefunds_Payout: a live payment through pawaPay (on its simulator)
// refunded with method payout: a transfer to the number that paid; the
// refund ends with it (its callback), and the session is REFUNDED.
func TestRefunds_Payout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Live shop", true)
		g, sim, simURL := e.addSimulatedGateway(ws, "SN")
		sim.CallbackURL = e.url + "/callbacks/" + g.ID
		id := e.payLive(keys["live_public"], g.ID, simURL, 5000, "+221771234567")
		r := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "method": "payout"}, bearer(keys["live_secret"])...)
		wantStatus(t, r, 201)
		if r.str("status") != "pending" || r.str("method") != "payout" || r.str("transfer_id") == "" || r.body["livemode"] != true {
			t.Fatalf("refund = %s", r.raw)
		}
		tr, err := st.Transfer(ctx, ws.ID, r.str("transfer_id"))
		if err != nil || tr.Phone != "+221771234567" || tr.Amount != 5000 {
			t.Fatalf("transfer = %+v, %v", tr, err)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+tr.Reference) // its callback comes to the gateway's address
		got := e.do("GET", "/v1/refunds/"+r.str("id"), nil, bearer(keys["live_secret"])...)
		if got.str("status") != "succeeded" {
			t.Fatalf("refund after its transfer = %s", got.raw)
		}
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
	})
}

// TestRefunds_PawaPay: a live payment through pawaPay (on its simulator,
// calling back to the gateway's address) refunded through the API in two
// parts with method aggregator: pawaPay's refunds, each pending until its
// callback (confirmed by a status read) ends it; the second makes the
// session REFUNDED; each end is a payment.updated of the transaction;
// asking for more is refund_exceeds_payment.
func TestRefunds_PawaPay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Live shop", true)
		g, sim, simURL := e.addSimulatedGateway(ws, "SN")
		sim.CallbackURL = e.url + "/callbacks/" + g.ID
		id := e.payLive(keys["live_public"], g.ID, simURL, 5000, "+221771234567")
		key := bearer(keys["live_secret"])
		refundAndSettle := func(body map[string]any) response {
			t.Helper()
			r := e.do("POST", "/v1/refunds", body, key...)
			wantStatus(t, r, 201)
			if r.str("status") != "pending" || r.str("provider") != "pawapay" || r.str("method") != "aggregator" {
				t.Fatalf("refund = %s", r.raw)
			}
			rf, err := st.Refund(ctx, ws.ID, r.str("id"))
			if err != nil {
				t.Fatal(err)
			}
			e.clock.Add(movement.CallbackCheck)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+rf.Reference) // pawaPay calls back
			got := e.do("GET", "/v1/refunds/"+r.str("id"), nil, key...)
			if got.str("status") != "succeeded" || got.str("completed_at") == "" {
				t.Fatalf("refund after pawaPay's callback = %s", got.raw)
			}
			return got
		}
		first := refundAndSettle(map[string]any{"transaction_id": id, "amount": 2000})
		if first.body["amount"] != 2000.0 {
			t.Fatalf("first = %s", first.raw)
		}
		wantCode(t, e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "amount": 3001}, key...), 400, "refund_exceeds_payment")
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionSuccess {
			t.Fatalf("session = %s after a part; want SUCCESS", s.Status)
		}
		e.clock.Add(time.Second)
		rest := refundAndSettle(map[string]any{"transaction_id": id})
		if rest.body["amount"] != 3000.0 {
			t.Fatalf("rest = %s", rest.raw)
		}
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
		wantCode(t, e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}, key...), 400, "not_refundable")
		events, _ := st.SessionEvents(ctx, id)
		updated := 0
		for _, ev := range events {
			if ev.Type == cauri.EventPaymentUpdated {
				updated++
			}
		}
		if updated != 2 {
			t.Fatalf("%d payment.updated; want 2", updated)
		}
		refunds := e.do("GET", "/v1/refunds?transaction_id="+id+"&status=succeeded", nil, key...)
		if refunds.body["count"] != 2.0 {
			t.Fatalf("refunds = %s", refunds.raw)
		}
	})
}
