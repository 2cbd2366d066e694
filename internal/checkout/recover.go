package checkout

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
)

// A session's tries: how many, and how often to one number.
const (
	// MaxAttempts is how many payment attempts a session takes in all
	// (a failover's attempts count, but a failover is never refused: it
	// goes on with a try already admitted). Past it the customer asks the
	// merchant for a new payment: a number that fails five times will not
	// pay on the sixth, and each try rings the phone.
	MaxAttempts = 5
	// ResendInterval is the least time between two requests to one
	// number, so that a customer tapping again does not flood the phone
	// with prompts; another number goes at once.
	ResendInterval = 30 * time.Second
)

// tries holds a new attempt a, at now, to the session's limits, given
// what its earlier attempts tell.
func tries(prior store.Prior, a *cauri.PaymentAttempt, now time.Time) error {
	if prior.Count >= MaxAttempts {
		return cauri.Reasonf(cauri.EConflict, "attempts_exhausted",
			"This payment has been tried %d times, the most one payment takes; ask the merchant for a new payment", MaxAttempts)
	}
	last := prior.Latest
	if last == nil || a.Country == "" || last.Country == "" || last.Phone != a.Phone {
		return nil
	}
	if wait := last.CreatedAt.Add(ResendInterval).Sub(now); wait > 0 {
		return cauri.Reasonf(cauri.EConflict, "resend_too_soon",
			"A request was sent to %s %d seconds ago; wait %d seconds before sending another, so that the phone is not flooded",
			a.Phone, int(now.Sub(last.CreatedAt)/time.Second), int((wait+time.Second-1)/time.Second))
	}
	return nil
}

// Release ends the hosted page's wait for the session's payment when the
// aggregator says that payment has ended (a request the customer missed
// expires at the operator), so that the customer may send it again or
// choose another operator. It asks the aggregator at once (at most every
// movement.CallbackCheck per payment, however often the customer taps).
// A payment the aggregator still holds open is not ended here: the
// customer may still approve it, and a second request could make them pay
// twice (409, payment_waiting). It returns the session's latest attempt,
// nil when it has none.
func (s *Service) Release(ctx context.Context, sessionID string) (*cauri.PaymentAttempt, error) {
	sess, err := s.Store.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !sess.Livemode {
		return nil, cauri.Errorf(cauri.EForbidden, "This is a test session: settle it with the simulate buttons (POST /checkout/sandbox)")
	}
	if !sess.Status.Payable() {
		return nil, cauri.Errorf(cauri.EConflict, "Session is %s and can no longer be paid", sess.Status)
	}
	last, err := s.latest(ctx, sessionID)
	if err != nil || last == nil || last.Status != cauri.AttemptPending {
		return last, err
	}
	if turn, err := s.Store.ClaimCallbackCheck(ctx, last.ID, s.Now(), movement.CallbackCheck); err != nil {
		return nil, err
	} else if turn {
		if _, err := s.check(ctx, last); err != nil {
			s.Failures.Record(ctx, movement.Payment, "check", last.ID, err) // what is known stands
		}
	}
	if last, err = s.latest(ctx, sessionID); err != nil {
		return nil, err
	}
	if last.Status == cauri.AttemptPending {
		return nil, cauri.Reasonf(cauri.EConflict, "payment_waiting",
			"The request sent to %s is still open at the operator: approve it on the phone, or wait until it expires (usually within a few minutes), then try again",
			last.Phone)
	}
	return last, nil
}

// latest is a session's newest attempt, nil when it has none.
func (s *Service) latest(ctx context.Context, sessionID string) (*cauri.PaymentAttempt, error) {
	attempts, err := s.Store.Attempts(ctx, sessionID)
	if err != nil || len(attempts) == 0 {
		return nil, err
	}
	return attempts[0], nil
}

// Resend sends the session's last Mobile Money request again, once the
// aggregator says it has ended (Release): a new attempt, with a new
// reference, by the same method to the same number, held to the session's
// tries like any other (MaxAttempts, ResendInterval).
func (s *Service) Resend(ctx context.Context, sessionID string) (*cauri.PaymentAttempt, error) {
	last, err := s.Release(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if err := resendable(last); err != nil {
		return nil, err
	}
	return s.Initiate(ctx, sessionID, Payment{GatewayID: last.GatewayID, Code: last.OperatorCode, Phone: last.Phone})
}

// resendable says why an attempt's request cannot simply be sent again
// (nil when it can): there is none, it was a card (paid on the
// aggregator's page), its operator asks for a new code before each
// payment, or it failed for its number (no wallet there, or a number the
// operator does not take: the same request would fail the same way).
func resendable(last *cauri.PaymentAttempt) error {
	switch {
	case last == nil:
		return cauri.Errorf(cauri.EConflict, "No request was sent for this payment yet: choose how to pay")
	case last.Country == "":
		return cauri.Errorf(cauri.EConflict, "A card payment is made on the payment page: choose the card again")
	case PreauthHelp(last.Provider, last.OperatorCode) != nil:
		return cauri.Errorf(cauri.EConflict, "This operator asks for a new payment code for each payment: choose it again and enter a new code")
	case last.Status == cauri.AttemptFailed && connectors.Refusal(last.Provider, last.Reason) == gateway.RefusalNumber:
		return cauri.Reasonf(cauri.EConflict, "wrong_number",
			"The operator found no Mobile Money account for %s: check the number or choose another operator", last.Phone)
	}
	return nil
}

// Resendable reports whether the page may offer to send a's request
// again as it was.
func Resendable(a *cauri.PaymentAttempt) bool { return resendable(a) == nil }
