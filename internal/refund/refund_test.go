package refund

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	"github.com/cauri-pay/cauri/internal/gateway/wave"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/cauri-pay/cauri/internal/transfer"
	"github.com/prometheus/client_golang/prometheus"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// fixture is a verified workspace with a live pawaPay gateway for Senegal
// on pawaPay's simulator over loopback HTTP, and the checkout, transfer
// and refund services over a real store, wired as the server wires them.
type fixture struct {
	t         *testing.T
	st        *store.Store
	s         *Service
	checkout  *checkout.Service
	transfers *transfer.Service
	ws        *cauri.Workspace
	g         *cauri.Gateway
	sim       *pawapay.Simulator
	simURL    string
	clk       *clock
	// Wave's gateway and simulator, once f.wave made them.
	waveSim *wave.Simulator
	waveURL string
	waveGW  *cauri.Gateway
}

// build is how the fixture's connectors are built (connectors.New, or a
// wrapper hiding a capability).
func newFixture(t *testing.T, st *store.Store, build func(*cauri.Gateway, map[string]string) (gateway.Connector, error)) *fixture {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	ws := storetest.Workspace(t, st, "Boutique Adjoa", true, clk.Now())
	sim := &pawapay.Simulator{Token: "sim-token"}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	g := storetest.Gateway(t, st, ws, "pawapay", srv.URL, map[string]string{"api_token": "sim-token"}, clk.Now(), "SN")
	failures := movement.NewFailures(slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	conns := &movement.Connectors{Store: st, Build: build, Failures: failures}
	f := &fixture{t: t, st: st, ws: ws, g: g, sim: sim, simURL: srv.URL, clk: clk}
	f.checkout = &checkout.Service{Store: st, PayURL: "http://127.0.0.1:1/pay", CallbackURL: "http://127.0.0.1:1/callbacks", Now: clk.Now,
		Failures: failures, Connectors: conns}
	f.transfers = &transfer.Service{Store: st, Now: clk.Now, CallbackURL: "http://127.0.0.1:1/callbacks", Failures: failures, Connectors: conns}
	f.s = &Service{Store: st, Transfers: f.transfers, Now: clk.Now, Connectors: conns, Failures: failures,
		PayURL: "http://127.0.0.1:1/pay", CallbackURL: "http://127.0.0.1:1/callbacks"}
	f.transfers.Ended = f.s.TransferEnded
	return f
}

// control calls one of the simulator's control routes.
func (f *fixture) control(path string) {
	f.t.Helper()
	gatewaytest.Control(f.t, f.simURL, path)
}

// paid is a live session of amount paid through the simulator's Wave of
// Senegal from phone.
func (f *fixture) paid(amount, phone string) *cauri.Session {
	f.t.Helper()
	ctx := context.Background()
	sess, _, err := f.checkout.Create(ctx, f.ws, true, checkout.CreateParams{Amount: amount, CustomerName: "Awa Diop"})
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := f.checkout.Initiate(ctx, sess.ID, checkout.Payment{GatewayID: f.g.ID, Code: "WAVE_SEN", Phone: phone})
	if err != nil {
		f.t.Fatal(err)
	}
	f.control("/_sim/settle/" + a.Reference)
	f.clk.Add(movement.StatusCheck)
	if sess, err = f.checkout.Refresh(ctx, sess.ID); err != nil || sess.Status != cauri.SessionSuccess {
		f.t.Fatalf("payment = %+v, %v; want SUCCESS", sess, err)
	}
	return sess
}

// testPaid is a test session of amount settled by the sandbox.
func (f *fixture) testPaid(amount string) *cauri.Session {
	f.t.Helper()
	ctx := context.Background()
	sess, _, err := f.checkout.Create(ctx, f.ws, false, checkout.CreateParams{Amount: amount})
	if err != nil {
		f.t.Fatal(err)
	}
	if sess, err = f.checkout.SettleSandbox(ctx, sess.ID, checkout.IssueSuccess); err != nil {
		f.t.Fatal(err)
	}
	return sess
}

func (f *fixture) events(sessionID string, typ string) []*cauri.Event {
	f.t.Helper()
	evs, err := f.st.SessionEvents(context.Background(), sessionID)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*cauri.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func wantReason(t *testing.T, err error, code, reason string) {
	t.Helper()
	if cauri.ErrorCode(err) != code || cauri.ErrorReason(err) != reason {
		t.Fatalf("error = %v; want %s with reason %q", err, code, reason)
	}
}

// TestCreate_Sandbox: a test session's refunds succeed at once; the last
// part makes it REFUNDED; each emits payment.updated; a replay answers the
// same refund; nothing is left to refund after.
func TestCreate_Sandbox(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		sess := f.testPaid("10000")
		r, replayed, err := f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID, Amount: "4000", Reason: "damaged"}, "rf-1")
		if err != nil || replayed || r.Status != cauri.RefundSucceeded || r.Amount != 4000 || r.Provider != Sandbox || r.Livemode ||
			r.Method != cauri.RefundByAggregator || r.Reason != "damaged" || r.CompletedAt == nil {
			t.Fatalf("refund = %+v, %v, %v", r, replayed, err)
		}
		again, replayed, err := f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID, Amount: "4000.0", Reason: "damaged"}, "rf-1")
		if err != nil || !replayed || again.ID != r.ID {
			t.Fatalf("replay = %+v, %v, %v; want %s", again, replayed, err, r.ID)
		}
		_, _, err = f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID, Amount: "5000"}, "rf-1")
		wantReason(t, err, cauri.EUnprocessable, "")
		if got, _ := st.Session(ctx, sess.ID); got.Status != cauri.SessionSuccess {
			t.Fatalf("after a partial refund the session is %s; want SUCCESS", got.Status)
		}
		f.clk.Add(time.Second)
		rest, _, err := f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID}, "")
		if err != nil || rest.Amount != 6000 || rest.Status != cauri.RefundSucceeded {
			t.Fatalf("the rest = %+v, %v", rest, err)
		}
		if got, _ := st.Session(ctx, sess.ID); got.Status != cauri.SessionRefunded {
			t.Fatalf("after the rest the session is %s; want REFUNDED", got.Status)
		}
		evs := f.events(sess.ID, cauri.EventPaymentUpdated)
		if len(evs) != 2 {
			t.Fatalf("%d payment.updated; want 2", len(evs))
		}
		var data struct {
			Status         string          `json:"status"`
			AmountRefunded json.Number     `json:"amount_refunded"`
			Refund         json.RawMessage `json:"refund"`
		}
		json.Unmarshal(evs[1].Data, &data) // the later one
		if data.Status != "REFUNDED" || data.AmountRefunded != "10000" || !strings.Contains(string(data.Refund), rest.ID) || evs[1].Livemode {
			t.Errorf("last event = %s", evs[1].Data)
		}
		// Replayed after the session became REFUNDED: still the refund.
		if again, replayed, err := f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID, Amount: "4000", Reason: "damaged"}, "rf-1"); err != nil || !replayed || again.ID != r.ID {
			t.Fatalf("replay after REFUNDED = %+v, %v, %v", again, replayed, err)
		}
		_, _, err = f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID}, "")
		wantReason(t, err, cauri.EInvalid, "not_refundable")
		// Read back, listed, in the test mode only.
		if got, err := f.s.Get(ctx, f.ws, false, r.ID); err != nil || got.ID != r.ID {
			t.Fatalf("Get = %v, %v", got, err)
		}
		if _, err := f.s.Get(ctx, f.ws, true, r.ID); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("a test refund with a live key = %v; want not found", err)
		}
		list, err := f.s.List(ctx, f.ws, false, Filter{TransactionID: sess.ID, Limit: 50})
		if err != nil || len(list) != 2 || list[0].ID != rest.ID {
			t.Fatalf("List = %v, %v", list, err)
		}
		if list, _ := f.s.List(ctx, f.ws, true, Filter{Limit: 50}); len(list) != 0 {
			t.Fatalf("live list = %v; want none", list)
		}
	})
}

