package cauri

import (
	"encoding/json"
	"time"
)

// TransferStatus is where a transfer stands (SPEC section 3).
type TransferStatus string

const (
	TransferProcessing TransferStatus = "processing" // committed; the aggregator has it or is about to
	TransferSucceeded  TransferStatus = "succeeded"
	TransferFailed     TransferStatus = "failed"
)

// Transfer is money sent out to a Mobile Money account through one of the
// workspace's gateways. It is committed, processing, before the aggregator
// is called; its Reference is the aggregator's idempotency key, so no retry
// or crash can pay it twice.
type Transfer struct {
	ID               string
	WorkspaceID      string
	Livemode         bool
	Reference        string // a UUID, ours, the aggregator's idempotency id
	Status           TransferStatus
	Amount           int64 // minor units
	Currency         Currency
	Country          string // ISO 3166-1 alpha-2
	Operator         string // operator key, e.g. "orange_money"
	ProviderOperator string // the serving gateway's code for it
	Phone            string // E.164
	RecipientName    string
	Description      string
	GatewayID        string
	Provider         string
	ProviderRef      string // the aggregator's own id, once known
	FailureCode      string // machine-readable, when failed (e.g. "solde_insuffisant", "rejected")
	FailureMessage   string // the aggregator's words, when failed
	CreatedAt        time.Time
	UpdatedAt        time.Time
	CompletedAt      *time.Time
	// InitiatedAt is when the payout call returned; until then nobody asks
	// the aggregator about it (as for payment attempts).
	InitiatedAt *time.Time
	// RecipientNameCheck is what became of the recipient's name check the
	// merchant asked for (recipient_name_check), NameCheckNone if none.
	RecipientNameCheck NameCheck
	// RecipientNameReported is the account holder's name the payout's own
	// result reported (M-Pesa B2C), "" until an aggregator reports one.
	RecipientNameReported string
}

// NameCheck is what became of a transfer's check of its recipient's name
// against the name the aggregator tells for the account. A name that
// clearly differed refused the transfer: no transfer has that outcome.
type NameCheck string

const (
	NameCheckNone        NameCheck = ""            // not asked
	NameCheckMatched     NameCheck = "matched"     // the aggregator's name matched recipient_name
	NameCheckUnavailable NameCheck = "unavailable" // no name could be had: sent unchecked
)

// FailureCredentialsRefused is the failure_code of a transfer the
// aggregator refused for the gateway's own credentials (M-Pesa's 2001):
// no money moved, it does not count toward the daily cap, and the gateway
// shows the problem (docs/transfers.md).
const FailureCredentialsRefused = "identifiants_refuses"

// DefaultTransferDailyCap is how many transfers a workspace may create per
// day (GMT) unless the service administration sets another cap.
const DefaultTransferDailyCap = 200

// TransferObject is the public JSON form of a transfer: API responses and
// webhook data.
type TransferObject struct {
	ID               string         `json:"id"`
	Object           string         `json:"object"`
	Reference        string         `json:"reference"`
	Status           TransferStatus `json:"status"`
	Amount           json.Number    `json:"amount"`
	Currency         Currency       `json:"currency"`
	Fee              json.Number    `json:"fee"`
	Country          string         `json:"country"`
	Operator         string         `json:"operator"`
	ProviderOperator string         `json:"provider_operator"`
	Phone            string         `json:"phone"`
	RecipientName    *string        `json:"recipient_name"`
	Description      *string        `json:"description"`
	Provider         string         `json:"provider"`
	FailureCode      *string        `json:"failure_code"`
	FailureMessage   *string        `json:"failure_message"`
	Livemode         bool           `json:"livemode"`
	CreatedAt        string         `json:"created_at"`
	UpdatedAt        string         `json:"updated_at"`
	CompletedAt      *string        `json:"completed_at"`
	// RecipientNameChecked is null when no check was asked, true when the
	// aggregator's name for the account matched recipient_name, false when
	// none could be had and the transfer was sent unchecked.
	RecipientNameChecked *bool `json:"recipient_name_checked"`
	// RecipientNameReported is the account holder's name the payout's own
	// result reported (only M-Pesa's B2C result does), null until then.
	RecipientNameReported *string `json:"recipient_name_reported"`
}

// Object returns the public form of t. The fee is always 0: the money
// leaves the aggregator's wallet with the aggregator's own fees.
func (t *Transfer) Object() TransferObject {
	return TransferObject{
		ID: t.ID, Object: "transfer", Reference: t.Reference, Status: t.Status,
		Amount: json.Number(FormatAmount(t.Amount, t.Currency)), Currency: t.Currency, Fee: "0",
		Country: t.Country, Operator: t.Operator, ProviderOperator: t.ProviderOperator, Phone: t.Phone,
		RecipientName: nullable(t.RecipientName), Description: nullable(t.Description), Provider: t.Provider,
		FailureCode: nullable(t.FailureCode), FailureMessage: nullable(t.FailureMessage), Livemode: t.Livemode,
		CreatedAt: t.CreatedAt.UTC().Format(TimeFormat), UpdatedAt: t.UpdatedAt.UTC().Format(TimeFormat),
		CompletedAt: formatTime(t.CompletedAt), RecipientNameChecked: t.RecipientNameCheck.checked(),
		RecipientNameReported: nullable(t.RecipientNameReported),
	}
}

// checked is the object's recipient_name_checked: nil when not asked.
func (c NameCheck) checked() *bool {
	if c == NameCheckNone {
		return nil
	}
	ok := c == NameCheckMatched
	return &ok
}

// TransferEvent returns the event of a transfer that has just ended, or
// nil while it is processing (SPEC section 6 names no event for that).
func TransferEvent(t *Transfer, now time.Time) (*Event, error) {
	typ := ""
	switch t.Status {
	case TransferSucceeded:
		typ = EventTransferSucceeded
	case TransferFailed:
		typ = EventTransferFailed
	default:
		return nil, nil
	}
	data, err := json.Marshal(t.Object())
	if err != nil {
		return nil, err
	}
	return &Event{ID: NewLogID("evt_", now), WorkspaceID: t.WorkspaceID, Livemode: t.Livemode, Type: typ, TransferID: t.ID,
		Data: data, CreatedAt: now.UTC()}, nil
}
