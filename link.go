package cauri

import (
	"encoding/json"
	"time"
)

// PaymentLink is a reusable page that collects a fixed amount: each
// customer who pays through it pays a checkout session of its own, attached
// to the link. Links are live only. A link is created active; the merchant
// may deactivate it (its page then takes no payment) and reactivate it.
//
// Its controls, all optional: ExpiresAt, after which its page takes no
// payment; MaxPayments, the number of successful payments it takes (1: a
// single use); Phone, the only number it can be paid from; Metadata, the
// merchant's own, copied onto every payment made through it.
type PaymentLink struct {
	ID          string
	WorkspaceID string
	Slug        string // the last segment of the page's address; unguessable
	Title       string
	Amount      int64 // minor units
	Currency    Currency
	Active      bool
	ExpiresAt   *time.Time // nil: never expires
	MaxPayments int        // 0: no limit
	Phone       string     // E.164; "": any number
	Metadata    map[string]string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Expired reports whether l's expiry has passed at now.
func (l *PaymentLink) Expired(now time.Time) bool {
	return l.ExpiresAt != nil && !now.Before(*l.ExpiresAt)
}

// NewSlug returns a link's slug: 80 random bits, short enough to share.
func NewSlug() string { return randomString(10) }

// PaymentLinkObject is the create answer (SPEC section 2), and the link as
// every other route returns it: the SPEC's fields first, then ours.
type PaymentLinkObject struct {
	Success  bool        `json:"success"`
	ID       string      `json:"id"`
	URL      string      `json:"url"`
	Slug     string      `json:"slug"`
	Amount   json.Number `json:"amount"`
	Currency Currency    `json:"currency"`
	Title    string      `json:"title"`
	Active   bool        `json:"active"`
	// The controls; null when not set.
	ExpiresAt   *string           `json:"expires_at"`
	MaxPayments *int              `json:"max_payments"`
	Phone       *string           `json:"phone"`
	Metadata    map[string]string `json:"metadata"`
	// CompletedPayments is the number of successful payments made through
	// the link.
	CompletedPayments int    `json:"completed_payments"`
	CreatedAt         string `json:"created_at"`
}

// Object returns the public form of l; linkURL is the links' pages' base,
// completed the number of its successful payments.
func (l *PaymentLink) Object(linkURL string, completed int) PaymentLinkObject {
	o := PaymentLinkObject{Success: true, ID: l.ID, URL: l.URL(linkURL), Slug: l.Slug,
		Amount: json.Number(FormatAmount(l.Amount, l.Currency)), Currency: l.Currency, Title: l.Title, Active: l.Active,
		Metadata: l.Metadata, CompletedPayments: completed, CreatedAt: l.CreatedAt.UTC().Format(TimeFormat)}
	if l.ExpiresAt != nil {
		s := l.ExpiresAt.UTC().Format(TimeFormat)
		o.ExpiresAt = &s
	}
	if l.MaxPayments > 0 {
		n := l.MaxPayments
		o.MaxPayments = &n
	}
	if l.Phone != "" {
		p := l.Phone
		o.Phone = &p
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	return o
}

// URL is the address of l's page; linkURL is the links' pages' base.
func (l *PaymentLink) URL(linkURL string) string { return linkURL + "/" + l.Slug }
