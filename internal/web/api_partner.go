package web

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/store"
)

// The partner API (SPEC section 4, Partner; section 5, item 6): partner
// products provision merchants with a shared secret. Its paths and shapes
// are ours (the SPEC leaves them open); docs/partner.md describes them.

// defaultPartner is the partner of CAURI_PARTNER_SECRET, the simple
// single-partner form.
var defaultPartner = &store.Partner{ID: "ptn_default", Name: "default"}

type partnerHandler func(w http.ResponseWriter, r *http.Request, p *store.Partner) error

// partner authenticates a partner call: 503 when the partner API is
// disabled (no CAURI_PARTNER_SECRET and no partner issued), 401 on a
// missing or wrong x-partner-secret, 429 beyond 120 calls a minute per
// partner. Every call is audited (actor partner:<id>), and so is every
// change it makes.
func (s *Server) partner(h partnerHandler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.partnerOf(r)
		if err != nil {
			return err
		}
		if err := s.limit(w, r, limitPartner, "per partner", p.ID, ""); err != nil {
			return err
		}
		*r = *r.WithContext(store.WithActor(r.Context(), "partner:"+p.ID))
		err = h(w, r, p)
		outcome := "ok"
		if err != nil {
			outcome = cauri.ErrorCode(err)
		}
		merchant := r.PathValue("id")
		if !cauri.IsID("ws_", merchant) {
			merchant = ""
		}
		if aerr := s.Store.Audit(r.Context(), s.Now(), "partner.call", merchant,
			map[string]any{"method": r.Method, "route": r.Pattern, "outcome": outcome}); aerr != nil && err == nil {
			s.Logger.WarnContext(r.Context(), "partner audit", "err", aerr)
		}
		return err
	}
}

func (s *Server) partnerOf(r *http.Request) (*store.Partner, error) {
	if s.PartnerSecret == "" {
		n, err := s.Store.ActivePartners(r.Context())
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, cauri.Errorf(cauri.EUnavailable, "The partner API is disabled: no partner secret is configured")
		}
	}
	secret := r.Header.Get("x-partner-secret")
	if secret == "" {
		return nil, cauri.Errorf(cauri.EUnauthorized, "Missing partner secret (x-partner-secret)")
	}
	if s.PartnerSecret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(s.PartnerSecret)) == 1 {
		return defaultPartner, nil
	}
	if len(secret) > 128 {
		return nil, s.refused(r, cauri.Errorf(cauri.EUnauthorized, "Invalid partner secret"))
	}
	p, err := s.Store.PartnerBySecret(r.Context(), secret)
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return nil, s.refused(r, cauri.Errorf(cauri.EUnauthorized, "Invalid partner secret"))
	}
	return p, err
}

// merchantObject is a merchant as the partner API shows it.
type merchantObject struct {
	ID               string                `json:"id"`
	Object           string                `json:"object"`
	Name             string                `json:"name"`
	Verification     string                `json:"verification"` // pending | verified
	Livemode         bool                  `json:"livemode"`     // live keys create live objects
	Connect          bool                  `json:"connect"`
	DefaultCurrency  cauri.Currency        `json:"default_currency"`
	TransfersEnabled bool                  `json:"transfers_enabled"`
	Webhook          webhookConfigResponse `json:"webhook"`
	CreatedAt        string                `json:"created_at"`
	// Only in the answer that created it:
	Keys  map[string]string `json:"keys,omitempty"`
	Owner *merchantOwner    `json:"owner,omitempty"`
}

type merchantOwner struct {
	Email         string `json:"email"`
	InvitationURL string `json:"invitation_url,omitempty"`
}

func (s *Server) merchant(r *http.Request, ws *cauri.Workspace) (*merchantObject, error) {
	cfg, err := s.Store.WebhookConfig(r.Context(), ws.ID)
	if err != nil {
		return nil, err
	}
	m := &merchantObject{ID: ws.ID, Object: "merchant", Name: ws.Name, Verification: "pending", Livemode: ws.Verified, Connect: ws.Connect,
		DefaultCurrency: ws.DefaultCurrency, TransfersEnabled: !ws.TransfersClosed && !ws.Connect && ws.Verified,
		Webhook: configResponse(cfg, true), CreatedAt: ws.CreatedAt.UTC().Format(cauri.TimeFormat)}
	if ws.Verified {
		m.Verification = "verified"
	}
	return m, nil
}

