package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// addSimulatedGateway connects a live pawaPay gateway, pointed at a
// simulator on 127.0.0.1, to the workspace.
func (e *env) addSimulatedGateway(ws *cauri.Workspace, countries ...string) (*cauri.Gateway, *pawapay.Simulator, string) {
	e.t.Helper()
	sim := &pawapay.Simulator{Token: "sim-token"}
	g, url := e.addGateway(ws, "pawapay", sim, map[string]string{"api_token": "sim-token"}, countries...)
	return g, sim, url
}

// addGateway connects a live gateway of provider, pointed at its simulator
// sim served on 127.0.0.1, to the workspace; it returns the simulator's address.
func (e *env) addGateway(ws *cauri.Workspace, provider string, sim http.Handler, creds map[string]string, countries ...string) (*cauri.Gateway, string) {
	e.t.Helper()
	srv := httptest.NewServer(sim)
	e.t.Cleanup(srv.Close)
	g := storetest.Gateway(e.t, e.store, ws, provider, srv.URL, creds, e.clock.Now(), countries...)
	return g, srv.URL
}

// payLive pays a new live session of amount through the Wave of Senegal
// of pawaPay gateway gw, served by the simulator at simURL: initiated from
// the hosted page, settled as the number says, then verified.
func (e *env) payLive(publicKey, gw, simURL string, amount int, phone string) string {
	e.t.Helper()
	id := e.mustSession(publicKey, map[string]any{"amount": amount})
	wantStatus(e.t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": gw, "code": "WAVE_SEN", "phone": phone}), 200)
	attempts, err := e.store.Attempts(context.Background(), id)
	if err != nil || len(attempts) != 1 {
		e.t.Fatalf("attempts = %v, %v", attempts, err)
	}
	gatewaytest.Control(e.t, simURL, "/_sim/settle/"+attempts[0].Reference)
	wantStatus(e.t, e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}), 200)
	return id
}

func TestLivePayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Live shop", true)
		g, sim, simURL := e.addSimulatedGateway(ws, "SN")
		initiate := func(id, gw, code, phone string) response {
			return e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": gw, "code": code, "phone": phone})
		}
		verify := func(id string) response {
			return e.do("POST", "/checkout/verify", map[string]string{"transactionId": id})
		}
		t.Run("PayAndVerify", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000, "metadata": {"order_id": "L-1"}}`)
			r := initiate(id, g.ID, "WAVE_SEN", "77 123 45 67") // national format
			if r.status != 200 || r.str("status") != "PENDING" || r.body["paid"] != false {
				t.Fatalf("initiate = %d %s", r.status, r.raw)
			}
			attempts, _ := st.Attempts(context.Background(), id)
			if len(attempts) != 1 || attempts[0].Phone != "+221771234567" || attempts[0].OperatorCode != "WAVE_SEN" || attempts[0].Status != cauri.AttemptPending {
				t.Fatalf("attempts = %+v", attempts)
			}
			wantError(t, initiate(id, g.ID, "WAVE_SEN", "771234567"), 409, "already waiting")
			calls := sim.Calls()
			if r := verify(id); r.str("status") != "PENDING" || sim.Calls() != calls+1 {
				t.Fatalf("first verify = %s, %d aggregator calls; want one check", r.raw, sim.Calls()-calls)
			}
			verify(id)
			e.clock.Add(7 * time.Second)
			verify(id)
			if sim.Calls() != calls+1 {
				t.Fatalf("%d checks within 8 s; want 1", sim.Calls()-calls)
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
			e.clock.Add(time.Second)
			r = verify(id)
			if r.str("status") != "SUCCESS" || r.body["paid"] != true {
				t.Fatalf("verify after the customer confirmed = %s", r.raw)
			}
			s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
			if s.str("provider") != "pawapay" || s.body["livemode"] != true {
				t.Fatalf("session = %s", s.raw)
			}
			events, _ := st.SessionEvents(context.Background(), id)
			if len(events) != 1 || events[0].Type != cauri.EventPaymentCompleted || !events[0].Livemode {
				t.Fatalf("events = %+v; want one live payment.completed", events)
			}
			e.clock.Add(10 * time.Second)
			if r := verify(id); r.str("status") != "SUCCESS" {
				t.Fatalf("verify later = %s", r.raw)
			}
			wantError(t, initiate(id, g.ID, "WAVE_SEN", "771234567"), 409, "can no longer be paid")
		})
		t.Run("RefusedByTheAggregator", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			r := initiate(id, g.ID, "ORANGE_SEN", "+221770000039")
			wantError(t, r, 502, "INVALID_PHONE_NUMBER")
			if r.body["success"] != false {
				t.Fatalf("shape = %s", r.raw)
			}
			s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
			if s.str("status") != "FAILED" {
				t.Fatalf("session after a refusal = %s", s.raw)
			}
			if r := initiate(id, g.ID, "ORANGE_SEN", "+221771234567"); r.status != 200 {
				t.Fatalf("retry after a refusal = %d %s; a failed session can be paid", r.status, r.raw)
			}
		})
		t.Run("Failover", func(t *testing.T) {
			second, _, _ := e.addSimulatedGateway(ws, "SN")
			gatewaytest.Control(t, simURL, "/_sim/fault?mode=500-initiate")
			defer gatewaytest.Control(t, simURL, "/_sim/fault?mode=none")
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			if r := initiate(id, g.ID, "FREE_SEN", "+221761234567"); r.status != 200 || r.str("status") != "PENDING" {
				t.Fatalf("initiate with the first gateway down = %d %s", r.status, r.raw)
			}
			attempts, _ := st.Attempts(context.Background(), id)
			byGateway := map[string]*cauri.PaymentAttempt{}
			for _, a := range attempts {
				byGateway[a.GatewayID] = a
			}
			first, next := byGateway[g.ID], byGateway[second.ID]
			if len(attempts) != 2 || first == nil || next == nil || next.Status != cauri.AttemptPending ||
				first.Status != cauri.AttemptFailed || !strings.Contains(first.Reason, "not started") {
				t.Fatalf("attempts = %+v; want the first gateway's failed, the second's pending", attempts)
			}
			if events, _ := st.SessionEvents(context.Background(), id); len(events) != 0 {
				t.Fatalf("events = %+v; an unseen failover emits none", events)
			}
		})
		t.Run("Errors", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			wantError(t, initiate(id, g.ID, "MTN_MOMO_CIV", "+2250707123456"), 400, "not available")
			wantError(t, initiate(id, g.ID, "WAVE_SEN", "+2250707123456"), 400, "not a phone number of SN")
			wantError(t, initiate(id, "gw_nope", "WAVE_SEN", "+221771234567"), 400, "not available")
			wantError(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id}), 400, "is required")
			wantError(t, initiate("cs_nope", g.ID, "WAVE_SEN", "+221771234567"), 404, "not found")
			test := e.mustSession(keys["test_secret"], `{"amount": 5000}`)
			wantError(t, initiate(test, g.ID, "WAVE_SEN", "+221771234567"), 403, "test session")
			wantError(t, verify(""), 400, "transactionId")
		})
	})
}

func TestLivePayment_StatusAndCallbacks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Live shop", true)
		g, sim, simURL := e.addSimulatedGateway(ws, "SN")
		pay := func() (string, *cauri.PaymentAttempt) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "771234567"})
			wantStatus(t, r, 200)
			attempts, _ := st.Attempts(context.Background(), id)
			return id, attempts[0]
		}
		status := func(id string) string {
			return e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...).str("status")
		}
		t.Run("StatusReadChecksTheAggregator", func(t *testing.T) {
			id, a := pay()
			if status(id) != "PENDING" {
				t.Fatal("not pending")
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+a.Reference)
			calls := sim.Calls()
			if status(id) != "PENDING" || sim.Calls() != calls {
				t.Fatalf("a second read within 8 s asked the aggregator (%d calls)", sim.Calls()-calls)
			}
			e.clock.Add(8 * time.Second)
			if got := status(id); got != "SUCCESS" {
				t.Fatalf("status 8 s later = %s; want SUCCESS", got)
			}
		})
		t.Run("Callback", func(t *testing.T) {
			sim.CallbackURL = e.url + "/callbacks/" + g.ID
			id, a := pay()
			status(id)                                                  // a status read checks now: the next may only in 8 s
			gatewaytest.Control(t, simURL, "/_sim/settle/"+a.Reference) // the simulator calls back at once: news, checked at once
			if got := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_public"])...).str("status"); got != "SUCCESS" {
				t.Fatalf("status after the callback = %s; want SUCCESS, learnt from the callback within the 8 s", got)
			}
			gatewaytest.Control(t, simURL, "/_sim/callback/"+a.Reference) // a duplicate
			if events, _ := st.SessionEvents(context.Background(), id); len(events) != 1 {
				t.Fatalf("%d events after a duplicated callback; want 1", len(events))
			}
		})
		t.Run("OutOfOrderCallbacks", func(t *testing.T) {
			id, a := pay()
			gatewaytest.Control(t, simURL, "/_sim/callback/"+a.Reference+"?status=COMPLETED") // early: the deposit is still ACCEPTED
			if got := status(id); got != "PENDING" {
				t.Fatalf("status after an early callback = %s; the aggregator still says pending", got)
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+a.Reference) // its callback comes within 2 s of the early one: not checked
			if attempts, _ := st.Attempts(context.Background(), id); attempts[0].Status != cauri.AttemptPending {
				t.Fatalf("attempt = %s; want still pending (callbacks are checked at most every 2 s)", attempts[0].Status)
			}
			e.clock.Add(2 * time.Second)
			gatewaytest.Control(t, simURL, "/_sim/callback/"+a.Reference+"?status=FAILED") // stale: the deposit COMPLETED
			if attempts, _ := st.Attempts(context.Background(), id); attempts[0].Status != cauri.AttemptSucceeded {
				t.Fatalf("attempt after a stale FAILED callback = %s; want succeeded, as the aggregator says", attempts[0].Status)
			}
			if got := status(id); got != "SUCCESS" {
				t.Fatalf("status = %s; want SUCCESS whatever the stale callback said", got)
			}
			if events, _ := st.SessionEvents(context.Background(), id); len(events) != 1 || events[0].Type != "payment.completed" {
				t.Fatalf("events = %+v; want one payment.completed", events)
			}
		})
		t.Run("LowBalance", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "770000049"}), 200)
			attempts, _ := st.Attempts(context.Background(), id)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference) // calls back: FAILED
			if got := status(id); got != "FAILED" {
				t.Fatalf("status = %s; want FAILED", got)
			}
			if attempts, _ = st.Attempts(context.Background(), id); !strings.Contains(attempts[0].Reason, "enough funds") {
				t.Fatalf("reason = %q; want the aggregator's", attempts[0].Reason)
			}
		})
		t.Run("CallbackIsOnlyASignal", func(t *testing.T) {
			id, a := pay()
			forged := `{"depositId": "` + a.Reference + `", "status": "COMPLETED"}`
			if r := e.do("POST", "/callbacks/"+g.ID, forged); r.status != 200 {
				t.Fatalf("callback = %d %s", r.status, r.raw)
			}
			if got := status(id); got != "PENDING" {
				t.Fatalf("a forged callback made the session %s; the aggregator still says pending", got)
			}
			if r := e.do("POST", "/callbacks/"+g.ID, `{"nonsense": true}`); r.status != 200 {
				t.Fatalf("unreadable callback = %d", r.status)
			}
			wantStatus(t, e.do("POST", "/callbacks/gw_"+strings.Repeat("a", 32), forged), 404)
		})
	})
}

func TestReconciler(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Live shop", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		ctx := context.Background()
		t.Run("LostCallback", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "771234567"}), 200)
			attempts, _ := st.Attempts(ctx, id)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference) // no callback URL: the callback is lost
			if n, err := e.srv.Checkout.Reconcile(ctx); err != nil || n != 0 {
				t.Fatalf("reconcile right away = %d, %v; a fresh attempt waits 8 s", n, err)
			}
			e.clock.Add(8 * time.Second)
			if n, err := e.srv.Checkout.Reconcile(ctx); err != nil || n != 1 {
				t.Fatalf("reconcile = %d, %v; want one attempt checked", n, err)
			}
			sess, _ := st.Session(ctx, id)
			if sess.Status != cauri.SessionSuccess {
				t.Fatalf("session after reconciling = %s; want SUCCESS", sess.Status)
			}
		})
		t.Run("Backoff", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "770000129"}), 200) // never settles
			e.clock.Add(time.Hour)
			if n, _ := e.srv.Checkout.Reconcile(ctx); n != 1 {
				t.Fatalf("first check = %d", n)
			}
			// The wait is a quarter of the attempt's age: 17.5 min at 1 h 10,
			// 21.25 min at 1 h 25.
			e.clock.Add(10 * time.Minute)
			if n, _ := e.srv.Checkout.Reconcile(ctx); n != 0 {
				t.Fatalf("checked again 10 min later; an attempt of 1 h 10 waits 17.5 min")
			}
			e.clock.Add(15 * time.Minute)
			if n, _ := e.srv.Checkout.Reconcile(ctx); n != 1 {
				t.Fatalf("not checked again 25 min later")
			}
		})
		t.Run("AbandonedSessionCancelled", func(t *testing.T) {
			id := e.mustSession(keys["test_secret"], `{"amount": 5000}`)
			e.clock.Add(23 * time.Hour)
			e.srv.Checkout.Reconcile(ctx)
			if sess, _ := st.Session(ctx, id); sess.Status != cauri.SessionPending {
				t.Fatalf("cancelled after 23 h: %s", sess.Status)
			}
			e.clock.Add(2 * time.Hour)
			e.srv.Checkout.Reconcile(ctx)
			sess, _ := st.Session(ctx, id)
			events, _ := st.SessionEvents(ctx, id)
			if sess.Status != cauri.SessionCancelled || len(events) != 1 || events[0].Type != cauri.EventPaymentCancelled {
				t.Fatalf("after 25 h: %s, %+v; want CANCELLED with payment.cancelled", sess.Status, events)
			}
			wantError(t, e.do("POST", "/checkout/sandbox", map[string]string{"transactionId": id, "issue": "succes"}), 409, "CANCELLED")
		})
		t.Run("OrphanOfACrash", func(t *testing.T) {
			// The process stopped during the initiation call: the attempt
			// was never marked initiated.
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			now := e.clock.Now()
			a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: id, GatewayID: g.ID, Provider: "pawapay", Reference: "61111111-2222-4333-8444-555555555555",
				Country: "SN", Operator: "wave", OperatorCode: "WAVE_SEN", Phone: "+221771234567", Status: cauri.AttemptPending, CreatedAt: now, UpdatedAt: now}
			if err := st.StartAttempt(ctx, a, nil, nil); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 12; i++ { // an hour at most, in 5-minute steps
				e.clock.Add(5 * time.Minute)
				if _, err := e.srv.Checkout.Reconcile(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// pawaPay never heard of it: it was never sent, and the session
			// can be paid or cancelled again.
			if attempts, _ := st.Attempts(ctx, id); attempts[0].Status != cauri.AttemptFailed || attempts[0].InitiatedAt == nil {
				t.Fatalf("orphan = %+v; want adopted, checked and failed", attempts[0])
			}
		})
		t.Run("CustomerLeavesDuringTheInitiation", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
			gatewaytest.Control(t, simURL, "/_sim/fault?mode=slow&seconds=0.5")
			defer gatewaytest.Control(t, simURL, "/_sim/fault?mode=none")
			body := strings.NewReader(`{"transactionId": "` + id + `", "gatewayId": "` + g.ID + `", "code": "WAVE_SEN", "phone": "771234567"}`)
			if res, err := (&http.Client{Timeout: 100 * time.Millisecond}).Post(e.url+"/checkout/initiate", "application/json", body); err == nil {
				res.Body.Close()
				t.Fatal("the initiation answered before the simulator did")
			}
			var attempts []*cauri.PaymentAttempt
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if attempts, _ = st.Attempts(ctx, id); len(attempts) == 1 && attempts[0].InitiatedAt != nil {
					break
				}
			}
			if len(attempts) != 1 || attempts[0].InitiatedAt == nil || attempts[0].Status != cauri.AttemptPending {
				t.Fatalf("attempts = %+v; want one pending, marked initiated though the customer left", attempts)
			}
		})
	})
}

// TestLivePayment_Paystack pays a GHS session through a Paystack gateway,
// its signed webhook arriving at the gateway's callback address.
func TestLivePayment_Paystack(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Accra shop", true)
		sim := &paystack.Simulator{SecretKey: "sk_live_sim"}
		g, simURL := e.addGateway(ws, "paystack", sim, map[string]string{"secret_key": "sk_live_sim"}, "GH")
		sim.WebhookURL = e.url + "/callbacks/" + g.ID
		id := e.mustSession(keys["live_public"], `{"amount": 25.5, "currency": "GHS", "customer_email": "ama@example.com"}`)
		r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "mtn", "phone": "024 123 4567"})
		if r.status != 200 || r.str("status") != "PENDING" {
			t.Fatalf("initiate = %d %s", r.status, r.raw)
		}
		attempts, _ := st.Attempts(context.Background(), id)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference) // the signed webhook arrives at once
		s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
		if s.str("status") != "SUCCESS" || s.str("provider") != "paystack" || s.body["amount"] != 25.5 {
			t.Fatalf("session = %s", s.raw)
		}
	})
}

// TestLivePayment_NoDoubleDebit holds the rules that keep a customer from
// paying twice.
func TestLivePayment_NoDoubleDebit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Live shop", true)
		g, sim, simURL := e.addSimulatedGateway(ws, "SN")
		initiate := func(id, phone string) response {
			return e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": phone})
		}
		t.Run("NoCheckWhileTheInitiationRuns", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 100}`)
			a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: id, GatewayID: g.ID, Provider: "pawapay", Reference: "71111111-2222-4333-8444-555555555555",
				Country: "SN", Operator: "wave", OperatorCode: "WAVE_SEN", Phone: "+221771234567", Status: cauri.AttemptPending,
				CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
			if err := st.StartAttempt(ctx, a, nil, nil); err != nil { // its Collect is still on its way
				t.Fatal(err)
			}
			calls := sim.Calls()
			e.clock.Add(time.Minute)
			e.srv.Checkout.Reconcile(ctx)
			s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...)
			if s.str("status") != "PENDING" || sim.Calls() != calls {
				t.Fatalf("status %s, %d aggregator calls while the initiation runs; want PENDING and none", s.str("status"), sim.Calls()-calls)
			}
			// Once it returned, "not found" is believed only after a grace period.
			st.MarkInitiated(ctx, a.ID, e.clock.Now(), cauri.NextAction{})
			e.clock.Add(10 * time.Second)
			if s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...); s.str("status") != "PENDING" {
				t.Fatalf("unknown to the aggregator 10 s after: %s; want still PENDING", s.str("status"))
			}
			e.clock.Add(3 * time.Minute)
			if s := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...); s.str("status") != "FAILED" {
				t.Fatalf("unknown to the aggregator 3 min after: %s; want FAILED", s.str("status"))
			}
		})
		t.Run("TimeoutIsNeverAFailover", func(t *testing.T) {
			second, _, _ := e.addSimulatedGateway(ws, "SN")
			e.srv.Checkout.Connectors.Build = func(gw *cauri.Gateway, creds map[string]string) (gateway.Connector, error) {
				c, err := connectors.New(gw, creds)
				if p, ok := c.(*pawapay.Client); ok {
					p.HTTP = &http.Client{Timeout: 300 * time.Millisecond}
				}
				return c, err
			}
			defer func() { e.srv.Checkout.Connectors.Build = connectors.New }()
			gatewaytest.Control(t, simURL, "/_sim/fault?mode=slow&seconds=1")
			defer gatewaytest.Control(t, simURL, "/_sim/fault?mode=none")
			id := e.mustSession(keys["live_public"], `{"amount": 100}`)
			if r := initiate(id, "+221771234567"); r.status != 200 || r.str("status") != "PENDING" {
				t.Fatalf("initiate with no answer = %d %s", r.status, r.raw)
			}
			attempts, _ := st.Attempts(ctx, id)
			if len(attempts) != 1 || attempts[0].GatewayID != g.ID || attempts[0].Status != cauri.AttemptPending {
				t.Fatalf("attempts = %+v; want one, pending at the first gateway (%s), none at %s", attempts, g.ID, second.ID)
			}
		})
		t.Run("RetryAfterFailureIsPending", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 100}`)
			wantStatus(t, initiate(id, "+221770000039"), 502)
			r := initiate(id, "+221771234567")
			if r.status != 200 || r.str("status") != "PENDING" {
				t.Fatalf("retry = %d %s; want PENDING while the new payment waits", r.status, r.raw)
			}
			events, _ := st.SessionEvents(ctx, id)
			types := map[string]bool{}
			for _, ev := range events {
				types[ev.Type] = true
			}
			if len(events) != 2 || !types[cauri.EventPaymentFailed] || !types[cauri.EventPaymentUpdated] {
				t.Fatalf("%d events %v; want payment.failed and payment.updated", len(events), types)
			}
			if p := e.do("GET", "/pay/"+id, nil); strings.Contains(p.raw, "url=") || !strings.Contains(p.raw, `id="waiting"`) {
				t.Fatal("the page of a payment waiting again sends the customer away")
			}
		})
		t.Run("GatewayWithAPaymentWaitingIsKept", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], `{"amount": 100}`)
			wantStatus(t, initiate(id, "+221771234567"), 200)
			if err := e.srv.Gateways.Remove(ctx, ws.ID, g.ID); cauri.ErrorCode(err) != cauri.EConflict {
				t.Fatalf("remove with a payment waiting = %v; want refused", err)
			}
		})
		t.Run("RateLimits", func(t *testing.T) {
			for range 30 {
				e.do("POST", "/checkout/initiate", `{}`)
			}
			wantStatus(t, e.do("POST", "/checkout/initiate", `{}`), 429)
			for range 60 {
				e.do("POST", "/checkout/verify", `{}`)
			}
			wantStatus(t, e.do("POST", "/checkout/verify", `{}`), 429)
		})
	})
}
