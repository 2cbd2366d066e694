package checkout

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/store"
)

// Limits of a link's controls.
const (
	// MaxLinkLifetime bounds a link's expiry: a date further away is more
	// likely a typo (a year for a day) than a plan.
	MaxLinkLifetime = 366 * 24 * time.Hour
	// MaxLinkPayments bounds a link's limit of payments, and so what the
	// admission of each payment counts under the link's lock.
	MaxLinkPayments = 10000
	// linkMetadataKey is the key of a link's payments' metadata that names
	// the link; a link's own metadata may not use it.
	linkMetadataKey = "payment_link"
)

// LinkParams is a link create request as the merchant sent it. Amount and
// MaxPayments are the JSON numbers' text, ExpiresAt the RFC 3339 text;
// empty fields are not set.
type LinkParams struct {
	Title, Amount, Currency string
	ExpiresAt               string
	MaxPayments             string
	Phone                   string
	Metadata                map[string]string
}

// refuseTestMode refuses a test key, or a workspace still in test mode:
// payment links exist in production only.
func refuseTestMode(ws *cauri.Workspace, keyLive bool) error {
	if !ws.Livemode(keyLive) {
		return cauri.Reasonf(cauri.EForbidden, "test_mode",
			"Payment links exist in production only: use the production secret key of a workspace whose identity is verified")
	}
	return nil
}

// CreateLink validates and stores a payment link. Links exist in production
// only: a test key, or a workspace still in test mode, is refused with
// 403 test_mode.
func (s *Service) CreateLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, p LinkParams) (*cauri.PaymentLink, error) {
	if err := refuseTestMode(ws, keyLive); err != nil {
		return nil, err
	}
	title, err := cauri.CleanText("title", p.Title, maxNameLen)
	if err != nil {
		return nil, err
	}
	if title == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "title is required")
	}
	cur := ws.DefaultCurrency
	if p.Currency != "" {
		if cur, err = cauri.ParseCurrency(p.Currency); err != nil {
			return nil, err
		}
	}
	if p.Amount == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "amount is required")
	}
	minor, err := cauri.ParseAmount("amount", p.Amount, cur)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	l := &cauri.PaymentLink{ID: cauri.NewID("pl_"), WorkspaceID: ws.ID, Slug: cauri.NewSlug(), Title: title, Amount: minor, Currency: cur,
		Active: true, Metadata: map[string]string{}, CreatedAt: now, UpdatedAt: now}
	if p.ExpiresAt != "" {
		if l.ExpiresAt, err = linkExpiry(p.ExpiresAt, now); err != nil {
			return nil, err
		}
	}
	if p.MaxPayments != "" {
		n, err := strconv.Atoi(p.MaxPayments)
		if err != nil || n < 1 || n > MaxLinkPayments {
			return nil, cauri.Errorf(cauri.EInvalid, "max_payments must be a whole number from 1 to %d (1: the link is paid once)", MaxLinkPayments)
		}
		l.MaxPayments = n
	}
	if strings.TrimSpace(p.Phone) != "" {
		if l.Phone, err = catalog.ParseInternationalPhone("phone", p.Phone); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata(p.Metadata); err != nil {
		return nil, err
	}
	if _, ok := p.Metadata[linkMetadataKey]; ok {
		return nil, cauri.Errorf(cauri.EInvalid, "metadata.%s is set by Cauri on the link's payments (the link's id); use another key", linkMetadataKey)
	}
	maps.Copy(l.Metadata, p.Metadata)
	// A link whose page could take no payment is refused, not created to
	// disappoint its first payer.
	methods, err := s.LinkMethods(ctx, l)
	if err != nil {
		return nil, err
	}
	if len(methods) == 0 {
		if l.Phone != "" {
			return nil, cauri.Errorf(cauri.EConflict, "No gateway of this workspace collects %s by Mobile Money in the country of %s: a link restricted to a number is paid by Mobile Money from that number", cur, l.Phone)
		}
		return nil, cauri.Errorf(cauri.EConflict, "No gateway of this workspace collects %s yet: connect an aggregator account (dashboard, Gateways) before creating a link, or its page could take no payment", cur)
	}
	return l, s.Store.CreateLink(ctx, l)
}