// TestCreate_Checks: each refusal in the documented order, none writing
// anything.
func TestCreate_Checks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		sess := f.testPaid("1000")
		pending, _, _ := f.checkout.Create(ctx, f.ws, false, checkout.CreateParams{Amount: "1000"})
		other := storetest.Workspace(t, st, "Another shop", true, f.clk.Now())
		for _, tc := range []struct {
			name         string
			ws           *cauri.Workspace
			live         bool
			p            Params
			code, reason string
		}{
			{"ErrTransactionRequired", f.ws, false, Params{}, cauri.EInvalid, "invalid_body"},
			{"ErrAnotherWorkspace", other, false, Params{TransactionID: sess.ID}, cauri.ENotFound, ""},
			{"ErrAnotherMode", f.ws, true, Params{TransactionID: sess.ID}, cauri.ENotFound, ""},
			{"ErrNoSuchTransaction", f.ws, false, Params{TransactionID: cauri.NewID("cs_")}, cauri.ENotFound, ""},
			{"ErrAmountZero", f.ws, false, Params{TransactionID: sess.ID, Amount: "0"}, cauri.EInvalid, "invalid_amount"},
			{"ErrAmountDecimals", f.ws, false, Params{TransactionID: sess.ID, Amount: "10.5"}, cauri.EInvalid, "invalid_amount"},
			{"ErrMethod", f.ws, false, Params{TransactionID: sess.ID, Method: "cash"}, cauri.EInvalid, "invalid_body"},
			{"ErrReason", f.ws, false, Params{TransactionID: sess.ID, Reason: strings.Repeat("x", 501)}, cauri.EInvalid, "invalid_body"},
			{"ErrNotRefundable", f.ws, false, Params{TransactionID: pending.ID}, cauri.EInvalid, "not_refundable"},
			{"ErrExceeds", f.ws, false, Params{TransactionID: sess.ID, Amount: "1001"}, cauri.EInvalid, "refund_exceeds_payment"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := f.s.Create(ctx, tc.ws, tc.live, tc.p, "")
				wantReason(t, err, tc.code, tc.reason)
				if tc.code == cauri.ENotFound && cauri.ErrorEntity(err) != "transaction" {
					t.Errorf("not found names %q; want the transaction", cauri.ErrorEntity(err))
				}
			})
		}
		if list, _ := st.SessionRefunds(ctx, sess.ID); len(list) != 0 {
			t.Errorf("refused requests wrote %d refunds", len(list))
		}
		_, _, err := f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID}, "bad key")
		wantReason(t, err, cauri.EInvalid, "invalid_body")
		_, err = f.s.List(ctx, f.ws, false, Filter{Status: "done", Limit: 5})
		wantReason(t, err, cauri.EInvalid, "invalid_body")
		_, err = f.s.List(ctx, f.ws, false, Filter{Limit: 201})
		wantReason(t, err, cauri.EInvalid, "invalid_body")
		_, err = f.s.List(ctx, f.ws, false, Filter{StartingAfter: cauri.NewID("re_"), Limit: 5})
		wantReason(t, err, cauri.EInvalid, "invalid_body")
	})
}

