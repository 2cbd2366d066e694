package checkout

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestInitiate_RetryAvoidsTheProviderThatFailed: once a provider failed a
// customer, their next attempt in the session goes to another provider
// (Initiate passes routing.Context.Avoid), and with the same number in
// another session within the hour the ranking puts it after the others;
// the attempt after a failure is a retry for the rate.
func TestInitiate_RetryAvoidsTheProviderThatFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, simURL, clk := setup(t, st)
		s.Route = &routing.Router{Engine: routing.New(clk.Now, 1), Store: st}
		sim := httptest.NewServer(&cinetpay.Simulator{APIKey: "api-sim", SiteID: "445160", SecretKey: "secret-sim"})
		t.Cleanup(sim.Close)
		other := storetest.Gateway(t, st, ws, "cinetpay", sim.URL, map[string]string{"apikey": "api-sim", "site_id": "445160", "secret_key": "secret-sim"}, clk.Now(), "SN")
		for range 20 { // pawapay leads before the customer's try
			s.Route.Observe(routing.Key{Provider: "pawapay", Country: "SN", Operator: "wave", Kind: routing.Collect}, routing.Success, 0)
			s.Route.Observe(routing.Key{Provider: "cinetpay", Country: "SN", Operator: "wave", Kind: routing.Collect, Amount: 1}, routing.Success, 0)
			s.Route.Observe(routing.Key{Provider: "cinetpay", Country: "SN", Operator: "wave", Kind: routing.Collect}, routing.Declined, 0)
		}
		sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
		if err != nil {
			t.Fatal(err)
		}
		order := func(sess *cauri.Session, phone string) string {
			t.Helper()
			avoid, err := s.failedProviders(ctx, sess, phone)
			if err != nil {
				t.Fatal(err)
			}
			ranked, _ := s.rank([]*cauri.Gateway{g, other}, routing.Context{Country: "SN", Operator: "wave", Kind: routing.Collect, Amount: sess.Amount, Avoid: avoid})
			return ranked[0].Provider + "," + ranked[1].Provider
		}
		if got := order(sess, "+221771234567"); got != "pawapay,cinetpay" {
			t.Fatalf("first try = %s; want pawapay first", got)
		}
		a, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, simURL, a.Reference+"?status=FAILED")
		clk.Add(movement.StatusCheck)
		if got, err := s.Refresh(ctx, sess.ID); err != nil || got.Status != cauri.SessionFailed {
			t.Fatalf("after the aggregator failed it = %+v, %v; want FAILED", got, err)
		}
		if got := order(sess, "+221771234567"); got != "cinetpay,pawapay" {
			t.Fatalf("the customer's retry = %s; want pawapay, which failed them, last", got)
		}
		// In another session (a payment link's next visit), the same number
		// is still the customer who failed; another number is not.
		next, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
		if err != nil {
			t.Fatal(err)
		}
		if got := order(next, "+221771234567"); got != "cinetpay,pawapay" {
			t.Fatalf("the same number in another session = %s; want pawapay last", got)
		}
		if got := order(next, "+221781112233"); got != "pawapay,cinetpay" {
			t.Fatalf("another number = %s; want the ranking alone", got)
		}
		clk.Add(retryWindow + time.Minute)
		if got := order(next, "+221771234567"); got != "pawapay,cinetpay" {
			t.Fatalf("the same number after %s = %s; want the ranking alone", retryWindow, got)
		}
		clk.Add(-retryWindow - time.Minute)
		if s.isRetry(ctx, sess, a) {
			t.Fatal("the session's first attempt counted as a retry")
		}
		clk.Add(time.Minute) // the phone is not flooded
		// The customer picks the same method again: the attempt goes to
		// cinetpay, although pawapay leads and the method listed it.
		b, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"})
		if err != nil {
			t.Fatal(err)
		}
		if b.Provider != "cinetpay" || !strings.HasPrefix(b.RouteReason, "ranked_after:") {
			t.Fatalf("the customer's retry went to %s (%s); want cinetpay, pawapay having failed them", b.Provider, b.RouteReason)
		}
		if !s.isRetry(ctx, sess, b) {
			t.Fatal("the attempt after a failed one is not a retry: its outcome would bias the rate")
		}
		// The same number in another session within the hour is the
		// customer's retry for the rate too, as it is for the ranking;
		// another number is not.
		c, err := s.Initiate(ctx, next.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"})
		if err != nil {
			t.Fatal(err)
		}
		if !s.isRetry(ctx, next, c) {
			t.Fatal("the same number's attempt in another session, within the hour of its failure, is not a retry")
		}
		third, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Initiate(ctx, third.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221781112233"})
		if err != nil {
			t.Fatal(err)
		}
		if s.isRetry(ctx, third, d) {
			t.Fatal("another number's attempt is a retry")
		}
	})
}

