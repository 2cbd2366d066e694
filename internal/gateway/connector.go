package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/cauri-pay/cauri"
)

// Collection asks an aggregator to collect one payment.
type Collection struct {
	// Reference is ours, unique per attempt; aggregators that take a
	// client id use it as their idempotency key, so a retry never charges twice.
	Reference   string
	Amount      int64 // minor units
	Currency    cauri.Currency
	Phone       string // E.164
	Operator    string // the aggregator's own code for the operator
	Description string
	Email       string // the customer's, when the session has one
	Country     string // ISO 3166-1 alpha-2 of the operator
}

// Outcome is where a collection stands at the aggregator.
type Outcome string

const (
	Pending   Outcome = "pending"   // started; the customer has not finished
	Succeeded Outcome = "succeeded" // the money is collected
	Failed    Outcome = "failed"    // declined, refused or failed: final
	NotFound  Outcome = "not_found" // the aggregator never received it: safe to try elsewhere
)

// Status is a collection's state as the aggregator reports it.
type Status struct {
	Outcome     Outcome
	ProviderRef string // the aggregator's (or operator's) transaction id, once known
	Reason      string // the aggregator's words for a failure
}

// Connector talks to one aggregator with one gateway's credentials.
type Connector interface {
	// Collect starts a collection. A refusal by the aggregator is a Status
	// with Outcome Failed; an error means the outcome is unknown.
	Collect(ctx context.Context, c Collection) (Status, error)
	// CollectionStatus reads a collection's state by our reference.
	CollectionStatus(ctx context.Context, reference string) (Status, error)
	// CallbackReference reads which collection an aggregator's callback is
	// about. The callback is only a signal: its state is confirmed with
	// CollectionStatus before anything changes.
	CallbackReference(h http.Header, body []byte) (string, error)
}

// Error is a failure to talk with an aggregator.
type Error struct {
	// Transient errors (timeouts, 5xx, an unreadable answer) may have
	// started the operation or not: check its status before trying
	// another gateway.
	Transient bool
	// NotSent: the request never left (the connection could not be made),
	// so nothing started.
	NotSent bool
	// Answered: the aggregator answered (a 5xx, an unreadable body), as
	// opposed to a timeout where no answer came at all.
	Answered bool
	Message  string
}

func (e *Error) Error() string { return "gateway: " + e.Message }

// IsTransient reports whether err is an Error another attempt could overcome.
func IsTransient(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Transient
}

// ErrorOf returns err's *Error, or nil.
func ErrorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IdempotentCollector is a connector whose initiation may be sent again
// with the same reference without a second payment (pawaPay's depositId).
type IdempotentCollector interface {
	IdempotentCollect() bool
}
