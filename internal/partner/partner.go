// Package partner is the service of partner products (SPEC section 4,
// Partner; section 5, item 6): it authenticates a partner by its secret,
// provisions a merchant whole (a workspace in test mode until the service
// verifies it, its owner or the owner's invitation, its webhook and its
// four keys, shown once), and reads, updates and adds gateways to the
// partner's own merchants only. Every call and every change is audited.
//
// It imports the domain, accounts (passwords), gateway (the providers'
// catalogue) and the store's types.
package partner

import (
	"context"
	"crypto/subtle"
	"strconv"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the service keeps and reads (*store.Store).
type Store interface {
	ActivePartners(ctx context.Context) (int, error)
	PartnerBySecret(ctx context.Context, secret string) (*store.Partner, error)
	Workspace(ctx context.Context, id string) (*cauri.Workspace, error)
	PartnerWorkspaces(ctx context.Context, partnerID string, limit int) ([]*cauri.Workspace, error)
	ProvisionWorkspace(ctx context.Context, p store.Provision) error
	UpdateWorkspace(ctx context.Context, id, name string, fn func(*cauri.WebhookConfig) error, now time.Time) (*cauri.Workspace, error)
	WebhookConfig(ctx context.Context, workspaceID string) (*cauri.WebhookConfig, error)
	Audit(ctx context.Context, now time.Time, action, workspaceID string, detail map[string]any) error
}

// URLChecker refuses a webhook address merchants may not use
// (*delivery.Guard).
type URLChecker interface {
	CheckURL(ctx context.Context, url string) error
}

// Service is the partner API's rules.
type Service struct {
	Store    Store
	Gateways *gateways.Service
	Guard    URLChecker
	// Secret is the single partner's secret (CAURI_PARTNER_SECRET; "":
	// only the partners the administration issued).
	Secret string
	Now    func() time.Time
}

// Default is the partner of Secret, the simple single-partner form.
var Default = &store.Partner{ID: "ptn_default", Name: "default"}

// ErrInvalidSecret is a partner secret that matches no partner: the caller
// counts it as a refused credential.
var ErrInvalidSecret = cauri.Errorf(cauri.EUnauthorized, "Invalid partner secret")

// Authenticate returns the partner of secret: EUnavailable when the
// partner API is disabled (no Secret and no partner issued), EUnauthorized
// when secret is missing, ErrInvalidSecret when it matches none.
func (s *Service) Authenticate(ctx context.Context, secret string) (*store.Partner, error) {
	if s.Secret == "" {
		n, err := s.Store.ActivePartners(ctx)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, cauri.Errorf(cauri.EUnavailable, "The partner API is disabled: no partner secret is configured")
		}
	}
	if secret == "" {
		return nil, cauri.Errorf(cauri.EUnauthorized, "Missing partner secret (x-partner-secret)")
	}
	if s.Secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(s.Secret)) == 1 {
		return Default, nil
	}
	if len(secret) > 128 {
		return nil, ErrInvalidSecret
	}
	p, err := s.Store.PartnerBySecret(ctx, secret)
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return nil, ErrInvalidSecret
	}
	return p, err
}

// AuditCall records a partner's call: its route and outcome, and the
// merchant it named (merchantID "" when none).
func (s *Service) AuditCall(ctx context.Context, merchantID, method, route, outcome string) error {
	if !cauri.IsID("ws_", merchantID) {
		merchantID = ""
	}
	return s.Store.Audit(ctx, s.Now(), "partner.call", merchantID, map[string]any{"method": method, "route": route, "outcome": outcome})
}

// Merchant is a merchant as the partner sees it.
type Merchant struct {
	*cauri.Workspace
	Webhook *cauri.WebhookConfig
}

// TransfersEnabled reports whether the merchant's live key may send
// transfers: verified, not a Connect merchant, transfers not closed.
func (m *Merchant) TransfersEnabled() bool { return !m.TransfersClosed && !m.Connect && m.Verified }

func (s *Service) merchant(ctx context.Context, ws *cauri.Workspace) (*Merchant, error) {
	cfg, err := s.Store.WebhookConfig(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	return &Merchant{Workspace: ws, Webhook: cfg}, nil
}

// Workspace reads a merchant p created; any other is not found.
func (s *Service) Workspace(ctx context.Context, p *store.Partner, id string) (*cauri.Workspace, error) {
	ws, err := s.Store.Workspace(ctx, id)
	if err == nil && ws.PartnerID != p.ID {
		err = cauri.Errorf(cauri.ENotFound, "Merchant not found")
	}
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return nil, cauri.Errorf(cauri.ENotFound, "Merchant %s not found", printable(id))
	}
	return ws, err
}

// Merchant reads a merchant p created, with its webhook.
func (s *Service) Merchant(ctx context.Context, p *store.Partner, id string) (*Merchant, error) {
	ws, err := s.Workspace(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s.merchant(ctx, ws)
}

func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.QuoteToASCII(s)
}

// NewMerchant is what a partner gives for a new merchant.
type NewMerchant struct {
	Name, Email     string
	Password        string // "": the owner is invited
	DefaultCurrency string
	WebhookURL      string
	Events          []string // nil: the default selection
}