// noRefunds builds connectors that cannot refund, as the aggregators
// whose API has no refund.
func noRefunds(g *cauri.Gateway, creds map[string]string) (gateway.Connector, error) {
	c, err := connectors.New(g, creds)
	if err != nil {
		return nil, err
	}
	return struct {
		gateway.Connector
		gateway.Payer
	}{c, c.(gateway.Payer)}, nil
}

// TestCreate_Payout: where the aggregator cannot refund, the aggregator
// method is refused (refunds_unsupported, nothing written) and the payout
// method sends the money back as a transfer to the number that paid; the
// refund ends with the transfer, and the whole amount back makes the
// session REFUNDED.
func TestCreate_Payout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, noRefunds)
		sess := f.paid("5000", "+221771234567")
		_, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID}, "")
		wantReason(t, err, cauri.EInvalid, "refunds_unsupported")
		_, _, err = f.s.Create(ctx, f.ws, false, Params{TransactionID: sess.ID, Method: "payout"}, "")
		wantReason(t, err, cauri.ENotFound, "")

		r, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Method: "payout"}, "rf-payout")
		if err != nil || r.Status != cauri.RefundPending || r.TransferID == "" || r.Method != cauri.RefundByPayout || r.Amount != 5000 {
			t.Fatalf("refund = %+v, %v", r, err)
		}
		tr, err := f.transfers.Get(ctx, f.ws.ID, r.TransferID)
		if err != nil || tr.Phone != "+221771234567" || tr.Operator != "wave" || tr.Amount != 5000 || tr.RecipientName != "Awa Diop" {
			t.Fatalf("transfer = %+v, %v", tr, err)
		}
		// The transfer ends (its callback's status read): the refund with it.
		f.control("/_sim/settle/" + tr.Reference)
		if err := f.transfers.Callback(ctx, tr.GatewayID, tr.Reference); err != nil {
			t.Fatal(err)
		}
		got, err := f.s.Get(ctx, f.ws, true, r.ID)
		if err != nil || got.Status != cauri.RefundSucceeded {
			t.Fatalf("refund after its transfer = %+v, %v; want succeeded", got, err)
		}
		if s, _ := st.Session(ctx, sess.ID); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
		if evs := f.events(sess.ID, cauri.EventPaymentUpdated); len(evs) != 1 {
			t.Fatalf("%d payment.updated; want 1", len(evs))
		}
	})
}

// TestCreate_PayoutFails: the daily cap answers 429 plafond_journalier
// with the refund kept failed; failed refunds hold nothing, so a new refund
// may be asked; a transfer that fails later fails its refund, through the
// reconciler when the hook missed it.
func TestCreate_PayoutFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, noRefunds)
		sess := f.paid("5000", "+221771234567")
		if _, err := st.SetTransferDailyCap(ctx, f.ws.ID, 0, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Method: "payout"}, "")
		wantReason(t, err, cauri.ERateLimited, "plafond_journalier")
		list, _ := st.SessionRefunds(ctx, sess.ID)
		if len(list) != 1 || list[0].Status != cauri.RefundFailed || list[0].FailureCode != "plafond_journalier" || list[0].TransferID != "" {
			t.Fatalf("refunds = %+v; want one failed plafond_journalier", list)
		}
		if _, err := st.SetTransferDailyCap(ctx, f.ws.ID, 10, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		// The same payment, refunded again: the failed refunds hold nothing.
		r, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Method: "payout", Amount: "2000"}, "")
		if err != nil || r.Status != cauri.RefundPending {
			t.Fatalf("refund after the cap = %+v, %v", r, err)
		}
		tr, _ := f.transfers.Get(ctx, f.ws.ID, r.TransferID)
		f.control("/_sim/settle/" + tr.Reference + "?status=FAILED")
		// No callback reaches the transfer service: the refund reconciler
		// reads the transfer once the transfer's own reconciler ended it.
		f.transfers.Ended = nil
		f.clk.Add(time.Minute)
		if _, err := f.transfers.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, r.ID); got.Status != cauri.RefundPending {
			t.Fatalf("refund = %s before its reconciler; want pending", got.Status)
		}
		if n, err := f.s.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("Reconcile = %d, %v; want 1", n, err)
		}
		got, _ := f.s.Get(ctx, f.ws, true, r.ID)
		if got.Status != cauri.RefundFailed || got.FailureCode != "rejected" {
			t.Fatalf("refund = %+v; want failed rejected", got)
		}
		if s, _ := st.Session(ctx, sess.ID); s.Status != cauri.SessionSuccess {
			t.Fatalf("session = %s; want SUCCESS", s.Status)
		}
	})
}

