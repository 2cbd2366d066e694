package cauri

import "time"

// AttemptStatus is where one payment attempt stands at its aggregator.
type AttemptStatus string

const (
	AttemptPending   AttemptStatus = "pending"
	AttemptSucceeded AttemptStatus = "succeeded"
	AttemptFailed    AttemptStatus = "failed"
)

// Attempt is one try to collect a session's payment through one gateway.
// A session has at most one pending attempt at a time: a second could
// succeed too and debit the customer twice.
type Attempt struct {
	ID           string
	SessionID    string
	GatewayID    string
	Provider     string
	Reference    string // ours, the aggregator's idempotency key (a UUID)
	Country      string
	Operator     string // operator key
	OperatorCode string // the aggregator's code for it
	Phone        string // E.164
	Status       AttemptStatus
	Reason       string // the aggregator's words for a failure
	ProviderRef  string // the aggregator's own id, once known
	// RedirectURL is the aggregator's page where the customer finishes
	// paying, for payments made there (cards, CinetPay); "" otherwise.
	RedirectURL string
	// RouteReason is why this gateway was chosen (the routing engine's
	// reason, or the failover that led to it).
	RouteReason string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CheckedAt   *time.Time // last time the aggregator was asked
	// InitiatedAt is when the initiation call returned; until then the
	// attempt is not checked, and "not found" means nothing.
	InitiatedAt *time.Time
}

// NotFoundIsFinal is how long after its initiation call returned an
// attempt the aggregator does not know is taken as never started.
const NotFoundIsFinal = 2 * time.Minute

// InitiationDeadline bounds an initiation call (its 15 s timeouts, a
// resend and a status check included): an attempt still not marked
// initiated this long after its creation was cut short by a crash, and the
// reconciler treats it as initiated then.
const InitiationDeadline = 5 * time.Minute