// Provisioned is a new merchant with what is shown once: its keys in
// plain, and the token of its owner's invitation ("" when the owner was
// created with a password).
type Provisioned struct {
	*Merchant
	Keys            map[string]string
	OwnerEmail      string
	InvitationToken string
}

// CreateMerchant provisions a merchant for p: a workspace (in test mode
// until the service verifies its identity), its owner (a new user with the
// password given, or an invitation when none is; an address that has an
// account joins with it), its webhook, and its four keys. All of it is
// stored in one transaction, after every field is checked.
func (s *Service) CreateMerchant(ctx context.Context, p *store.Partner, in NewMerchant) (*Provisioned, error) {
	now := s.Now()
	name, err := cauri.CleanText("name", in.Name, 200)
	if err != nil {
		return nil, err
	}
	ws, err := cauri.NewWorkspace(name, now)
	if err != nil {
		return nil, err
	}
	email, err := cauri.NormalizeEmail(in.Email)
	if err != nil {
		return nil, cauri.Errorf(cauri.EInvalid, "email (the merchant's owner) must be an e-mail address")
	}
	if in.DefaultCurrency != "" {
		if ws.DefaultCurrency, err = cauri.ParseCurrency(in.DefaultCurrency); err != nil {
			return nil, err
		}
	}
	var hash string
	if in.Password != "" {
		if hash, err = accounts.HashPassword(in.Password, email, name); err != nil {
			return nil, err
		}
	}
	if in.WebhookURL != "" {
		if err := s.Guard.CheckURL(ctx, in.WebhookURL); err != nil {
			return nil, err
		}
	}
	var events []string
	if in.Events != nil {
		if events, err = cauri.ParseEvents(in.Events); err != nil {
			return nil, err
		}
	}
	ws.PartnerID = p.ID
	keys, plain := cauri.KeySet(ws.ID, now)
	prov := store.Provision{Workspace: ws, Keys: keys}
	if in.WebhookURL != "" || events != nil {
		prov.Webhook = &cauri.WebhookConfig{URL: in.WebhookURL, Events: events, TestEvents: events}
	}
	if hash != "" {
		prov.Owner, prov.PasswordHash = &cauri.User{ID: cauri.NewID("usr_"), Email: email, CreatedAt: now}, hash
	} else {
		prov.Token = accounts.NewToken()
		prov.Invitation = &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: ws.ID, Email: email, InvitedBy: "partner:" + p.ID,
			CreatedAt: now, ExpiresAt: now.Add(cauri.InvitationLifetime)}
	}
	if err := s.Store.ProvisionWorkspace(ctx, prov); err != nil {
		return nil, err
	}
	m, err := s.merchant(ctx, ws)
	if err != nil {
		return nil, err
	}
	return &Provisioned{Merchant: m, Keys: plain, OwnerEmail: email, InvitationToken: prov.Token}, nil
}

// Merchants lists p's merchants, newest first, at most limit.
func (s *Service) Merchants(ctx context.Context, p *store.Partner, limit int) ([]*Merchant, error) {
	list, err := s.Store.PartnerWorkspaces(ctx, p.ID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*Merchant, 0, len(list))
	for _, ws := range list {
		m, err := s.merchant(ctx, ws)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Update is a change to a merchant; nil fields stay as they are.
type Update struct {
	Name                       *string
	WebhookURL, TestWebhookURL *string // "" removes one
	Events                     []string
}

// UpdateMerchant changes ws (a merchant read with Workspace): its name,
// its live and test webhook addresses (as PATCH /v1/config/webhook) and
// its events, the same in both modes. Everything is checked before
// anything is saved.
func (s *Service) UpdateMerchant(ctx context.Context, ws *cauri.Workspace, in Update) (*Merchant, error) {
	var name string
	var err error
	if in.Name != nil {
		if name, err = cauri.CleanText("name", *in.Name, 200); err != nil {
			return nil, err
		}
		if name == "" {
			return nil, cauri.Errorf(cauri.EInvalid, "name cannot be empty")
		}
	}
	for _, u := range []*string{in.WebhookURL, in.TestWebhookURL} {
		if u != nil && *u != "" {
			if err := s.Guard.CheckURL(ctx, *u); err != nil {
				return nil, err
			}
		}
	}
	var events []string
	if in.Events != nil {
		if events, err = cauri.ParseEvents(in.Events); err != nil {
			return nil, err
		}
	}
	var webhook func(*cauri.WebhookConfig) error
	if in.WebhookURL != nil || in.TestWebhookURL != nil || in.Events != nil {
		webhook = func(c *cauri.WebhookConfig) error {
			if in.WebhookURL != nil {
				c.URL = *in.WebhookURL
			}
			if in.TestWebhookURL != nil {
				c.TestURL = *in.TestWebhookURL
			}
			if in.Events != nil {
				c.Events, c.TestEvents = events, events
			}
			return nil
		}
	}
	if ws, err = s.Store.UpdateWorkspace(ctx, ws.ID, name, webhook, s.Now()); err != nil {
		return nil, err
	}
	return s.merchant(ctx, ws)
}

// AddGateway adds a gateway to ws (a merchant read with Workspace), as
// every way in adds one (package gateways).
func (s *Service) AddGateway(ctx context.Context, ws *cauri.Workspace, in gateways.New) (*cauri.Gateway, error) {
	return s.Gateways.Add(ctx, ws, in)
}