// linkExpiry reads a link's expires_at: RFC 3339, after now, within
// MaxLinkLifetime.
func linkExpiry(v string, now time.Time) (*time.Time, error) {
	t, err := parseExpiry(v)
	if err == nil {
		err = expiryWithin(t, now, 0, MaxLinkLifetime, "a year", "")
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// LinkUpdate is a PATCH of a link: nil fields are left as they are;
// ExpiresAt "" removes the expiry.
type LinkUpdate struct {
	Active    *bool
	ExpiresAt *string
}

// UpdateLink deactivates or reactivates a workspace's link, or changes its
// expiry. An expiry must be in the future (an expired link is reopened by
// a new one); reactivating an expired link leaves it expired.
func (s *Service) UpdateLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string, u LinkUpdate) (*cauri.PaymentLink, error) {
	if err := refuseTestMode(ws, keyLive); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	var expires *time.Time
	if u.ExpiresAt != nil && *u.ExpiresAt != "" {
		var err error
		if expires, err = linkExpiry(*u.ExpiresAt, now); err != nil {
			return nil, err
		}
	}
	return s.Store.UpdateLink(ctx, ws.ID, id, func(l *cauri.PaymentLink) error {
		if u.Active != nil {
			l.Active = *u.Active
		}
		if u.ExpiresAt != nil {
			l.ExpiresAt = expires
		}
		l.UpdatedAt = now
		return nil
	})
}

// SetLinkActive deactivates or reactivates one of the workspace's links
// (the dashboard's switch, the command line).
func (s *Service) SetLinkActive(ctx context.Context, workspaceID, id string, active bool) (*cauri.PaymentLink, error) {
	now := s.Now().UTC()
	return s.Store.UpdateLink(ctx, workspaceID, id, func(l *cauri.PaymentLink) error {
		l.Active, l.UpdatedAt = active, now
		return nil
	})
}

// LinkMethods lists the ways a link can be paid (as a live session of its
// amount would be). A link restricted to a number is paid by Mobile Money
// from that number: the operators of its country only, no card.
func (s *Service) LinkMethods(ctx context.Context, l *cauri.PaymentLink) ([]Method, error) {
	methods, err := s.Methods(ctx, &cauri.Session{WorkspaceID: l.WorkspaceID, Livemode: true, Currency: l.Currency}, "")
	if err != nil || l.Phone == "" {
		return methods, err
	}
	country, out := catalog.PhoneCountry(l.Phone), []Method{}
	for _, m := range methods {
		if m.Type == TypeMobileMoney && m.Flag == country {
			out = append(out, m)
		}
	}
	return out, nil
}

// Link states, as a link's page shows them.
const (
	LinkOpen     = "open"     // takes payments
	LinkInactive = "inactive" // deactivated by the merchant
	LinkExpired  = "expired"  // past its expires_at
	LinkUsedUp   = "used_up"  // max_payments payments succeeded
	LinkBusy     = "busy"     // the payments under way would fill max_payments: wait for one to end
)

// linkState is the state of a link given its use (nil: not read, for a
// link without a limit).
func linkState(l *cauri.PaymentLink, u *store.LinkUse, now time.Time) string {
	switch {
	case !l.Active:
		return LinkInactive
	case l.Expired(now):
		return LinkExpired
	case l.MaxPayments > 0 && u != nil && u.Completed >= l.MaxPayments:
		return LinkUsedUp
	case l.MaxPayments > 0 && u != nil && u.Completed+u.InFlight >= l.MaxPayments:
		return LinkBusy
	}
	return LinkOpen
}

// LinkState says whether a link's page takes a payment now, and if not why.
func (s *Service) LinkState(ctx context.Context, l *cauri.PaymentLink) (string, error) {
	var u *store.LinkUse
	if l.MaxPayments > 0 {
		var err error
		if u, err = s.Store.LinkUse(ctx, l); err != nil {
			return "", err
		}
	}
	return linkState(l, u, s.Now()), nil
}

// linkRefusal is the error of a payment a link's state refuses, with the
// state as its reason (the page words it in the customer's language).
func linkRefusal(state string) error {
	switch state {
	case LinkInactive:
		return cauri.Reasonf(cauri.EConflict, "link_inactive", "This payment link is no longer active")
	case LinkExpired:
		return cauri.Reasonf(cauri.EConflict, "link_expired", "This payment link has expired")
	case LinkUsedUp:
		return cauri.Reasonf(cauri.EConflict, "link_used_up", "This payment link has taken all the payments it accepts")
	case LinkBusy:
		return cauri.Reasonf(cauri.EConflict, "link_busy", "Other payments through this payment link are under way and would fill its limit; try again in a few minutes")
	}
	return nil
}

// wrongNumber refuses a payment of a link restricted to another number.
func wrongNumber() error {
	return cauri.Reasonf(cauri.EInvalid, "link_phone", "This payment link can only be paid from the phone number it was made for")
}

// admitAttempt is the admission of a new payment attempt a at now:
// payOnce; for the first gateway of a try (not a failover, which goes on
// with a try already admitted), the session's tries (tries); and for a
// session created through a link, the link's limit and number, judged
// under the link's lock on its use (the link's active state and expiry
// apply to new payers, on its page: a session already created is paid as
// any other).
//
// The limit is held where a payment starts, not where it settles: by then
// the customer's money has moved and cannot be refused. A payment under
// way holds its place until it ends, so at most max_payments can ever
// succeed; one that fails frees its place.
func admitAttempt(a *cauri.PaymentAttempt, now time.Time, first bool) func(*cauri.Session, store.Prior, *store.LinkUse) error {
	return func(sess *cauri.Session, prior store.Prior, u *store.LinkUse) error {
		if err := payOnce(sess, prior.Waiting, now); err != nil {
			return err
		}
		if first {
			if err := tries(prior, a, now); err != nil {
				return err
			}
		}
		if u == nil {
			return nil
		}
		l := u.Link
		if l.Phone != "" && (a.Country == "" || a.Phone != l.Phone) {
			return wrongNumber()
		}
		if l.MaxPayments > 0 {
			switch {
			case u.Completed >= l.MaxPayments:
				return linkRefusal(LinkUsedUp)
			case u.Completed+u.InFlight >= l.MaxPayments:
				return linkRefusal(LinkBusy)
			}
		}
		return nil
	}
}

// LinkPayment is what a customer fills in on a link's page.
type LinkPayment struct {
	Name, Email, Phone string
	GatewayID, Code    string          // the chosen method
	AuthCode           string          // the operator's code, for the methods that ask one first
	Billing            gateway.Billing // the card holder's address, for the cards that need one
}

// PayLink starts paying a link: a live session of the link's amount,
// attached to it with the customer's details, then its payment through the
// chosen method (as POST /checkout/initiate). The session is returned even
// when the payment could not start: the customer may try again on its page.
func (s *Service) PayLink(ctx context.Context, slug string, p LinkPayment) (*cauri.Session, error) {
	l, err := s.Store.LinkBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	// Read here so that a link that takes no payment creates no session;
	// the limit itself is held when the payment starts (admitAttempt).
	state, err := s.LinkState(ctx, l)
	if err != nil {
		return nil, err
	}
	if err := linkRefusal(state); err != nil {
		return nil, err
	}
	methods, err := s.LinkMethods(ctx, l)
	if err != nil {
		return nil, err
	}
	var chosen *Method
	for i := range methods {
		if methods[i].GatewayID == p.GatewayID && methods[i].Code == p.Code {
			chosen = &methods[i]
		}
	}
	if chosen == nil {
		return nil, cauri.Errorf(cauri.EInvalid, "Choose a payment method")
	}
	// The e-mail address is the customer's to give, except for a card,
	// whose aggregator page asks for it (Mobile Money customers are known
	// by their number).
	if strings.TrimSpace(p.Name) == "" || strings.TrimSpace(p.Phone) == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "Your name and phone number are required")
	}
	if chosen.Type == TypeCard && strings.TrimSpace(p.Email) == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "Your e-mail address is required to pay by card")
	}
	// The number must be of the method's country; a card takes any, in
	// international format.
	var phone string
	if chosen.Type == TypeCard {
		phone, err = catalog.ParseInternationalPhone("phone", p.Phone)
	} else {
		phone, err = catalog.ParsePhone("phone", p.Phone, chosen.Flag)
	}
	if err != nil {
		return nil, err
	}
	if l.Phone != "" && phone != l.Phone {
		return nil, wrongNumber()
	}
	ws, err := s.Store.Workspace(ctx, l.WorkspaceID)
	if err != nil {
		return nil, err
	}
	sess, err := newSession(ws, true, CreateParams{
		Amount: cauri.FormatAmount(l.Amount, l.Currency), Currency: string(l.Currency), CustomerName: p.Name, CustomerEmail: p.Email,
		CustomerPhone: phone, Description: l.Title,
	}, s.Now())
	if err != nil {
		return nil, err
	}
	// The link's metadata is copied onto each of its payments, with the
	// link's id (the link's own keys were held to the sessions' limits).
	maps.Copy(sess.Metadata, l.Metadata)
	sess.Metadata[linkMetadataKey] = l.ID
	sess.LinkID = l.ID
	if sess, _, err = s.Store.CreateSession(ctx, sess, nil); err != nil {
		return nil, err
	}
	_, err = s.Initiate(ctx, sess.ID, Payment{GatewayID: p.GatewayID, Code: p.Code, Phone: phone, AuthCode: p.AuthCode,
		Holder: Holder{Name: p.Name, Email: p.Email, Billing: p.Billing}})
	return sess, err
}

