package cauri

import (
	"encoding/json"
	"time"
)

// PaymentLink is a reusable page that collects a fixed amount: each
// customer who pays through it pays a checkout session of its own, attached
// to the link. Links are live only. A link is created active; the merchant
// may deactivate it (its page then takes no payment) and reactivate it. It
// never expires by itself.
type PaymentLink struct {
	ID          string
	WorkspaceID string
	Slug        string // the last segment of the page's address; unguessable
	Title       string
	Amount      int64 // minor units
	Currency    Currency
	Active      bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewSlug returns a link's slug: 80 random bits, short enough to share.
func NewSlug() string { return randomString(10) }

// PaymentLinkObject is the create answer (SPEC section 2).
type PaymentLinkObject struct {
	Success  bool        `json:"success"`
	ID       string      `json:"id"`
	URL      string      `json:"url"`
	Slug     string      `json:"slug"`
	Amount   json.Number `json:"amount"`
	Currency Currency    `json:"currency"`
	Title    string      `json:"title"`
	Active   bool        `json:"active"`
}

// Object returns the public form of l; linkURL is the links' pages' base.
func (l *PaymentLink) Object(linkURL string) PaymentLinkObject {
	return PaymentLinkObject{Success: true, ID: l.ID, URL: linkURL + "/" + l.Slug, Slug: l.Slug,
		Amount: json.Number(FormatAmount(l.Amount, l.Currency)), Currency: l.Currency, Title: l.Title, Active: l.Active}
}