// TestCreate_Aggregator: a live payment refunded through pawaPay (its
// simulator over HTTP) in two parts: each pending once accepted, ended by
// its callback (confirmed by a status read) or by the reconciler; the
// last part makes the session REFUNDED; a failed part holds nothing.
func TestCreate_Aggregator(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		sess := f.paid("5000", "+221771234567")
		first, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "2000"}, "")
		if err != nil || first.Status != cauri.RefundPending || first.Provider != "pawapay" || first.InitiatedAt != nil && first.Amount != 2000 {
			t.Fatalf("refund = %+v, %v", first, err)
		}
		got, _ := f.s.Get(ctx, f.ws, true, first.ID)
		if got.InitiatedAt == nil {
			t.Fatal("the refund's call returned but it is not marked initiated")
		}
		// Its callback: a signal, confirmed by a status read.
		if err := f.s.Callback(ctx, f.g.ID, first.Reference); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, first.ID); got.Status != cauri.RefundPending {
			t.Fatalf("a callback before pawaPay ended it changed the refund to %s", got.Status)
		}
		f.control("/_sim/settle/" + first.Reference)
		f.clk.Add(movement.CallbackCheck)
		if err := f.s.Callback(ctx, f.g.ID, first.Reference); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, first.ID); got.Status != cauri.RefundSucceeded || got.ProviderRef == "" {
			t.Fatalf("after its callback = %+v; want succeeded", got)
		}
		// The rest fails at pawaPay; no callback reaches us: the reconciler.
		rest, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID}, "")
		if err != nil || rest.Amount != 3000 {
			t.Fatalf("the rest = %+v, %v", rest, err)
		}
		f.control("/_sim/settle/" + rest.Reference + "?status=FAILED")
		f.clk.Add(time.Minute)
		if n, err := f.s.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("Reconcile = %d, %v", n, err)
		}
		got, _ = f.s.Get(ctx, f.ws, true, rest.ID)
		if got.Status != cauri.RefundFailed || got.FailureCode != "rejected" || !strings.Contains(got.FailureMessage, "RECIPIENT_NOT_FOUND") {
			t.Fatalf("the failed rest = %+v", got)
		}
		if s, _ := st.Session(ctx, sess.ID); s.Status != cauri.SessionSuccess {
			t.Fatalf("session = %s; want SUCCESS", s.Status)
		}
		// Asked again, it succeeds: REFUNDED, and pawaPay refunded 5000 in all.
		again, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID}, "")
		if err != nil || again.Amount != 3000 {
			t.Fatalf("the rest again = %+v, %v", again, err)
		}
		f.control("/_sim/settle/" + again.Reference)
		f.clk.Add(movement.CallbackCheck)
		if err := f.s.Callback(ctx, f.g.ID, again.Reference); err != nil {
			t.Fatal(err)
		}
		if s, _ := st.Session(ctx, sess.ID); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
		if evs := f.events(sess.ID, cauri.EventPaymentUpdated); len(evs) != 3 {
			t.Fatalf("%d payment.updated; want 3 (two successes, one failure)", len(evs))
		}
	})
}