// LinkCheck is the check route's answer (SPEC section 2).
type LinkCheck struct {
	Success     bool             `json:"success"`
	Paid        bool             `json:"paid"`
	Status      string           `json:"status"`
	Transaction *LinkTransaction `json:"transaction,omitempty"`
}

// LinkTransaction is the payment that paid a link.
type LinkTransaction struct {
	ID            string      `json:"id"` // the session's
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	CustomerName  string      `json:"customerName"`
	CustomerEmail string      `json:"customerEmail"`
	PaidAt        *string     `json:"paidAt"`
}

// CheckLink says whether a link was paid: SUCCESS with the latest payment
// that succeeded; else the status of the latest payment that did not fail
// (a payment waiting on the customer's phone is checked with its
// aggregator on the way, at most every 8 seconds); else WAITING.
//
// Links take live payments only, so a test key finds none: it never reads
// a live payer's details.
func (s *Service) CheckLink(ctx context.Context, ws *cauri.Workspace, live bool, id string) (*LinkCheck, error) {
	if !live {
		return nil, cauri.Errorf(cauri.ENotFound, "Payment link not found in test mode: payment links take live payments only, check them with a production key")
	}
	l, err := s.Store.Link(ctx, ws.ID, id)
	if err != nil {
		return nil, err
	}
	paid, latest, err := s.Store.LinkSessions(ctx, l.ID)
	if err != nil {
		return nil, err
	}
	if paid == nil && latest != nil && latest.Status == cauri.SessionPending {
		if latest, err = s.Refresh(ctx, latest.ID); err != nil {
			return nil, err
		}
		if latest.Status == cauri.SessionSuccess {
			paid = latest
		}
	}
	out := &LinkCheck{Success: true, Status: "WAITING"}
	switch {
	case paid != nil:
		o := paid.Object(s.PayURL)
		out.Paid, out.Status = true, string(cauri.SessionSuccess)
		out.Transaction = &LinkTransaction{ID: paid.ID, Amount: o.Amount, CustomerName: paid.CustomerName, CustomerEmail: paid.CustomerEmail,
			Currency: string(paid.Currency), PaidAt: o.CompletedAt}
	case latest != nil && latest.Status != cauri.SessionFailed:
		out.Status = string(latest.Status)
	}
	return out, nil
}

