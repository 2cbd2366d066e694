package checkout

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// CreateLink validates and stores a payment link. Links exist in production
// only: a test key, or a workspace still in test mode, is refused with
// 403 test_mode.
func (s *Service) CreateLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, title, amount, currency string) (*cauri.PaymentLink, error) {
	if !ws.Livemode(keyLive) {
		return nil, cauri.Reasonf(cauri.EForbidden, "test_mode",
			"Payment links exist in production only: use the production secret key of a workspace whose identity is verified")
	}
	title, err := cauri.CleanText("title", title, maxNameLen)
	if err != nil {
		return nil, err
	}
	if title == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "title is required")
	}
	cur := ws.DefaultCurrency
	if currency != "" {
		if cur, err = cauri.ParseCurrency(currency); err != nil {
			return nil, err
		}
	}
	if amount == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "amount is required")
	}
	minor, err := cauri.ParseAmount("amount", amount, cur)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	l := &cauri.PaymentLink{ID: cauri.NewID("pl_"), WorkspaceID: ws.ID, Slug: cauri.NewSlug(), Title: title, Amount: minor, Currency: cur,
		Active: true, CreatedAt: now, UpdatedAt: now}
	// A link whose page could take no payment is refused, not created to
	// disappoint its first payer.
	methods, err := s.LinkMethods(ctx, l)
	if err != nil {
		return nil, err
	}
	if len(methods) == 0 {
		return nil, cauri.Errorf(cauri.EConflict, "No gateway of this workspace collects %s yet: connect an aggregator account (dashboard, Gateways) before creating a link, or its page could take no payment", cur)
	}
	return l, s.Store.CreateLink(ctx, l)
}

// LinkMethods lists the ways a link can be paid (as a live session of its
// amount would be).
func (s *Service) LinkMethods(ctx context.Context, l *cauri.PaymentLink) ([]Method, error) {
	return s.Methods(ctx, &cauri.Session{WorkspaceID: l.WorkspaceID, Livemode: true, Currency: l.Currency}, "")
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
	if !l.Active {
		return nil, cauri.Errorf(cauri.EConflict, "This payment link is no longer active")
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
	ws, err := s.Store.Workspace(ctx, l.WorkspaceID)
	if err != nil {
		return nil, err
	}
	sess, err := newSession(ws, true, CreateParams{
		Amount: cauri.FormatAmount(l.Amount, l.Currency), Currency: string(l.Currency), CustomerName: p.Name, CustomerEmail: p.Email,
		CustomerPhone: phone, Description: l.Title, Metadata: map[string]string{"payment_link": l.ID},
	}, s.Now())
	if err != nil {
		return nil, err
	}
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

// Links lists a workspace's payment links.
func (s *Service) Links(ctx context.Context, workspaceID string) ([]*cauri.PaymentLink, error) {
	return s.Store.Links(ctx, workspaceID)
}

// SetLinkActive deactivates or reactivates one of the workspace's links.
func (s *Service) SetLinkActive(ctx context.Context, workspaceID, id string, active bool) (*cauri.PaymentLink, error) {
	return s.Store.SetLinkActive(ctx, workspaceID, id, active, s.Now())
}
