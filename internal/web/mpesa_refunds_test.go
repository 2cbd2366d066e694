package web

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestRefunds_MPesaReversal refunds Kenyan M-Pesa payments through POST
// /v1/refunds, by Daraja's Reversal API, against the simulator over HTTP:
// the payment's receipt (from Safaricom's callback) is what is reversed;
// a part is refused before anything is sent (a reversal gives back the
// whole payment); the whole is pending until Daraja's result reaches the
// gateway's callback address with its token, then succeeded, the session
// REFUNDED; a forged result (no token, a wrong one) changes nothing and is
// answered 200; a failed reversal ends failed with Daraja's words and what
// to fix; a reversal whose acknowledgement and result were lost stays
// pending, is never sent again, and is ended by the reconciler's
// transaction status query; a payment whose receipt never came, and any
// payment through a gateway without an initiator, cannot be refunded so
// (400, nothing written).
func TestRefunds_MPesaReversal(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Nairobi shop", true)
		key := bearer(keys["live_secret"])
		cred := base64.StdEncoding.EncodeToString(make([]byte, 256))
		sim := &mpesa.Simulator{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "174379", PassKey: "pk", InitiatorName: "testapi", B2CCredential: cred}
		creds := map[string]string{"consumer_key": "ck", "consumer_secret": "cs", "shortcode": "174379", "passkey": "pk",
			"initiator_name": "testapi", "security_credential": cred}
		g, simURL := e.addGateway(ws, "mpesa", sim, creds, "KE")

		// pay is a SUCCESS session of 1,500 KES paid through g, and its
		// attempt, whose ProviderRef is then the payment's receipt.
		pay := func(g *cauri.Gateway, simURL, publicKey string) (string, *cauri.PaymentAttempt) {
			t.Helper()
			id := e.mustSession(publicKey, `{"amount": 1500, "currency": "KES"}`)
			wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MPESA", "phone": "0712 345 678"}), 200)
			a, _ := st.Attempts(ctx, id)
			// A forged callback (Daraja signs none) claiming the push was
			// paid with another receipt: only a signal, its receipt never
			// believed.
			forged := `{"Body":{"stkCallback":{"MerchantRequestID":"1","CheckoutRequestID":"` + a[0].ProviderRef + `","ResultCode":0,` +
				`"ResultDesc":"ok","CallbackMetadata":{"Item":[{"Name":"Amount","Value":1500},{"Name":"MpesaReceiptNumber","Value":"FAKE000001"}]}}}}`
			if res := e.do("POST", "/callbacks/"+g.ID, forged); res.status != 200 {
				t.Fatalf("forged callback = %d %s", res.status, res.raw)
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+a[0].ProviderRef)
			waitFor(t, "the callback settled the session", func() bool {
				s, err := st.Session(ctx, id)
				return err == nil && s.Status == cauri.SessionSuccess
			})
			a, _ = st.Attempts(ctx, id)
			if !strings.HasPrefix(a[0].ProviderRef, "SIM") {
				t.Fatalf("attempt = %+v; want the receipt of Safaricom's callback as its ProviderRef, not a forged one", a[0])
			}
			return id, a[0]
		}
		refund := func(id string) (response, *cauri.Refund) {
			t.Helper()
			r := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "reason": "order cancelled"}, key...)
			wantStatus(t, r, 201)
			if r.str("status") != "pending" || r.str("provider") != "mpesa" || r.body["amount"] != 1500.0 {
				t.Fatalf("refund = %s", r.raw)
			}
			rf, err := st.Refund(ctx, ws.ID, r.str("id"))
			if err != nil || rf.InitiatedAt == nil {
				t.Fatalf("stored = %+v, %v", rf, err)
			}
			return r, rf
		}
		get := func(id string) response { return e.do("GET", "/v1/refunds/"+id, nil, key...) }

		// A part is refused before anything is written or sent.
		id, a := pay(g, simURL, keys["live_public"])
		part := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id, "amount": 500}, key...)
		wantCode(t, part, 400, "refunds_unsupported")
		if !strings.Contains(part.raw, "whole payment") || !strings.Contains(part.raw, "payout") || sim.Reversals() != 0 {
			t.Fatalf("a part = %s, %d reversals", part.raw, sim.Reversals())
		}

		// The whole: pending until the result; forged results change nothing.
		r, rf := refund(id)
		if sim.Reversals() != 1 || rf.ProviderRef == "" {
			t.Fatalf("%d reversals, refund %+v", sim.Reversals(), rf)
		}
		forged := `{"Result":{"ResultType":0,"ResultCode":0,"ResultDesc":"The service request is processed successfully.","TransactionID":"FAKE000001"}}`
		for _, q := range []string{"", "/reversal." + rf.Reference + ".1500." + a.ProviderRef + ".forged"} {
			if res := e.do("POST", "/callbacks/"+g.ID+q, forged); res.status != 200 {
				t.Fatalf("forged result = %d %s", res.status, res.raw)
			}
		}
		e.clock.Add(movement.CallbackCheck)
		if got := get(r.str("id")); got.str("status") != "pending" {
			t.Fatalf("after forged results = %s", got.raw)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+rf.ProviderRef)
		waitFor(t, "the reversal's result ended the refund", func() bool { return get(r.str("id")).str("status") == "succeeded" })
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
		if done, _ := st.Refund(ctx, ws.ID, r.str("id")); !strings.HasPrefix(done.ProviderRef, "SIR") {
			t.Fatalf("refund = %+v; want the reversal's receipt", done)
		}

		// A failed reversal: Daraja's words and what to fix; the session stays paid.
		id, _ = pay(g, simURL, keys["live_public"])
		r, rf = refund(id)
		e.clock.Add(movement.CallbackCheck)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+rf.ProviderRef+"?status=21")
		waitFor(t, "the failed reversal ended the refund", func() bool { return get(r.str("id")).str("status") == "failed" })
		if got := get(r.str("id")); got.str("failure_code") != "rejected" || !strings.Contains(got.str("failure_message"), "21: ") ||
			!strings.Contains(got.str("failure_message"), "Org Reversals Initiator") {
			t.Fatalf("failed refund = %s", got.raw)
		}
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionSuccess {
			t.Fatalf("session after a failed refund = %s; want SUCCESS", s.Status)
		}

		// Its acknowledgement and result lost: pending, never sent again,
		// ended by the reconciler's status query about the payment.
		id, a = pay(g, simURL, keys["live_public"])
		sim.LoseReversalAnswers.Store(true)
		sim.LoseResults.Store(true)
		reversals := sim.Reversals()
		r, rf = refund(id)
		if sim.Reversals() != reversals+1 || rf.ProviderRef != "" {
			t.Fatalf("%d reversals, refund %+v", sim.Reversals()-reversals, rf)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+a.ProviderRef) // Daraja reversed it; nobody heard
		waitFor(t, "the status query ended the refund", func() bool {
			e.clock.Add(time.Hour)
			if _, err := e.srv.Refunds.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			return get(r.str("id")).str("status") == "succeeded"
		})
		if sim.Reversals() != reversals+1 {
			t.Fatalf("the lost reversal was sent %d times; want once", sim.Reversals()-reversals)
		}
		sim.LoseReversalAnswers.Store(false)
		sim.LoseResults.Store(false)

		// A payment confirmed without Safaricom's callback (its attempt
		// still known by the CheckoutRequestID) has no receipt to reverse:
		// refused before anything is written or sent.
		sim.LoseCallbacks.Store(true)
		id = e.mustSession(keys["live_public"], `{"amount": 1500, "currency": "KES"}`)
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MPESA", "phone": "0712 345 678"}), 200)
		attempts, _ := st.Attempts(ctx, id)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].ProviderRef)
		waitFor(t, "the status query confirmed the payment", func() bool {
			e.clock.Add(movement.StatusCheck)
			return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}).str("status") == "SUCCESS"
		})
		sim.LoseCallbacks.Store(false)
		if attempts, _ = st.Attempts(ctx, id); !strings.HasPrefix(attempts[0].ProviderRef, "ws_CO_") {
			t.Fatalf("attempt = %+v; want the CheckoutRequestID still", attempts[0])
		}
		reversals = sim.Reversals()
		noReceipt := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}, key...)
		wantCode(t, noReceipt, 400, "refunds_unsupported")
		if !strings.Contains(noReceipt.raw, "receipt") || !strings.Contains(noReceipt.raw, "payout") || sim.Reversals() != reversals {
			t.Fatalf("without a receipt = %s, %d reversals sent", noReceipt.raw, sim.Reversals()-reversals)
		}
		if list, _ := st.SessionRefunds(ctx, id); len(list) != 0 {
			t.Fatalf("refunds = %+v; want none written", list)
		}
		// A forged callback naming it with a receipt changes nothing.
		forged = `{"Body":{"stkCallback":{"MerchantRequestID":"1","CheckoutRequestID":"` + attempts[0].ProviderRef + `","ResultCode":0,` +
			`"ResultDesc":"ok","CallbackMetadata":{"Item":[{"Name":"Amount","Value":1500},{"Name":"MpesaReceiptNumber","Value":"FAKE000002"}]}}}}`
		if res := e.do("POST", "/callbacks/"+g.ID, forged); res.status != 200 {
			t.Fatalf("forged callback = %d %s", res.status, res.raw)
		}
		if attempts, _ = st.Attempts(ctx, id); attempts[0].ProviderRef == "FAKE000002" {
			t.Fatalf("attempt = %+v; a forged receipt was believed", attempts[0])
		}
		// Its callback arriving late (after the status query settled it):
		// the attempt takes the receipt the callback gave (written to the
		// store, never kept in memory), and the payment can be reversed.
		gatewaytest.Control(t, simURL, "/_sim/callback/"+attempts[0].ProviderRef)
		waitFor(t, "the late callback's receipt kept", func() bool {
			attempts, _ = st.Attempts(ctx, id)
			return len(attempts[0].ProviderRef) == 10 && !strings.HasPrefix(attempts[0].ProviderRef, "ws_CO_")
		})
		late := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id}, key...)
		if late.status != 201 || sim.Reversals() != reversals+1 {
			t.Fatalf("refund after the late callback = %d %s, %d reversals sent; want 201 and one", late.status, late.raw, sim.Reversals()-reversals)
		}

		// Safaricom's callback (to the push's own address) saying it was
		// paid while the status query still says it is being processed:
		// the query decides (the payment stays PENDING), the receipt is
		// kept with the attempt, and becomes its provider ref when the
		// query confirms the payment (its own callback lost).
		id = e.mustSession(keys["live_public"], `{"amount": 1500, "currency": "KES"}`)
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MPESA", "phone": "0712 345 678"}), 200)
		attempts, _ = st.Attempts(ctx, id)
		gatewaytest.Control(t, simURL, "/_sim/callback/"+attempts[0].ProviderRef+"?status=0")
		if s, _ := st.Session(ctx, id); s.Status != cauri.SessionPending {
			t.Fatalf("session = %s after a callback the query does not confirm yet; want PENDING", s.Status)
		}
		if early, _ := st.Attempts(ctx, id); early[0].Status != cauri.AttemptPending || early[0].ProviderRef != attempts[0].ProviderRef ||
			early[0].FinalRef != "SIM0000000" {
			t.Fatalf("attempt = %+v; want it pending under its push's id, the receipt kept", early[0])
		}
		sim.LoseCallbacks.Store(true)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].ProviderRef)
		waitFor(t, "the status query confirmed the payment", func() bool {
			e.clock.Add(movement.StatusCheck)
			return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}).str("status") == "SUCCESS"
		})
		sim.LoseCallbacks.Store(false)
		if done, _ := st.Attempts(ctx, id); done[0].ProviderRef != "SIM0000000" {
			t.Fatalf("attempt = %+v; want the kept receipt as its provider ref", done[0])
		}
		// The same, but the query then says the customer cancelled: the
		// payment fails as the query says, and a person is told (the
		// callback said it was paid).
		finalRefs := func() string {
			for _, l := range strings.Split(e.do("GET", "/metrics", nil).raw, "\n") {
				if strings.HasPrefix(l, `cauri_movement_failures_total{kind="payment",step="final_reference"}`) {
					return l
				}
			}
			return ""
		}
		before := finalRefs()
		id = e.mustSession(keys["live_public"], `{"amount": 1500, "currency": "KES"}`)
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "MPESA", "phone": "0712 345 678"}), 200)
		attempts, _ = st.Attempts(ctx, id)
		gatewaytest.Control(t, simURL, "/_sim/callback/"+attempts[0].ProviderRef+"?status=0")
		sim.LoseCallbacks.Store(true)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].ProviderRef+"?status=1032")
		waitFor(t, "the status query failed the payment", func() bool {
			e.clock.Add(movement.StatusCheck)
			return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}).str("status") == "FAILED"
		})
		sim.LoseCallbacks.Store(false)
		if after := finalRefs(); after == "" || after == before {
			t.Fatalf("final_reference failures %q -> %q; want one more", before, after)
		}

		// No initiator: no reversal, the credential named, nothing written.
		ws2, keys2 := e.newWorkspace("Collections only", true)
		bare := map[string]string{"consumer_key": "ck2", "consumer_secret": "cs2", "shortcode": "174379", "passkey": "pk2"}
		sim2 := &mpesa.Simulator{ConsumerKey: "ck2", ConsumerSecret: "cs2", ShortCode: "174379", PassKey: "pk2"}
		g2, simURL2 := e.addGateway(ws2, "mpesa", sim2, bare, "KE")
		id2, _ := pay(g2, simURL2, keys2["live_public"])
		no := e.do("POST", "/v1/refunds", map[string]any{"transaction_id": id2}, bearer(keys2["live_secret"])...)
		wantCode(t, no, 400, "refunds_unsupported")
		if !strings.Contains(no.raw, "initiator_name") || !strings.Contains(no.raw, "Org Reversals Initiator") {
			t.Fatalf("refusal = %s; want the credential and the role named", no.raw)
		}
		if list, _ := st.SessionRefunds(ctx, id2); len(list) != 0 || sim2.Reversals() != 0 {
			t.Fatalf("refunds = %+v, %d reversals; want none", list, sim2.Reversals())
		}
	})
}