// Link reads a payment link by its slug, with the workspace it pays.
func (s *Service) Link(ctx context.Context, slug string) (*cauri.PaymentLink, *cauri.Workspace, error) {
	l, err := s.Store.LinkBySlug(ctx, slug)
	if err != nil {
		return nil, nil, err
	}
	ws, err := s.Store.Workspace(ctx, l.WorkspaceID)
	return l, ws, err
}

// LinkWithPayments is a link and the number of its successful payments.
type LinkWithPayments struct {
	*cauri.PaymentLink
	Completed int
}

// Object is the link's public form; linkURL is the links' pages' base.
func (l LinkWithPayments) Object(linkURL string) cauri.PaymentLinkObject {
	return l.PaymentLink.Object(linkURL, l.Completed)
}

// GetLink reads one of the workspace's links (production keys only: 403
// test_mode otherwise, as creating one).
func (s *Service) GetLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (LinkWithPayments, error) {
	if err := refuseTestMode(ws, keyLive); err != nil {
		return LinkWithPayments{}, err
	}
	l, err := s.Store.Link(ctx, ws.ID, id)
	if err != nil {
		return LinkWithPayments{}, err
	}
	out, err := s.withPayments(ctx, []*cauri.PaymentLink{l})
	if err != nil {
		return LinkWithPayments{}, err
	}
	return out[0], nil
}

