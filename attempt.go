package cauri

import "time"

// AttemptStatus is where one payment attempt stands at its aggregator.
type AttemptStatus string

const (
	AttemptPending   AttemptStatus = "pending"
	AttemptSucceeded AttemptStatus = "succeeded"
	AttemptFailed    AttemptStatus = "failed"
)

// PaymentAttempt is one try to collect a session's payment through one gateway.
// A session has at most one pending attempt at a time: a second could
// succeed too and debit the customer twice.
type PaymentAttempt struct {
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
	// NeedsCode: the aggregator waits for a code it sent the customer
	// (a voucher or one-time code), entered on the hosted page.
	NeedsCode bool
	// Instructions are the aggregator's words telling the customer how to
	// finish paying (a USSD code to dial, approve on the phone); "" when it
	// gives none.
	Instructions string
	// RouteReason is why this gateway was chosen (the routing engine's
	// reason, or the failover that led to it).
	RouteReason string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CheckedAt   *time.Time // last time the aggregator was asked
	// InitiatedAt is when the initiation call returned; until then the
	// attempt is not checked, and "not found" means nothing.
	InitiatedAt *time.Time
	// FinalRef is the aggregator's final id of the payment that a callback
	// proved before a status read confirmed the payment (M-Pesa's receipt
	// number): it becomes ProviderRef when the payment succeeds; "" when
	// there is none.
	FinalRef string
}

// NextActionType is the kind of step a pending payment waits for.
type NextActionType string

const (
	// ActionRedirect: the customer goes on paying on the aggregator's page.
	ActionRedirect NextActionType = "redirect"
	// ActionEnterCode: the customer enters the code the aggregator sent them.
	ActionEnterCode NextActionType = "enter_code"
	// ActionApprove: the customer approves the payment on the phone (the
	// prompt the operator sends, or the aggregator's instructions).
	ActionApprove NextActionType = "approve"
)

// NextAction is what the customer does to finish a pending payment, as the
// hosted page, the link page and POST /checkout/initiate's answer carry it.
type NextAction struct {
	Type NextActionType `json:"type"`
	// URL is the aggregator's page, for ActionRedirect.
	URL string `json:"url,omitempty"`
	// Instructions are the aggregator's own words, when it gives them.
	Instructions string `json:"instructions,omitempty"`
}

// NextAction is the step a pending attempt waits for.
func (a *PaymentAttempt) NextAction() NextAction {
	switch {
	case a.RedirectURL != "":
		return NextAction{Type: ActionRedirect, URL: a.RedirectURL, Instructions: a.Instructions}
	case a.NeedsCode:
		return NextAction{Type: ActionEnterCode, Instructions: a.Instructions}
	}
	return NextAction{Type: ActionApprove, Instructions: a.Instructions}
}