// TestIsRetry_AfterTheFailure: a payment is a retry of another session's
// attempt with the same number only if it started after that attempt
// failed (not merely after it started), and the sessions created after it
// do not hide the one it is a retry of.
func TestIsRetry_AfterTheFailure(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, simURL, clk := setup(t, st)
		s.Route = &routing.Router{Engine: routing.New(clk.Now, 1), Store: st}
		const phone = "+221771234567"
		start := func() (*cauri.Session, *cauri.PaymentAttempt) {
			t.Helper()
			sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: phone})
			if err != nil {
				t.Fatal(err)
			}
			return sess, a
		}
		fail := func(sess *cauri.Session, a *cauri.PaymentAttempt) {
			t.Helper()
			settle(t, simURL, a.Reference+"?status=FAILED")
			clk.Add(movement.StatusCheck)
			if got, err := s.Refresh(ctx, sess.ID); err != nil || got.Status != cauri.SessionFailed {
				t.Fatalf("after the aggregator failed it = %+v, %v; want FAILED", got, err)
			}
		}
		// Begun while another session's attempt with the number was still
		// pending, which failed afterwards: not a retry of it.
		other, b := start()
		clk.Add(time.Minute)
		sess, a := start()
		fail(other, b)
		if s.isRetry(ctx, sess, a) {
			t.Error("a payment begun before another session's attempt failed is a retry of it")
		}
		// Begun after the failure, then 20 sessions with the number: still
		// a retry (they came after it).
		clk.Add(time.Minute)
		sess, a = start()
		for range 20 {
			clk.Add(time.Second)
			start()
		}
		if !s.isRetry(ctx, sess, a) {
			t.Error("a payment begun after another session's attempt failed, followed by 20 sessions with the number, is not a retry")
		}
		// Within one session too: an attempt begun while the session's
		// earlier one was pending, which failed afterwards, is not a retry
		// of it; one begun after that failure is.
		clk.Add(time.Minute)
		sess, first := start()
		again := func() *cauri.PaymentAttempt {
			t.Helper()
			clk.Add(time.Second)
			a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: g.Provider,
				Reference: cauri.NewUUID(), Country: "SN", Operator: first.Operator, OperatorCode: first.OperatorCode, Phone: phone,
				Status: cauri.AttemptPending, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
			if err := st.StartAttempt(ctx, a, nil, func(*cauri.Session) *cauri.Event { return nil }); err != nil {
				t.Fatal(err)
			}
			return a
		}
		during := again()
		clk.Add(time.Second)
		if _, err := st.UpdateAttempt(ctx, first.ID, func(_ *cauri.Session, a *cauri.PaymentAttempt) (*cauri.Event, error) {
			a.Status, a.UpdatedAt = cauri.AttemptFailed, clk.Now()
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if s.isRetry(ctx, sess, during) {
			t.Error("an attempt begun while the session's earlier one was pending is a retry of its later failure")
		}
		if after := again(); !s.isRetry(ctx, sess, after) {
			t.Error("an attempt begun after the session's earlier one failed is not a retry")
		}
	})
}