// Links list limits: the API's default page, and the largest.
const (
	DefaultLinkPage = 50
	MaxLinkPage     = 200
)

// Links lists a workspace's payment links, newest first: limit of them
// (1 to MaxLinkPage), after the link startingAfter when it is not empty
// (one of the workspace's; the last of the previous page). more reports
// whether older links follow.
func (s *Service) Links(ctx context.Context, ws *cauri.Workspace, keyLive bool, limit int, startingAfter string) (_ []LinkWithPayments, more bool, err error) {
	if err := refuseTestMode(ws, keyLive); err != nil {
		return nil, false, err
	}
	if limit < 1 || limit > MaxLinkPage {
		return nil, false, cauri.Errorf(cauri.EInvalid, "limit must be a whole number from 1 to %d", MaxLinkPage)
	}
	page := store.LinkPage{Limit: limit + 1}
	if startingAfter != "" {
		if page.After, err = s.Store.Link(ctx, ws.ID, startingAfter); cauri.ErrorCode(err) == cauri.ENotFound {
			return nil, false, cauri.Errorf(cauri.EInvalid, "starting_after %q is not a payment link of this workspace", cauri.Printable(startingAfter))
		} else if err != nil {
			return nil, false, err
		}
	}
	links, err := s.Store.Links(ctx, ws.ID, page)
	if err != nil {
		return nil, false, err
	}
	if len(links) > limit {
		links, more = links[:limit], true
	}
	out, err := s.withPayments(ctx, links)
	return out, more, err
}

func (s *Service) withPayments(ctx context.Context, links []*cauri.PaymentLink) ([]LinkWithPayments, error) {
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	counts, err := s.Store.LinkPayments(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]LinkWithPayments, len(links))
	for i, l := range links {
		out[i] = LinkWithPayments{PaymentLink: l, Completed: counts[l.ID]}
	}
	return out, nil
}

// State is the state of a listed link for its merchant: open, inactive,
// expired or used_up (a list does not look at the payments under way).
func (l LinkWithPayments) State(now time.Time) string {
	return linkState(l.PaymentLink, &store.LinkUse{Link: l.PaymentLink, Completed: l.Completed}, now)
}