// TestReconcile_Orphan: a refund committed but never sent (the process
// stopped before its call) is adopted by the reconciler once its deadline
// passed, found unknown at pawaPay, and sent then with its reference.
func TestReconcile_Orphan(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		sess := f.paid("5000", "+221771234567")
		a, _ := f.s.collected(ctx, sess)
		now := f.clk.Now()
		r := &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: f.ws.ID, Livemode: true, SessionID: sess.ID, AttemptID: a.ID,
			GatewayID: a.GatewayID, Provider: a.Provider, Amount: 5000, Currency: "XOF", Status: cauri.RefundPending,
			Method: cauri.RefundByAggregator, Reference: cauri.NewUUID(), CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateRefund(ctx, r, nil, cauri.AdmitRefund); err != nil {
			t.Fatal(err)
		}
		if n, _ := f.s.Reconcile(ctx); n != 0 {
			t.Fatalf("Reconcile before the deadline checked %d", n)
		}
		f.clk.Add(movement.InitiationDeadline + time.Second)
		if n, err := f.s.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("Reconcile = %d, %v", n, err)
		}
		if _, ok := f.sim.View(r.Reference); !ok {
			t.Fatal("the orphan was not sent to pawaPay")
		}
		got, _ := f.s.Get(ctx, f.ws, true, r.ID)
		if got.Status != cauri.RefundPending || got.InitiatedAt == nil {
			t.Fatalf("orphan after its re-drive = %+v", got)
		}
		// A second pass sends nothing more (pawaPay would ignore it anyway).
		f.clk.Add(movement.InitiationDeadline)
		f.control("/_sim/settle/" + r.Reference)
		if _, err := f.s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, r.ID); got.Status != cauri.RefundSucceeded {
			t.Fatalf("after the next pass = %s; want succeeded", got.Status)
		}
	})
}

// paystackFixture adds a live Paystack gateway for Ghana, on Paystack's
// simulator over loopback HTTP, and a GHS session of amount paid through
// it (MTN, approved on the phone).
func (f *fixture) paystack(amount string) (*cauri.Gateway, *paystack.Simulator, string, *cauri.Session, *cauri.PaymentAttempt) {
	f.t.Helper()
	ctx := context.Background()
	sim := &paystack.Simulator{SecretKey: "sk_live_sim"}
	srv := httptest.NewServer(sim)
	f.t.Cleanup(srv.Close)
	g := storetest.Gateway(f.t, f.st, f.ws, "paystack", srv.URL, map[string]string{"secret_key": "sk_live_sim"}, f.clk.Now(), "GH")
	sess, _, err := f.checkout.Create(ctx, f.ws, true, checkout.CreateParams{Amount: amount, Currency: "GHS", CustomerEmail: "ama@example.com"})
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := f.checkout.Initiate(ctx, sess.ID, checkout.Payment{GatewayID: g.ID, Code: "mtn", Phone: "+233241234567"})
	if err != nil {
		f.t.Fatal(err)
	}
	if res, err := http.Post(srv.URL+"/_sim/settle/"+a.Reference, "", nil); err != nil || res.StatusCode != http.StatusNoContent {
		f.t.Fatalf("settle = %v, %v", res, err)
	}
	f.clk.Add(movement.StatusCheck)
	if sess, err = f.checkout.Refresh(ctx, sess.ID); err != nil || sess.Status != cauri.SessionSuccess {
		f.t.Fatalf("payment = %+v, %v; want SUCCESS", sess, err)
	}
	return g, sim, srv.URL, sess, a
}

// TestCallback_NamesTheCollection: Paystack's refund webhooks name the
// refunded transaction, not the refund (gateway.RefundsOf): each pending
// refund of that payment is checked, and only what Paystack says ends it.
func TestCallback_NamesTheCollection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		g, sim, simURL, sess, a := f.paystack("40")
		first, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "10"}, "")
		if err != nil || first.Status != cauri.RefundPending || first.Provider != "paystack" || first.ProviderRef == "" {
			t.Fatalf("refund = %+v, %v; want pending with Paystack's id", first, err)
		}
		second, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "5"}, "")
		if err != nil || second.ProviderRef == "" || second.ProviderRef == first.ProviderRef {
			t.Fatalf("second refund = %+v, %v", second, err)
		}
		if err := f.s.Callback(ctx, g.ID, gateway.RefundsOf(a.Reference)); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, first.ID); got.Status != cauri.RefundPending {
			t.Fatalf("a webhook before Paystack processed it changed the refund to %s", got.Status)
		}
		for _, path := range []string{"/_sim/settle/" + first.ProviderRef, "/_sim/settle/" + second.ProviderRef + "?status=failed"} {
			if res, err := http.Post(simURL+path, "", nil); err != nil || res.StatusCode != http.StatusNoContent {
				t.Fatalf("%s = %v, %v", path, res, err)
			}
		}
		f.clk.Add(movement.CallbackCheck)
		if err := f.s.Callback(ctx, g.ID, gateway.RefundsOf(a.Reference)); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, first.ID); got.Status != cauri.RefundSucceeded {
			t.Fatalf("first after the webhook = %+v; want succeeded", got)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, second.ID); got.Status != cauri.RefundFailed || got.FailureCode != "rejected" {
			t.Fatalf("second after the webhook = %+v; want failed, rejected", got)
		}
		// A refund whose answer was lost (no Paystack id) cannot be read: it
		// is logged and left pending, and the webhook is still answered.
		now := f.clk.Now()
		lost := &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: f.ws.ID, Livemode: true, SessionID: sess.ID, AttemptID: a.ID,
			GatewayID: g.ID, Provider: "paystack", Amount: 500, Currency: "GHS", Status: cauri.RefundPending,
			Method: cauri.RefundByAggregator, Reference: cauri.NewUUID(), CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateRefund(ctx, lost, nil, cauri.AdmitRefund); err != nil {
			t.Fatal(err)
		}
		if err := st.MarkRefundInitiated(ctx, lost.ID, now, "", ""); err != nil {
			t.Fatal(err)
		}
		f.clk.Add(movement.CallbackCheck)
		if err := f.s.Callback(ctx, g.ID, gateway.RefundsOf(a.Reference)); err != nil {
			t.Fatalf("a webhook while a refund cannot be read = %v; want it answered", err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, lost.ID); got.Status != cauri.RefundPending {
			t.Fatalf("the refund Paystack cannot be asked about = %+v; want pending", got)
		}
		if err := f.s.Callback(ctx, g.ID, gateway.RefundsOf("91111111-2222-4333-8444-555555555555")); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("a webhook about no payment of the gateway = %v; want not found", err)
		}
		if sim.Refunds() != 2 {
			t.Fatalf("%d refunds at Paystack; want 2", sim.Refunds())
		}
	})
}