// partnerMerchant reads a merchant the partner created; any other is 404.
func (s *Server) partnerMerchant(r *http.Request, p *store.Partner) (*cauri.Workspace, error) {
	ws, err := s.Store.Workspace(r.Context(), r.PathValue("id"))
	if err == nil && ws.PartnerID != p.ID {
		err = cauri.Errorf(cauri.ENotFound, "Merchant not found")
	}
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return nil, cauri.Errorf(cauri.ENotFound, "Merchant %s not found", printable(r.PathValue("id")))
	}
	return ws, err
}

func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.QuoteToASCII(s)
}

type createMerchantRequest struct {
	Name            string   `json:"name"`
	Email           string   `json:"email"`
	Password        string   `json:"password"`
	DefaultCurrency string   `json:"default_currency"`
	WebhookURL      string   `json:"webhook_url"`
	Events          []string `json:"events"`
}

// createMerchant is POST /v1/partner/merchants: a workspace (in test mode
// until the service verifies its identity), its owner (a new user with the
// password given, or an invitation link when none is; an address that has
// an account joins with it), its webhook, and its four keys, shown in this
// answer only. All of it is stored in one transaction.
func (s *Server) createMerchant(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	var req createMerchantRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	now := s.Now()
	name, err := cauri.CleanText("name", req.Name, 200)
	if err != nil {
		return err
	}
	ws, err := cauri.NewWorkspace(name, now)
	if err != nil {
		return err
	}
	email, err := cauri.NormalizeEmail(req.Email)
	if err != nil {
		return cauri.Errorf(cauri.EInvalid, "email (the merchant's owner) must be an e-mail address")
	}
	if req.DefaultCurrency != "" {
		if ws.DefaultCurrency, err = cauri.ParseCurrency(req.DefaultCurrency); err != nil {
			return err
		}
	}
	var hash string
	if req.Password != "" {
		if hash, err = accounts.HashPassword(req.Password, email, name); err != nil {
			return err
		}
	}
	if req.WebhookURL != "" {
		if err := s.Guard.CheckURL(r.Context(), req.WebhookURL); err != nil {
			return err
		}
	}
	var events []string
	if req.Events != nil {
		if events, err = cauri.ParseEvents(req.Events); err != nil {
			return err
		}
	}
	ws.PartnerID = p.ID
	keys, plain := cauri.KeySet(ws.ID, now)
	prov := store.Provision{Workspace: ws, Keys: keys}
	if req.WebhookURL != "" || events != nil {
		prov.Webhook = &cauri.WebhookConfig{URL: req.WebhookURL, Events: events, TestEvents: events}
	}
	owner := &merchantOwner{Email: email}
	if hash != "" {
		prov.Owner, prov.PasswordHash = &cauri.User{ID: cauri.NewID("usr_"), Email: email, CreatedAt: now}, hash
	} else {
		prov.Token = randomToken()
		prov.Invitation = &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: ws.ID, Email: email, InvitedBy: "partner:" + p.ID,
			CreatedAt: now, ExpiresAt: now.Add(cauri.InvitationLifetime)}
		owner.InvitationURL = s.dashboardURL() + "/dashboard/invitations/" + prov.Token
	}
	if err := s.Store.ProvisionWorkspace(r.Context(), prov); err != nil {
		return err
	}
	m, err := s.merchant(r, ws)
	if err != nil {
		return err
	}
	m.Keys, m.Owner = plain, owner
	writeJSON(w, http.StatusCreated, m)
	return nil
}

// listMerchants is GET /v1/partner/merchants: the partner's merchants,
// newest first, limit 1 to 200 (default 50).
func (s *Server) listMerchants(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			return cauri.Errorf(cauri.EInvalid, "limit must be a whole number from 1 to 200")
		}
		limit = n
	}
	list, err := s.Store.PartnerWorkspaces(r.Context(), p.ID, limit)
	if err != nil {
		return err
	}
	out := struct {
		Object string            `json:"object"`
		Data   []*merchantObject `json:"data"`
		Count  int               `json:"count"`
	}{Object: "list", Data: []*merchantObject{}}
	for _, ws := range list {
		m, err := s.merchant(r, ws)
		if err != nil {
			return err
		}
		out.Data = append(out.Data, m)
	}
	out.Count = len(out.Data)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getMerchant is GET /v1/partner/merchants/{id}.
