package checkout

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// clock is the service's injected time, moved by the tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// setup is a verified workspace with a live pawaPay gateway for Senegal
// pointed at pawaPay's simulator over HTTP on loopback, and the service
// over a real store.
func setup(t *testing.T, st *store.Store) (*Service, *cauri.Workspace, *cauri.Gateway, string, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	ws := storetest.Workspace(t, st, "Boutique Adjoa", true, clk.Now())
	srv := httptest.NewServer(&pawapay.Simulator{Token: "sim-token"})
	t.Cleanup(srv.Close)
	g := storetest.Gateway(t, st, ws, "pawapay", srv.URL, map[string]string{"api_token": "sim-token"}, clk.Now(), "SN")
	failures := movement.NewFailures(slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	s := &Service{Store: st, PayURL: "http://127.0.0.1:1/pay", CallbackURL: "http://127.0.0.1:1/callbacks", Now: clk.Now, Failures: failures,
		Connectors: &movement.Connectors{Store: st, Build: connectors.New, Failures: failures}}
	return s, ws, g, srv.URL, clk
}

// settle makes the simulator settle a payment now, as its number says.
func settle(t *testing.T, simURL, reference string) {
	t.Helper()
	gatewaytest.Control(t, simURL, "/_sim/settle/"+reference)
}

func TestCreate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _, _, _ := setup(t, st)
		for _, p := range []CreateParams{
			{Amount: ""}, {Amount: "-5"}, {Amount: "12.5"}, {Amount: "1000", Currency: "XYZ"},
			{Amount: "1000", SuccessURL: "javascript:alert(1)"}, {Amount: "1000", IdempotencyKey: "bad key\x00"},
		} {
			if _, _, err := s.Create(ctx, ws, true, p); cauri.ErrorCode(err) != cauri.EInvalid {
				t.Errorf("Create(%+v) = %v; want %s", p, err, cauri.EInvalid)
			}
		}
		a, replayed, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500", IdempotencyKey: "order-1"})
		if err != nil || replayed || a.Amount != 2500 || a.Status != cauri.SessionPending || !a.Livemode {
			t.Fatalf("create = %+v, %v, %v", a, replayed, err)
		}
		b, replayed, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500", IdempotencyKey: "order-1"})
		if err != nil || !replayed || b.ID != a.ID {
			t.Fatalf("the same key again = %+v, %v, %v; want the first session, replayed", b, replayed, err)
		}
		_, _, err = s.Create(ctx, ws, true, CreateParams{Amount: "9999", IdempotencyKey: "order-1"})
		if got, want := cauri.ErrorCode(err), cauri.EUnprocessable; got != want {
			t.Fatalf("the key with another request: got %s (%v); want %s", got, err, want)
		}
		if got, want := cauri.ErrorMessage(err), `Idempotency-Key "order-1" was already used with a different request; use a new key for a new request`; got != want {
			t.Fatalf("the key with another request: got %q; want %q", got, want)
		}
		if test, _, err := s.Create(ctx, ws, false, CreateParams{Amount: "2500"}); err != nil || test.Livemode {
			t.Fatalf("with a test key = %+v, %v; want a test session", test, err)
		}
	})
}

func TestInitiateVerifyCancel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, simURL, clk := setup(t, st)
		sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "NOPE", Phone: "+221771234567"}); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("a method not offered: %v; want %s", err, cauri.EInvalid)
		}
		a, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"})
		if err != nil || a.Status != cauri.AttemptPending {
			t.Fatalf("initiate = %+v, %v", a, err)
		}
		// One pending payment at a time: a second is refused, and so is
		// cancelling while the customer may be confirming.
		if _, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "ORANGE_SEN", Phone: "+221771234567"}); cauri.ErrorCode(err) != cauri.EConflict {
			t.Fatalf("a second payment while one waits: %v; want %s", err, cauri.EConflict)
		}
		if _, err := s.Cancel(ctx, sess.ID); cauri.ErrorCode(err) != cauri.EConflict {
			t.Fatalf("cancel while a payment waits: %v; want %s", err, cauri.EConflict)
		}
		settle(t, simURL, a.Reference)
		clk.Add(movement.StatusCheck)
		got, err := s.Refresh(ctx, sess.ID)
		if err != nil || got.Status != cauri.SessionSuccess {
			t.Fatalf("verify after the aggregator settled = %+v, %v; want SUCCESS", got, err)
		}
		if _, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"}); cauri.ErrorCode(err) != cauri.EConflict {
			t.Fatalf("paying a paid session: %v; want %s", err, cauri.EConflict)
		}

		other, _, _ := s.Create(ctx, ws, true, CreateParams{Amount: "1000"})
		if c, err := s.Cancel(ctx, other.ID); err != nil || c.Status != cauri.SessionCancelled {
			t.Fatalf("cancel = %+v, %v; want CANCELLED", c, err)
		}
		if _, err := s.Cancel(ctx, other.ID); cauri.ErrorCode(err) != cauri.EConflict {
			t.Fatalf("cancel twice: %v; want %s", err, cauri.EConflict)
		}
		test, _, _ := s.Create(ctx, ws, false, CreateParams{Amount: "1000"})
		if _, err := s.Initiate(ctx, test.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"}); cauri.ErrorCode(err) != cauri.EForbidden {
			t.Fatalf("a live payment of a test session: %v; want %s", err, cauri.EForbidden)
		}
		for id, want := range map[string]string{sess.ID: cauri.EventPaymentCompleted, other.ID: cauri.EventPaymentCancelled} {
			events, err := st.SessionEvents(ctx, id)
			if err != nil || len(events) != 1 || string(events[0].Type) != want {
				t.Errorf("events of %s = %+v, %v; want one %s", id, events, err, want)
			}
		}
	})
}
