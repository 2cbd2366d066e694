package checkout

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestCreate_ExpiresAt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _, _, clk := setup(t, st)
		now := clk.Now()
		for _, c := range []struct{ name, expires, want string }{
			{"ErrNotRFC3339", "tomorrow", "not an RFC 3339"},
			{"ErrDateOnly", now.Add(48 * time.Hour).Format("2006-01-02"), "not an RFC 3339"},
			{"ErrPast", now.Add(-time.Hour).Format(time.RFC3339), "not in the future"},
			{"ErrTooSoon", now.Add(4 * time.Minute).Format(time.RFC3339), "less than 5 minutes away"},
			{"ErrTooFar", now.Add(30*24*time.Hour + time.Second).Format(time.RFC3339), "more than 30 days away"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: c.expires})
				if cauri.ErrorCode(err) != cauri.EInvalid || !strings.Contains(cauri.ErrorMessage(err), c.want) {
					t.Fatalf("expires_at %q: %v; want %s saying %q", c.expires, err, cauri.EInvalid, c.want)
				}
			})
		}
		t.Run("Default", func(t *testing.T) {
			sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000"})
			if err != nil || !sess.ExpiresAt.Equal(now.Add(24*time.Hour)) {
				t.Fatalf("create = %+v, %v; want an expiry 24 h after creation", sess, err)
			}
		})
		t.Run("Given", func(t *testing.T) {
			// Any offset; stored and returned in UTC.
			given := now.Add(30 * 24 * time.Hour).In(time.FixedZone("WAT", 3600))
			sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: given.Format(time.RFC3339)})
			if err != nil {
				t.Fatal(err)
			}
			stored, err := st.Session(ctx, sess.ID)
			if err != nil || !stored.ExpiresAt.Equal(given) || stored.Object("").ExpiresAt != given.UTC().Format(cauri.TimeFormat) {
				t.Fatalf("stored = %+v, %v; want expires_at %s", stored, err, given)
			}
		})
		t.Run("Idempotency", func(t *testing.T) {
			// A default expiry is not part of the request: a replay later is the same request.
			first, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", IdempotencyKey: "exp-1"})
			if err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Minute)
			again, replayed, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", IdempotencyKey: "exp-1"})
			if err != nil || !replayed || again.ID != first.ID {
				t.Fatalf("replay a minute later = %v, %v; want the first session", replayed, err)
			}
			// A given expiry is: another one is another request.
			at := clk.Now().Add(time.Hour).Format(time.RFC3339)
			if _, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: at, IdempotencyKey: "exp-2"}); err != nil {
				t.Fatal(err)
			}
			other := clk.Now().Add(2 * time.Hour).Format(time.RFC3339)
			if _, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: other, IdempotencyKey: "exp-2"}); cauri.ErrorCode(err) != cauri.EUnprocessable {
				t.Fatalf("the key with another expiry: %v; want %s", err, cauri.EUnprocessable)
			}
			// Retried once its expiry is near or past (the first answer was
			// lost), the request is answered its session, not a 400.
			soon := clk.Now().Add(10 * time.Minute).Format(time.RFC3339)
			made, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: soon, IdempotencyKey: "exp-3"})
			if err != nil {
				t.Fatal(err)
			}
			clk.Add(6 * time.Minute)
			again, replayed, err = s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: soon, IdempotencyKey: "exp-3"})
			if err != nil || !replayed || again.ID != made.ID {
				t.Fatalf("replay with its expiry 4 minutes away = %v, %v; want the session made", replayed, err)
			}
			clk.Add(10 * time.Minute)
			if _, replayed, err = s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: soon, IdempotencyKey: "exp-3"}); err != nil || !replayed {
				t.Fatalf("replay with its expiry past = %v, %v; want the session made", replayed, err)
			}
			if _, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2000", ExpiresAt: soon, IdempotencyKey: "exp-3"}); cauri.ErrorCode(err) != cauri.EUnprocessable {
				t.Fatalf("the key with another amount and a past expiry: %v; want %s", err, cauri.EUnprocessable)
			}
			if _, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: soon, IdempotencyKey: "exp-4"}); cauri.ErrorCode(err) != cauri.EInvalid {
				t.Fatalf("a new key with a past expiry: %v; want %s", err, cauri.EInvalid)
			}
		})
	})
}