// TestReconcile_OrphanNeverResentWithoutKey: a Paystack refund committed
// whose call never recorded its end (a crash) cannot be asked about
// without Paystack's id nor sent again without risking a second refund
// (Paystack takes no idempotency key): adopted, it stays pending, and
// nothing is sent, however many passes.
func TestReconcile_OrphanNeverResentWithoutKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		_, sim, _, sess, a := f.paystack("40")
		now := f.clk.Now()
		r := &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: f.ws.ID, Livemode: true, SessionID: sess.ID, AttemptID: a.ID,
			GatewayID: a.GatewayID, Provider: a.Provider, Amount: 4000, Currency: "GHS", Status: cauri.RefundPending,
			Method: cauri.RefundByAggregator, Reference: cauri.NewUUID(), CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateRefund(ctx, r, nil, cauri.AdmitRefund); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			f.clk.Add(movement.InitiationDeadline + time.Hour)
			f.s.Reconcile(ctx)
		}
		got, _ := f.s.Get(ctx, f.ws, true, r.ID)
		if got.Status != cauri.RefundPending || got.InitiatedAt == nil || sim.Refunds() != 0 {
			t.Fatalf("orphan = %+v, %d refunds at Paystack; want adopted, pending, never sent", got, sim.Refunds())
		}
		if _, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "1"}, ""); cauri.ErrorReason(err) != "refund_exceeds_payment" {
			t.Fatalf("a refund beside it = %v; want refund_exceeds_payment (the orphan holds its amount)", err)
		}
	})
}

// lostAfterPayout is the transfer service with an error after its payout:
// the transfer is made and sent, and the caller hears of a failure (a
// store error after the call, a crash's half).
type lostAfterPayout struct{ *transfer.Service }

func (l lostAfterPayout) Create(ctx context.Context, ws *cauri.Workspace, tr *cauri.Transfer, key string) (*cauri.Transfer, bool, error) {
	if _, _, err := l.Service.Create(ctx, ws, tr, key); err != nil {
		return nil, false, err
	}
	return nil, false, cauri.Errorf(cauri.EInternal, "the transfer's end could not be read")
}

// TestPayout_ErrorAfterTheTransfer: a refund by payout whose transfer was
// made although its creation answered an error stays pending, holding its
// amount (no second refund can be asked for it), and the reconciler links
// it to that transfer, under the refund's key, without making another.
func TestPayout_ErrorAfterTheTransfer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, noRefunds)
		sess := f.paid("5000", "+221771234567")
		f.s.Transfers = lostAfterPayout{f.transfers}
		if _, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Method: "payout"}, ""); cauri.ErrorCode(err) != cauri.EInternal {
			t.Fatalf("create = %v; want the internal error", err)
		}
		refunds, _, err := f.s.OfSession(ctx, sess)
		if err != nil || len(refunds) != 1 || refunds[0].Status != cauri.RefundPending {
			t.Fatalf("refunds = %+v, %v; want one pending", refunds, err)
		}
		_, _, err = f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Method: "payout"}, "")
		wantReason(t, err, cauri.EInvalid, "refund_exceeds_payment")

		f.s.Transfers = f.transfers
		f.clk.Add(movement.InitiationDeadline + time.Second)
		if _, err := f.s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		transfers, err := f.transfers.List(ctx, f.ws.ID, "", 10)
		if err != nil || len(transfers) != 1 {
			t.Fatalf("transfers = %d, %v; want the one made", len(transfers), err)
		}
		got, _ := f.s.Get(ctx, f.ws, true, refunds[0].ID)
		if got.TransferID != transfers[0].ID {
			t.Fatalf("refund after the reconciler = %+v; want it linked to %s", got, transfers[0].ID)
		}
	})
}

