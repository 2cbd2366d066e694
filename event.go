package cauri

import (
	"encoding/json"
	"time"
)

// Event names (SPEC section 6).
const (
	EventPaymentCompleted  = "payment.completed"
	EventPaymentFailed     = "payment.failed"
	EventPaymentCancelled  = "payment.cancelled"
	EventPaymentUpdated    = "payment.updated"
	EventTransferSucceeded = "transfer.succeeded"
	EventTransferFailed    = "transfer.failed"
)

// Event records one status change. It is written in the same database
// transaction as the change itself, so none is ever lost; the webhook
// worker turns events into deliveries.
type Event struct {
	ID          string
	WorkspaceID string
	Livemode    bool
	Type        string
	SessionID   string
	TransferID  string
	Data        json.RawMessage // the object as it was right after the change
	CreatedAt   time.Time
}

// SessionEvent returns the event of a session that has just moved to its
// current status, or nil when the status emits none.
func SessionEvent(s *Session, data json.RawMessage, now time.Time) *Event {
	var typ string
	switch s.Status {
	case SessionSuccess:
		typ = EventPaymentCompleted
	case SessionFailed:
		typ = EventPaymentFailed
	case SessionCancelled:
		typ = EventPaymentCancelled
	default:
		typ = EventPaymentUpdated
	}
	return &Event{
		ID: NewLogID("evt_", now), WorkspaceID: s.WorkspaceID, Livemode: s.Livemode, Type: typ,
		SessionID: s.ID, Data: data, CreatedAt: now.UTC(),
	}
}
