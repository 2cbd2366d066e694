package checkout

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// expire makes the simulator end a payment as failed, as an operator does
// with a request its customer never answered.
func expire(t *testing.T, simURL, reference string) {
	t.Helper()
	gatewaytest.Control(t, simURL, "/_sim/settle/"+reference+"?status=FAILED")
}

// TestResend: a request the customer missed is sent again once the
// aggregator says it has ended: a new attempt with a new reference, the
// same method and number; never while the first is still open, never
// twice to one number within ResendInterval, and at most MaxAttempts in all.
func TestResend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, simURL, clk := setup(t, st)
		sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
		if err != nil {
			t.Fatal(err)
		}
		reason := func(err error) string { return cauri.ErrorCode(err) + "/" + cauri.ErrorReason(err) }
		if _, err := s.Resend(ctx, sess.ID); cauri.ErrorCode(err) != cauri.EConflict {
			t.Fatalf("resend before any request: %v; want %s", err, cauri.EConflict)
		}
		first, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "FREE_SEN", Phone: "+221761234567"})
		if err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		if _, err := s.Resend(ctx, sess.ID); reason(err) != "conflict/payment_waiting" {
			t.Fatalf("resend while the request is open: %v; want conflict/payment_waiting", err)
		}
		expire(t, simURL, first.Reference)
		clk.Add(movement.CallbackCheck)
		second, err := s.Resend(ctx, sess.ID)
		if err != nil {
			t.Fatalf("resend after the request expired: %v", err)
		}
		if second.Reference == first.Reference || second.ID == first.ID || second.Phone != first.Phone ||
			second.OperatorCode != first.OperatorCode || second.Status != cauri.AttemptPending {
			t.Fatalf("resent = %+v; want a new pending attempt to %s by %s", second, first.Phone, first.OperatorCode)
		}
		if got, _ := st.Session(ctx, sess.ID); got.Status != cauri.SessionPending {
			t.Fatalf("session after the resend = %s; want PENDING again", got.Status)
		}
		// Within ResendInterval of the last request to that number: refused.
		expire(t, simURL, second.Reference)
		clk.Add(movement.CallbackCheck)
		if _, err := s.Resend(ctx, sess.ID); reason(err) != "conflict/resend_too_soon" {
			t.Fatalf("resend %s after the last: %v; want conflict/resend_too_soon", movement.CallbackCheck, err)
		}
		// Another number goes at once.
		third, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "FREE_SEN", Phone: "+221767654321"})
		if err != nil {
			t.Fatalf("another number at once: %v", err)
		}
		last := third
		for range MaxAttempts - 3 {
			expire(t, simURL, last.Reference)
			clk.Add(ResendInterval)
			if last, err = s.Resend(ctx, sess.ID); err != nil {
				t.Fatal(err)
			}
		}
		expire(t, simURL, last.Reference)
		clk.Add(ResendInterval)
		if _, err := s.Resend(ctx, sess.ID); reason(err) != "conflict/attempts_exhausted" {
			t.Fatalf("resend after %d attempts: %v; want conflict/attempts_exhausted", MaxAttempts, err)
		}
		if _, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "ORANGE_SEN", Phone: "+221771234567"}); reason(err) != "conflict/attempts_exhausted" {
			t.Fatalf("another method after %d attempts: %v; want conflict/attempts_exhausted", MaxAttempts, err)
		}
		if attempts, _ := st.Attempts(ctx, sess.ID); len(attempts) != MaxAttempts {
			t.Fatalf("attempts = %d; want %d", len(attempts), MaxAttempts)
		}
	})
}

// TestInitiate_LimitUnderConcurrency: many tries of one session at once,
// each refused at initiation (so none stays pending to hold the others
// back): at most MaxAttempts are ever made.
func TestInitiate_LimitUnderConcurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, _, _ := setup(t, st)
		sess, _, err := s.Create(ctx, ws, true, CreateParams{Amount: "2500"})
		if err != nil {
			t.Fatal(err)
		}
		for burst := 0; burst < 10; burst++ {
			errs := make(chan error, 8)
			for i := range 8 {
				go func() {
					// ...0039 is refused at initiation; a number each, so no interval applies.
					phone := "+221771" + string(rune('0'+burst)) + string(rune('0'+i)) + "0039"
					_, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "ORANGE_SEN", Phone: phone})
					errs <- err
				}()
			}
			exhausted := 0
			for range 8 {
				if cauri.ErrorReason(<-errs) == "attempts_exhausted" {
					exhausted++
				}
			}
			attempts, err := st.Attempts(ctx, sess.ID)
			if err != nil || len(attempts) > MaxAttempts {
				t.Fatalf("after burst %d: %d attempts (%v); want at most %d", burst, len(attempts), err, MaxAttempts)
			}
			if exhausted == 8 {
				if len(attempts) != MaxAttempts {
					t.Fatalf("every try refused with %d attempts; want %d", len(attempts), MaxAttempts)
				}
				return
			}
		}
		t.Fatal("the tries were never all refused by the limit")
	})
}

// TestResendable_WrongNumber: a try that failed for its number (no wallet
// there) is not sent again as it was, since it would fail the same way; a
// try that failed for want of funds, or was missed, is.
func TestResendable_WrongNumber(t *testing.T) {
	for _, c := range []struct {
		reason string
		want   bool
	}{
		{"PAYER_NOT_FOUND: no wallet", false},
		{"INVALID_PHONE_NUMBER", false},
		{"INSUFFICIENT_BALANCE", true},
		{"PAYMENT_NOT_APPROVED", true},
		{"", true},
	} {
		a := &cauri.PaymentAttempt{Provider: "pawapay", Country: "SEN", OperatorCode: "ORANGE_SEN", Phone: "+221771230029",
			Status: cauri.AttemptFailed, Reason: c.reason}
		if got := Resendable(a); got != c.want {
			t.Errorf("Resendable(failed for %q) = %v; want %v", c.reason, got, c.want)
		}
		if err := resendable(a); !c.want && cauri.ErrorReason(err) != "wrong_number" {
			t.Errorf("resendable(failed for %q) = %v; want the reason wrong_number", c.reason, err)
		}
	}
	// A request still waiting has no reason yet: it may be sent again.
	if !Resendable(&cauri.PaymentAttempt{Provider: "pawapay", Country: "SEN", OperatorCode: "ORANGE_SEN", Status: cauri.AttemptPending}) {
		t.Error("a waiting request cannot be sent again")
	}
}
