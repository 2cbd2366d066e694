package cauri

import (
	"slices"
	"strings"
	"time"
)

// EventNames lists the six events (SPEC section 6), in the order shown.
var EventNames = []string{
	EventPaymentCompleted, EventPaymentFailed, EventPaymentCancelled, EventPaymentUpdated,
	EventTransferSucceeded, EventTransferFailed,
}

// WebhookConfig is where a workspace's events go.
type WebhookConfig struct {
	URL     string // live events, and test events when TestURL is empty
	TestURL string // test events
	// Events and TestEvents are the live and the test events' selections
	// (all six when empty): each mode has its own, so that a test key,
	// which sets the test one, never changes what production receives.
	Events, TestEvents []string
}

// URLFor is the address an event of this mode goes to, or "" for none.
func (c *WebhookConfig) URLFor(livemode bool) string {
	if !livemode && c.TestURL != "" {
		return c.TestURL
	}
	return c.URL
}

// Selects reports whether the workspace wants this event of this mode.
func (c *WebhookConfig) Selects(event string, livemode bool) bool {
	sel := c.TestEvents
	if livemode {
		sel = c.Events
	}
	return len(sel) == 0 || slices.Contains(sel, event)
}

// SelectedEvents is a mode's selection in the order of EventNames.
func (c *WebhookConfig) SelectedEvents(livemode bool) []string {
	var out []string
	for _, e := range EventNames {
		if c.Selects(e, livemode) {
			out = append(out, e)
		}
	}
	return out
}

// SetEvents sets a mode's selection.
func (c *WebhookConfig) SetEvents(livemode bool, events []string) {
	if livemode {
		c.Events = events
	} else {
		c.TestEvents = events
	}
}

// ParseEvents checks a selection: every name must be one of the six, and
// at least one must be named. The full list is stored as "all".
func ParseEvents(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, Errorf(EInvalid, "events must name at least one event; leave it out to receive all six")
	}
	var sel []string
	for _, n := range names {
		if !slices.Contains(EventNames, n) {
			return nil, Errorf(EInvalid, "events: %q is not an event; use %s", n, strings.Join(EventNames, ", "))
		}
		if !slices.Contains(sel, n) {
			sel = append(sel, n)
		}
	}
	if len(sel) == len(EventNames) {
		return nil, nil
	}
	return sel, nil
}

// DeliveryStatus is the state of a webhook delivery (SPEC section 3).
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
)

// Delivery is the sending of one event to one address, with its attempts.
type Delivery struct {
	ID             string
	WorkspaceID    string
	EventID        string
	Event          string
	Livemode       bool
	URL            string // where the latest attempt went, or the next will
	Status         DeliveryStatus
	Attempts       int // all attempts, resends included
	AutoAttempts   int // automatic attempts: the position in the schedule
	MaxAttempts    int
	NextAttemptAt  *time.Time
	LastStatusCode *int
	LastError      *string
	ResponseMS     int
	TransactionID  string
	TransferID     string
	CreatedAt      time.Time
	DeliveredAt    *time.Time
}

// DefaultRetrySchedule is SPEC section 8's: the delay before each of the
// ten attempts, counted from the previous one.
var DefaultRetrySchedule = []time.Duration{
	0, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour,
	3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour,
}

// WebhookTimeout is how long a receiver has to answer (SPEC section 6).
const WebhookTimeout = 10 * time.Second

// DeliveryObject is the public JSON form of a delivery.
type DeliveryObject struct {
	ID             string         `json:"id"`
	Object         string         `json:"object"`
	Event          string         `json:"event"`
	URL            string         `json:"url"`
	Status         DeliveryStatus `json:"status"`
	Attempts       int            `json:"attempts"`
	MaxAttempts    int            `json:"max_attempts"`
	NextAttemptAt  *string        `json:"next_attempt_at"`
	LastStatusCode *int           `json:"last_status_code"`
	LastError      *string        `json:"last_error"`
	ResponseMS     int            `json:"response_ms"`
	TransactionID  *string        `json:"transaction_id"`
	TransferID     *string        `json:"transfer_id"`
	Livemode       bool           `json:"livemode"`
	CreatedAt      string         `json:"created_at"`
	DeliveredAt    *string        `json:"delivered_at"`
}

// Object returns the public form of d.
func (d *Delivery) Object() DeliveryObject {
	return DeliveryObject{
		ID: d.ID, Object: "webhook.delivery", Event: d.Event, URL: d.URL, Status: d.Status, Attempts: d.Attempts,
		MaxAttempts: d.MaxAttempts, NextAttemptAt: formatTime(d.NextAttemptAt), LastStatusCode: d.LastStatusCode,
		LastError: d.LastError, ResponseMS: d.ResponseMS, TransactionID: nullable(d.TransactionID),
		TransferID: nullable(d.TransferID), Livemode: d.Livemode, CreatedAt: d.CreatedAt.UTC().Format(TimeFormat),
		DeliveredAt: formatTime(d.DeliveredAt),
	}
}

func formatTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(TimeFormat)
	return &s
}