// TestReconcile_Expiry: past its expiry a PENDING session with no payment
// waiting becomes CANCELLED with one payment.cancelled; one whose payment
// waits is left to that payment's outcome (as Stripe does), and no
// session past its expiry takes a new payment, even before the
// reconciler has passed.
func TestReconcile_Expiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, simURL, clk := setup(t, st)
		soon := clk.Now().Add(10 * time.Minute).Format(time.RFC3339)
		idle, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "1000", ExpiresAt: soon})
		if err != nil {
			t.Fatal(err)
		}
		waiting, _, _ := s.Create(ctx, ws, true, CreateParams{Amount: "2500", ExpiresAt: soon})
		later, _, _ := s.Create(ctx, ws, true, CreateParams{Amount: "1000"})
		test, _, _ := s.Create(ctx, ws, false, CreateParams{Amount: "1000", ExpiresAt: soon})
		a, err := s.Initiate(ctx, waiting.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"})
		if err != nil {
			t.Fatal(err)
		}
		// Before its expiry nothing happens.
		clk.Add(10*time.Minute - time.Second)
		if _, err := s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Session(ctx, idle.ID); got.Status != cauri.SessionPending {
			t.Fatalf("a second before its expiry: %s; want PENDING", got.Status)
		}
		clk.Add(time.Second)
		// Expired, not yet reconciled: no new payment, no sandbox settlement.
		for name, err := range map[string]error{
			"initiate": func() error {
				_, err := s.Initiate(ctx, idle.ID, Payment{GatewayID: g.ID, Code: "WAVE_SEN", Phone: "+221771234567"})
				return err
			}(),
			"sandbox": func() error { _, err := s.SettleSandbox(ctx, test.ID, IssueSuccess); return err }(),
		} {
			if cauri.ErrorCode(err) != cauri.EConflict || cauri.ErrorReason(err) != "session_expired" {
				t.Errorf("%s past the expiry: %v; want %s session_expired", name, err, cauri.EConflict)
			}
		}
		if _, err := s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		want := map[string]cauri.SessionStatus{idle.ID: cauri.SessionCancelled, test.ID: cauri.SessionCancelled,
			waiting.ID: cauri.SessionPending, later.ID: cauri.SessionPending}
		for id, status := range want {
			got, err := st.Session(ctx, id)
			if err != nil || got.Status != status {
				t.Errorf("%s after the expiry = %v, %v; want %s", id, got.Status, err, status)
			}
		}
		for _, id := range []string{idle.ID, test.ID} {
			events, err := st.SessionEvents(ctx, id)
			if err != nil || len(events) != 1 || events[0].Type != cauri.EventPaymentCancelled {
				t.Errorf("events of %s = %+v, %v; want one %s", id, events, err, cauri.EventPaymentCancelled)
			}
		}
		// A second pass changes nothing more.
		if _, err := s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if events, _ := st.SessionEvents(ctx, idle.ID); len(events) != 1 {
			t.Errorf("events after a second pass = %d; want 1", len(events))
		}
		// The payment that waited at the expiry is still collected.
		settle(t, simURL, a.Reference)
		clk.Add(movement.StatusCheck)
		if got, err := s.Refresh(ctx, waiting.ID); err != nil || got.Status != cauri.SessionSuccess {
			t.Fatalf("the waiting payment settled = %+v, %v; want SUCCESS", got, err)
		}
		// The default expiry: 24 hours after creation.
		clk.Add(24*time.Hour - 10*time.Minute - movement.StatusCheck - time.Second)
		if _, err := s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Session(ctx, later.ID); got.Status != cauri.SessionPending {
			t.Fatalf("a second before 24 h: %s; want PENDING", got.Status)
		}
		clk.Add(time.Second)
		if _, err := s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Session(ctx, later.ID); got.Status != cauri.SessionCancelled {
			t.Fatalf("24 h after creation: %s; want CANCELLED", got.Status)
		}
	})
}