// failingMark is the store failing MarkRefundInitiated the first fails
// times (a database that dropped its connection).
type failingMark struct {
	*store.Store
	fails int
}

func (f *failingMark) MarkRefundInitiated(ctx context.Context, id string, now time.Time, providerRef, transferID string) error {
	if f.fails > 0 {
		f.fails--
		return errors.New("connection reset by peer")
	}
	return f.Store.MarkRefundInitiated(ctx, id, now, providerRef, transferID)
}

// TestCreate_AggregatorIdKept: Paystack answers a refund, and the store
// fails to record the call's end. A passing failure is tried again: the
// refund keeps Paystack's id, the only one Paystack can be asked about it
// with. A lasting one still records an answer that ends the refund (here a
// refusal: the rest was refunded from Paystack's dashboard meanwhile),
// instead of leaving it pending for ever, holding its amount.
func TestCreate_AggregatorIdKept(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		_, _, simURL, sess, a := f.paystack("40")
		f.s.Store = &failingMark{Store: st, fails: 2}
		r, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "10"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, r.ID); got.ProviderRef == "" || got.Status != cauri.RefundPending || got.InitiatedAt == nil {
			t.Fatalf("refund after two failed marks = %+v; want pending, initiated, with Paystack's id", got)
		}
		// The rest refunded from Paystack's dashboard (its API, directly).
		req, _ := http.NewRequest(http.MethodPost, simURL+"/refund", strings.NewReader(`{"transaction":"`+a.Reference+`"}`))
		req.Header.Set("Authorization", "Bearer sk_live_sim")
		req.Header.Set("Content-Type", "application/json")
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("refund at Paystack = %v, %v", res, err)
		}
		f.s.Store = &failingMark{Store: st, fails: 3}
		r, _, err = f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "5"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.Get(ctx, f.ws, true, r.ID); got.Status != cauri.RefundFailed || got.FailureCode != "rejected" {
			t.Fatalf("refund refused, its mark lost = %+v; want failed, rejected", got)
		}
	})
}

// TestCreate_GatewayRemoved: a gateway with a refund waiting for its
// outcome counts it among the movements that keep it from being removed
// (their outcome needs its credentials); once removed, a refund through
// it is refused as unsupported (400 refunds_unsupported, the payout way
// named), not answered "refund not found".
func TestCreate_GatewayRemoved(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		g, _, _, sess, _ := f.paystack("40")
		if _, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "10"}, ""); err != nil {
			t.Fatal(err)
		}
		waiting := -1
		if err := st.RemoveGateway(ctx, f.ws.ID, g.ID, f.clk.Now(), func(n int) error { waiting = n; return nil }); err != nil {
			t.Fatal(err)
		}
		if waiting != 1 {
			t.Fatalf("movements waiting on the gateway = %d; want the pending refund", waiting)
		}
		_, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "5"}, "")
		wantReason(t, err, cauri.EInvalid, "refunds_unsupported")
		if !strings.Contains(cauri.ErrorMessage(err), "payout") {
			t.Fatalf("message = %q; want the payout way named", cauri.ErrorMessage(err))
		}
	})
}

// wave adds a live Wave gateway for Senegal, on Wave's simulator over
// loopback HTTP, and an XOF session of amount paid through it (its
// attempt keeps, once paid, Wave's transaction id, not the session's).
func (f *fixture) wave(amount string) (*wave.Simulator, *cauri.Session, *cauri.PaymentAttempt) {
	f.t.Helper()
	ctx := context.Background()
	if f.waveSim == nil {
		f.waveSim = &wave.Simulator{APIKey: "wave_sn_prod_sim"}
		srv := httptest.NewServer(f.waveSim)
		f.t.Cleanup(srv.Close)
		f.waveURL = srv.URL
		f.waveGW = storetest.Gateway(f.t, f.st, f.ws, "wave", srv.URL, map[string]string{"api_key": "wave_sn_prod_sim"}, f.clk.Now(), "SN")
	}
	sess, _, err := f.checkout.Create(ctx, f.ws, true, checkout.CreateParams{Amount: amount, CustomerName: "Awa Diop"})
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := f.checkout.Initiate(ctx, sess.ID, checkout.Payment{GatewayID: f.waveGW.ID, Code: "WAVE", Phone: "+221771234567"})
	if err != nil {
		f.t.Fatal(err)
	}
	if res, err := http.Post(f.waveURL+"/_sim/settle/"+a.Reference, "", nil); err != nil || res.StatusCode != http.StatusNoContent {
		f.t.Fatalf("settle = %v, %v", res, err)
	}
	f.clk.Add(movement.StatusCheck)
	if sess, err = f.checkout.Refresh(ctx, sess.ID); err != nil || sess.Status != cauri.SessionSuccess {
		f.t.Fatalf("payment = %+v, %v; want SUCCESS", sess, err)
	}
	return f.waveSim, sess, a
}

