package cauri

import (
	"encoding/json"
	"time"
)

// SessionStatus is the state of a checkout session (SPEC section 3).
type SessionStatus string

const (
	SessionPending   SessionStatus = "PENDING"
	SessionSuccess   SessionStatus = "SUCCESS"
	SessionFailed    SessionStatus = "FAILED"
	SessionCancelled SessionStatus = "CANCELLED"
	SessionRefunded  SessionStatus = "REFUNDED"
)

// Payable reports whether a session in this state can still be paid.
// A FAILED session can: the customer may try again.
func (s SessionStatus) Payable() bool {
	return s == SessionPending || s == SessionFailed
}

// Session is a checkout session: one amount to collect from one customer
// on the hosted page.
type Session struct {
	ID            string
	WorkspaceID   string
	Livemode      bool
	Status        SessionStatus
	Amount        int64 // minor units of Currency
	Currency      Currency
	CustomerName  string
	CustomerEmail string
	CustomerPhone string // E.164
	Description   string
	SuccessURL    string
	CancelURL     string
	MerchantName  string
	MerchantLogo  string
	Metadata      map[string]string
	Provider      string // aggregator that settled it; "sandbox" in test mode
	LinkID        string // the payment link it was paid through, if any
	CreatedAt     time.Time
	UpdatedAt     time.Time
	CompletedAt   *time.Time
	// ExpiresAt is when the session stops taking payments: a PENDING
	// session with no payment waiting is then cancelled.
	ExpiresAt time.Time
}

// Session lifetimes: the default (as Stripe's checkout sessions expire
// after 24 hours), and the bounds of an expires_at given on creation: a
// Mobile Money push needs minutes, and a session is one customer's
// payment, not a standing offer (that is a payment link).
const (
	SessionLifetime    = 24 * time.Hour
	MinSessionLifetime = 5 * time.Minute
	MaxSessionLifetime = 30 * 24 * time.Hour
)

// Expired reports whether the session's expiry has passed at now: it
// takes no new payment (a payment already waiting may still succeed).
func (s *Session) Expired(now time.Time) bool {
	return !s.ExpiresAt.IsZero() && !now.Before(s.ExpiresAt)
}

// Paid reports whether the payment succeeded.
func (s *Session) Paid() bool { return s.Status == SessionSuccess }

// OrderID is the merchant's order reference, taken from metadata.order_id.
func (s *Session) OrderID() string { return s.Metadata["order_id"] }

// SessionObject is the public JSON form of a session: the API's responses
// and the webhook events' data are both this shape.
type SessionObject struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	URL           string            `json:"url"`
	Livemode      bool              `json:"livemode"`
	Status        SessionStatus     `json:"status"`
	Paid          bool              `json:"paid"`
	Amount        json.Number       `json:"amount"`
	Currency      Currency          `json:"currency"`
	OrderID       *string           `json:"order_id"`
	CustomerName  *string           `json:"customer_name"`
	CustomerEmail *string           `json:"customer_email"`
	CustomerPhone *string           `json:"customer_phone"`
	Description   *string           `json:"description"`
	SuccessURL    *string           `json:"success_url"`
	CancelURL     *string           `json:"cancel_url"`
	MerchantName  *string           `json:"merchant_name"`
	MerchantLogo  *string           `json:"merchant_logo"`
	Metadata      map[string]string `json:"metadata"`
	Provider      *string           `json:"provider"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	CompletedAt   *string           `json:"completed_at"`
	ExpiresAt     string            `json:"expires_at"`
}

// TimeFormat is the format of every timestamp in the API: ISO 8601 in UTC
// with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Object returns the public form of s; payURL is the hosted pages' base.
func (s *Session) Object(payURL string) SessionObject {
	md := s.Metadata
	if md == nil {
		md = map[string]string{}
	}
	o := SessionObject{
		ID: s.ID, Object: "checkout.session", URL: payURL + "/" + s.ID, Livemode: s.Livemode,
		Status: s.Status, Paid: s.Paid(), Amount: json.Number(FormatAmount(s.Amount, s.Currency)),
		Currency: s.Currency, OrderID: nullable(s.OrderID()), CustomerName: nullable(s.CustomerName),
		CustomerEmail: nullable(s.CustomerEmail), CustomerPhone: nullable(s.CustomerPhone),
		Description: nullable(s.Description), SuccessURL: nullable(s.SuccessURL), CancelURL: nullable(s.CancelURL),
		MerchantName: nullable(s.MerchantName), MerchantLogo: nullable(s.MerchantLogo), Metadata: md,
		Provider: nullable(s.Provider), CreatedAt: s.CreatedAt.UTC().Format(TimeFormat),
		UpdatedAt: s.UpdatedAt.UTC().Format(TimeFormat), ExpiresAt: s.ExpiresAt.UTC().Format(TimeFormat),
	}
	o.CompletedAt = formatTime(s.CompletedAt)
	return o
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// IdempotencyKeyTTL is how long an Idempotency-Key is remembered.
const IdempotencyKeyTTL = 30 * 24 * time.Hour

// TestDataRetention is how long test-mode objects are kept (SPEC 1).
const TestDataRetention = 90 * 24 * time.Hour
