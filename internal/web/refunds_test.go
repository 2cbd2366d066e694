package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway/flutterwave"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	wavegw "github.com/cauri-pay/cauri/internal/gateway/wave"
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

// TestRefunds_EveryConnector refunds, through POST /v1/refunds with method
// aggregator, a live payment through each connector that refunds besides
// pawaPay, on its simulator over HTTP: a part, then the rest, each pending
// until its aggregator ends it (Paystack's signed refund webhook naming
// the transaction, confirmed by a status read; Flutterwave's status read
// by the reconciler, no webhook being documented; MTN MoMo's callback
// naming the refund, confirmed by a status read); the session is REFUNDED
// after the rest; more than is left is refused before the aggregator is
// called. An MTN MoMo gateway without the Disbursement product cannot
// refund: 400 refunds_unsupported naming the credential. Wave refunds
// only a whole payment, at once; a part is refused, the payout way named.
func TestRefunds_EveryConnector(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Refunds everywhere", true)
		key := bearer(keys["live_secret"])
		momoCreds := map[string]string{"api_user": "0b0c2f36-0d6b-4a8b-9d36-2f7f3c1f2a10", "api_key": "momo-api-key", "collection_key": "col-sub-key",
			"disbursement_key": "dis-sub-key"}
		cases := []struct {
			provider, country, code, phone, session string
			part, rest                              float64
			sim                                     interface {
				http.Handler
				Refunds() int
			}
			creds map[string]string
			// end settles a refund at the simulator; its outcome reaches
			// Cauri by webhook or, with reconcile, by the reconciler.
			reconcile bool
		}{
			{provider: "paystack", country: "GH", code: "mtn", phone: "024 123 4567",
				session: `{"amount": 40, "currency": "GHS", "customer_email": "ama@example.com"}`, part: 15.5, rest: 24.5,
				sim: &paystack.Simulator{SecretKey: "sk_live_sim"}, creds: map[string]string{"secret_key": "sk_live_sim"}},
			{provider: "flutterwave", country: "UG", code: "MTN", phone: "0772 123456", session: `{"amount": 20000, "currency": "UGX"}`,
				part: 5000, rest: 15000, reconcile: true,
				sim: &flutterwave.Simulator{SecretKey: "FLWSECK", SecretHash: "h"}, creds: map[string]string{"secret_key": "FLWSECK", "secret_hash": "h"}},
			{provider: "mtnmomo", country: "CI", code: "mtnivorycoast", phone: "05 05 12 34 56", session: `{"amount": 1500}`, part: 500, rest: 1000,
				sim: &mtnmomo.Simulator{APIUser: momoCreds["api_user"], APIKey: momoCreds["api_key"], CollectionKey: momoCreds["collection_key"],
					DisbursementKey: momoCreds["disbursement_key"]}, creds: momoCreds},
		}
		for _, c := range cases {
			t.Run(c.provider, func(t *testing.T) {
				g, simURL := e.addGateway(ws, c.provider, c.sim, c.creds, c.country)
				switch sim := c.sim.(type) {
				case *paystack.Simulator:
					sim.WebhookURL = e.url + "/callbacks/" + g.ID
				case *flutterwave.Simulator:
					sim.WebhookURL = e.url + "/callbacks/" + g.ID
				}
				id := e.mustSession(keys["live_public"], c.session)
				if r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": c.code, "phone": c.phone}); r.status != 200 {
					t.Fatalf("initiate = %d %s", r.status, r.raw)
				}
				attempts, _ := st.Attempts(ctx, id)
				gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
				waitFor(t, "the payment settled", func() bool {
					e.clock.Add(movement.StatusCheck)
					return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}).str("status") == "SUCCESS"
				})
				refund := func(body map[string]any, want float64) {
					t.Helper()
					r := e.do("POST", "/v1/refunds", body, key...)
					wantStatus(t, r, 201)
					if r.str("status") != "pending" || r.str("provider") != c.provider || r.str("method") != "aggregator" || r.body["amount"] != want {
						t.Fatalf("refund = %s", r.raw)
					}
					rf, err := st.Refund(ctx, ws.ID, r.str("id"))
					if err != nil || rf.InitiatedAt == nil {
						t.Fatalf("stored = %+v, %v", rf, err)
					}
					handle := rf.Reference // MTN MoMo's X-Reference-Id
					if c.provider != "mtnmomo" {
						handle = rf.ProviderRef // Paystack's and Flutterwave's own id, kept from their answer
					}
					e.clock.Add(movement.CallbackCheck)
					gatewaytest.Control(t, simURL, "/_sim/settle/"+handle)
					if c.reconcile {
						e.clock.Add(time.Minute)
						if _, err := e.srv.Refunds.Reconcile(ctx); err != nil {
							t.Fatal(err)
						}
					}
					waitFor(t, "the refund ended", func() bool {
						return e.do("GET", "/v1/refunds/"+r.str("id"), nil, key...).str("status") == "succeeded"
					})
				}
				refund(map[string]any{"transaction_id": id, "amount": c.part, "reason": "one item returned"}, c.part)
				if s, _ := st.Session(ctx, id); s.Status != cauri.SessionSuccess {
					t.Fatalf("session after a part = %s; want SUCCESS", s.Status)
				}
				made := c.sim.Refunds()
				wantCode(t, e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "amount": c.rest + 1}, key...), 400, "refund_exceeds_payment")
				if c.sim.Refunds() != made {
					t.Fatalf("a refused refund reached %s", c.provider)
				}
				e.clock.Add(time.Second)
				refund(map[string]any{"transaction_id": id}, c.rest)
				if s, _ := st.Session(ctx, id); s.Status != cauri.SessionRefunded {
					t.Fatalf("session after the rest = %s; want REFUNDED", s.Status)
				}
				if c.sim.Refunds() != 2 {
					t.Fatalf("%d refunds at %s; want 2", c.sim.Refunds(), c.provider)
				}
			})
		}
		t.Run("wave", func(t *testing.T) {
			// Wave refunds only a whole payment, at once (200, no webhook):
			// a part is refused before Wave is called, the payout way named.
			sim := &wavegw.Simulator{APIKey: "wave_sn_prod_sim"}
			ws3, keys3 := e.newWorkspace("Wave shop", true)
			g, simURL := e.addGateway(ws3, "wave", sim, map[string]string{"api_key": "wave_sn_prod_sim"}, "SN")
			id := e.mustSession(keys3["live_public"], `{"amount": 2500}`)
			wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE", "phone": "77 123 45 67"}), 200)
			attempts, _ := st.Attempts(ctx, id)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
			waitFor(t, "the payment settled", func() bool {
				e.clock.Add(movement.StatusCheck)
				return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}).str("status") == "SUCCESS"
			})
			key3 := bearer(keys3["live_secret"])
			r := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "amount": 1000}, key3...)
			wantCode(t, r, 400, "refunds_unsupported")
			if !strings.Contains(r.raw, "payout") || sim.Refunds() != 0 {
				t.Fatalf("refusal = %s, %d refunds at Wave; want the payout way named, none sent", r.raw, sim.Refunds())
			}
			r = e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "reason": "order cancelled"}, key3...)
			wantStatus(t, r, 201)
			if r.str("status") != "succeeded" || r.str("provider") != "wave" || r.body["amount"] != 2500.0 || sim.Refunds() != 1 {
				t.Fatalf("refund = %s, %d refunds at Wave; want succeeded at once, once", r.raw, sim.Refunds())
			}
			if s, _ := st.Session(ctx, id); s.Status != cauri.SessionRefunded {
				t.Fatalf("session = %s; want REFUNDED", s.Status)
			}
		})
		t.Run("MTNMoMoWithoutDisbursement", func(t *testing.T) {
			creds := map[string]string{"api_user": momoCreds["api_user"], "api_key": momoCreds["api_key"], "collection_key": momoCreds["collection_key"]}
			sim := &mtnmomo.Simulator{APIUser: creds["api_user"], APIKey: creds["api_key"], CollectionKey: creds["collection_key"]}
			ws2, keys2 := e.newWorkspace("MoMo collections only", true)
			g, simURL := e.addGateway(ws2, "mtnmomo", sim, creds, "CI")
			id := e.mustSession(keys2["live_public"], `{"amount": 1500}`)
			e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "mtnivorycoast", "phone": "05 05 12 34 56"})
			attempts, _ := st.Attempts(ctx, id)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
			waitFor(t, "the payment settled", func() bool {
				e.clock.Add(movement.StatusCheck)
				return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}).str("status") == "SUCCESS"
			})
			r := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}, bearer(keys2["live_secret"])...)
			wantCode(t, r, 400, "refunds_unsupported")
			if !strings.Contains(r.raw, "disbursement_key") {
				t.Fatalf("refusal = %s; want the missing credential named", r.raw)
			}
			if list, _ := st.SessionRefunds(ctx, id); len(list) != 0 {
				t.Fatalf("refunds = %+v; want none written", list)
			}
		})
	})
}