// TestCreate_Wave: Wave refunds only a whole payment, at once: a part is
// refused before anything is written or sent (400 refunds_unsupported,
// the payout way named), and so is the rest of a payment partly refunded;
// the whole payment (the rest unsaid, or its amount said) succeeds at once
// through the payment's checkout session, the session REFUNDED with its
// payment.updated.
func TestCreate_Wave(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		sim, sess, _ := f.wave("5000")
		_, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID, Amount: "2000"}, "")
		wantReason(t, err, cauri.EInvalid, "refunds_unsupported")
		if msg := cauri.ErrorMessage(err); !strings.Contains(msg, "Wave refunds only the whole payment") || !strings.Contains(msg, `"method": "payout"`) {
			t.Fatalf("message = %q; want the whole payment and the payout way named", msg)
		}
		if list, _ := st.SessionRefunds(ctx, sess.ID); len(list) != 0 || sim.Refunds() != 0 {
			t.Fatalf("a refused part left %d refunds, %d at Wave; want none", len(list), sim.Refunds())
		}
		r, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: sess.ID}, "")
		if err != nil || r.Status != cauri.RefundSucceeded || r.Provider != "wave" || r.Amount != 5000 || !strings.HasPrefix(r.ProviderRef, "cos-") {
			t.Fatalf("refund = %+v, %v; want succeeded at once, 5000, with Wave's checkout session", r, err)
		}
		if s, _ := st.Session(ctx, sess.ID); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
		if evs := f.events(sess.ID, cauri.EventPaymentUpdated); len(evs) != 1 || sim.Refunds() != 1 {
			t.Fatalf("%d payment.updated, %d refunds at Wave; want 1 and 1", len(evs), sim.Refunds())
		}

		// Its amount said: the whole payment too.
		_, other, _ := f.wave("3000")
		if r, _, err := f.s.Create(ctx, f.ws, true, Params{TransactionID: other.ID, Amount: "3000"}, ""); err != nil || r.Status != cauri.RefundSucceeded {
			t.Fatalf("refund of the whole amount said = %+v, %v; want succeeded", r, err)
		}

		// The rest of a payment partly refunded (a part held by another
		// refund, a payout's): refused under the session's lock.
		_, third, a := f.wave("4000")
		now := f.clk.Now()
		part := &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: f.ws.ID, Livemode: true, SessionID: third.ID, AttemptID: a.ID,
			GatewayID: a.GatewayID, Provider: "pawapay", Amount: 1000, Currency: "XOF", Status: cauri.RefundPending,
			Method: cauri.RefundByPayout, Reference: cauri.NewUUID(), CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateRefund(ctx, part, nil, cauri.AdmitRefund); err != nil {
			t.Fatal(err)
		}
		_, _, err = f.s.Create(ctx, f.ws, true, Params{TransactionID: third.ID}, "")
		wantReason(t, err, cauri.EInvalid, "refunds_unsupported")
		if !strings.Contains(cauri.ErrorMessage(err), "payout") {
			t.Fatalf("message = %q; want the payout way named", cauri.ErrorMessage(err))
		}
		if list, _ := st.SessionRefunds(ctx, third.ID); len(list) != 1 || sim.Refunds() != 2 {
			t.Fatalf("the refused rest left %d refunds, %d at Wave; want the payout's only, and 2", len(list), sim.Refunds())
		}
	})
}

// TestReconcile_WaveOrphan: a Wave refund committed whose call never
// recorded its end (a crash) is adopted by the reconciler and read the
// only way Wave can be asked, the refund's call made again by the
// payment's checkout session (known by the payment only): refunded once.
func TestReconcile_WaveOrphan(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, connectors.New)
		sim, sess, a := f.wave("5000")
		a, _ = f.s.collected(ctx, sess)
		now := f.clk.Now()
		r := &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: f.ws.ID, Livemode: true, SessionID: sess.ID, AttemptID: a.ID,
			GatewayID: a.GatewayID, Provider: a.Provider, Amount: 5000, Currency: "XOF", Status: cauri.RefundPending,
			Method: cauri.RefundByAggregator, Reference: cauri.NewUUID(), CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateRefund(ctx, r, nil, cauri.AdmitRefund); err != nil {
			t.Fatal(err)
		}
		f.clk.Add(movement.InitiationDeadline + time.Second)
		if n, err := f.s.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("Reconcile = %d, %v", n, err)
		}
		got, _ := f.s.Get(ctx, f.ws, true, r.ID)
		if got.Status != cauri.RefundSucceeded || !strings.HasPrefix(got.ProviderRef, "cos-") || sim.Refunds() != 1 {
			t.Fatalf("orphan = %+v, %d refunds at Wave; want succeeded, once", got, sim.Refunds())
		}
		if s, _ := st.Session(ctx, sess.ID); s.Status != cauri.SessionRefunded {
			t.Fatalf("session = %s; want REFUNDED", s.Status)
		}
	})
}