func (s *Server) getMerchant(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.partnerMerchant(r, p)
	if err != nil {
		return err
	}
	m, err := s.merchant(r, ws)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

type updateMerchantRequest struct {
	Name           *string  `json:"name"`
	WebhookURL     *string  `json:"webhook_url"`
	TestWebhookURL *string  `json:"test_webhook_url"`
	Events         []string `json:"events"`
}

// updateMerchant is PATCH /v1/partner/merchants/{id}: the name, the live
// and test webhook addresses ("" removes one; public HTTPS only, as PATCH
// /v1/config/webhook) and the events. Everything is checked before
// anything is saved.
func (s *Server) updateMerchant(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.partnerMerchant(r, p)
	if err != nil {
		return err
	}
	var req updateMerchantRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	var name string
	if req.Name != nil {
		if name, err = cauri.CleanText("name", *req.Name, 200); err != nil {
			return err
		}
		if name == "" {
			return cauri.Errorf(cauri.EInvalid, "name cannot be empty")
		}
	}
	for _, u := range []*string{req.WebhookURL, req.TestWebhookURL} {
		if u != nil && *u != "" {
			if err := s.Guard.CheckURL(r.Context(), *u); err != nil {
				return err
			}
		}
	}
	var events []string
	if req.Events != nil {
		if events, err = cauri.ParseEvents(req.Events); err != nil {
			return err
		}
	}
	var webhook func(*cauri.WebhookConfig) error
	if req.WebhookURL != nil || req.TestWebhookURL != nil || req.Events != nil {
		webhook = func(c *cauri.WebhookConfig) error {
			if req.WebhookURL != nil {
				c.URL = *req.WebhookURL
			}
			if req.TestWebhookURL != nil {
				c.TestURL = *req.TestWebhookURL
			}
			if req.Events != nil { // a partner sets up both modes alike
				c.Events, c.TestEvents = events, events
			}
			return nil
		}
	}
	if ws, err = s.Store.UpdateWorkspace(r.Context(), ws.ID, name, webhook, s.Now()); err != nil {
		return err
	}
	m, err := s.merchant(r, ws)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

type addGatewayRequest struct {
	Provider    string            `json:"provider"`
	Name        string            `json:"name"`
	Live        bool              `json:"live"`
	Countries   []string          `json:"countries"`
	Credentials map[string]string `json:"credentials"`
}

type gatewayObject struct {
	ID          string               `json:"id"`
	Object      string               `json:"object"`
	Provider    string               `json:"provider"`
	Name        string               `json:"name"`
	Live        bool                 `json:"live"`
	Collect     bool                 `json:"collect"`
	Payout      bool                 `json:"payout"`
	Enabled     bool                 `json:"enabled"`
	Routes      []cauri.GatewayRoute `json:"routes"`
	Credentials map[string]string    `json:"credentials"` // hints: the last 4 characters
	CreatedAt   string               `json:"created_at"`
}

// addMerchantGateway is POST /v1/partner/merchants/{id}/gateways: one of
// the merchant's aggregator accounts, checked as the dashboard and the
// command line check it; the credentials are sealed and only hinted at in
// the answer. A Connect merchant collects through the platform's gateways:
// 403.
func (s *Server) addMerchantGateway(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.partnerMerchant(r, p)
	if err != nil {
		return err
	}
	var req addGatewayRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if ws.Connect {
		return cauri.Errorf(cauri.EForbidden, "A Connect merchant collects through the service's platform gateways; it adds none of its own")
	}
	prov, ok := gateway.Lookup(req.Provider)
	if !ok {
		return cauri.Errorf(cauri.EInvalid, "provider must be one of %s", strings.Join(gateway.Keys(), ", "))
	}
	g, err := prov.NewGateway(ws.ID, req.Name, req.Live, req.Countries, req.Credentials, s.Now())
	if err != nil {
		return err
	}
	if err := s.Store.CreateGateway(r.Context(), g, req.Credentials); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, gatewayObject{ID: g.ID, Object: "gateway", Provider: g.Provider, Name: g.Name, Live: g.Live,
		Collect: g.Collect, Payout: g.Payout, Enabled: g.Enabled, Routes: g.Routes, Credentials: g.CredentialHints,
		CreatedAt: g.CreatedAt.UTC().Format(cauri.TimeFormat)})
	return nil
}

// merchantVerification is GET /v1/partner/merchants/{id}/verification:
// whether the service has verified the merchant's identity (until then its
// live keys create test objects, SPEC section 1).
func (s *Server) merchantVerification(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.partnerMerchant(r, p)
	if err != nil {
		return err
	}
	status := "pending"
	if ws.Verified {
		status = "verified"
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": ws.ID, "object": "verification", "status": status, "livemode": ws.Verified})
	return nil
}

// partnerNoRoute answers any other path under /v1/partner/: 404 once the
// partner is authenticated (503 and 401 before, as on every partner path).
func (s *Server) partnerNoRoute(w http.ResponseWriter, r *http.Request, _ *store.Partner) error {
	return s.notFound(w, r)
}
