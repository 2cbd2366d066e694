package api

import (
	"net/http"
	"strconv"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/partner"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// The partner API (SPEC section 4, Partner; section 5, item 6): partner
// products provision merchants with a shared secret. Its paths and shapes
// are ours (the SPEC leaves them open); docs/partner.md describes them.

type partnerHandler func(w http.ResponseWriter, r *http.Request, p *store.Partner) error

// partner authenticates a partner call: 503 when the partner API is
// disabled (no CAURI_PARTNER_SECRET and no partner issued), 401 on a
// missing or wrong x-partner-secret (a wrong one counts as refused), 429
// beyond 120 calls a minute per partner. Every call is audited (actor
// partner:<id>), and so is every change it makes.
func (s *API) partner(h partnerHandler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.Partners.Authenticate(r.Context(), r.Header.Get("x-partner-secret"))
		if err == partner.ErrInvalidSecret {
			return s.Refused(r, err)
		}
		if err != nil {
			return err
		}
		if err := s.Limit(w, r, httpx.LimitPartner, "per partner", p.ID, ""); err != nil {
			return err
		}
		*r = *r.WithContext(store.WithActor(r.Context(), "partner:"+p.ID))
		err = h(w, r, p)
		outcome := "ok"
		if err != nil {
			outcome = cauri.ErrorCode(err)
		}
		if aerr := s.Partners.AuditCall(r.Context(), r.PathValue("id"), r.Method, r.Pattern, outcome); aerr != nil && err == nil {
			s.Logger.WarnContext(r.Context(), "partner audit", "err", aerr)
		}
		return err
	}
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

func merchantJSON(m *partner.Merchant) *merchantObject {
	o := &merchantObject{ID: m.ID, Object: "merchant", Name: m.Name, Verification: "pending", Livemode: m.Verified, Connect: m.Connect,
		DefaultCurrency: m.DefaultCurrency, TransfersEnabled: m.TransfersEnabled(),
		Webhook: configResponse(m.Webhook, true), CreatedAt: m.CreatedAt.UTC().Format(cauri.TimeFormat)}
	if m.Verified {
		o.Verification = "verified"
	}
	return o
}

type createMerchantRequest struct {
	Name            string   `json:"name"`
	Email           string   `json:"email"`
	Password        string   `json:"password"`
	DefaultCurrency string   `json:"default_currency"`
	WebhookURL      string   `json:"webhook_url"`
	Events          []string `json:"events"`
}

// createMerchant is POST /v1/partner/merchants (partner.CreateMerchant):
// the answer shows the merchant's keys and its owner's invitation link
// once.
func (s *API) createMerchant(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	var req createMerchantRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	m, err := s.Partners.CreateMerchant(r.Context(), p, partner.NewMerchant{Name: req.Name, Email: req.Email, Password: req.Password,
		DefaultCurrency: req.DefaultCurrency, WebhookURL: req.WebhookURL, Events: req.Events})
	if err != nil {
		return err
	}
	o := merchantJSON(m.Merchant)
	o.Keys, o.Owner = m.Keys, &merchantOwner{Email: m.OwnerEmail}
	if m.InvitationToken != "" {
		o.Owner.InvitationURL = s.DashboardURL + "/dashboard/invitations/" + m.InvitationToken
	}
	httpx.WriteJSON(w, http.StatusCreated, o)
	return nil
}

// listMerchants is GET /v1/partner/merchants: the partner's merchants,
// newest first, limit 1 to 200 (default 50).
func (s *API) listMerchants(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	q, err := httpx.Query(r)
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
	list, err := s.Partners.Merchants(r.Context(), p, limit)
	if err != nil {
		return err
	}
	out := struct {
		Object string            `json:"object"`
		Data   []*merchantObject `json:"data"`
		Count  int               `json:"count"`
	}{Object: "list", Data: []*merchantObject{}}
	for _, m := range list {
		out.Data = append(out.Data, merchantJSON(m))
	}
	out.Count = len(out.Data)
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getMerchant is GET /v1/partner/merchants/{id}.
func (s *API) getMerchant(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	m, err := s.Partners.Merchant(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, merchantJSON(m))
	return nil
}

type updateMerchantRequest struct {
	Name           *string  `json:"name"`
	WebhookURL     *string  `json:"webhook_url"`
	TestWebhookURL *string  `json:"test_webhook_url"`
	Events         []string `json:"events"`
}

// updateMerchant is PATCH /v1/partner/merchants/{id}
// (partner.UpdateMerchant).
func (s *API) updateMerchant(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.Partners.Workspace(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	var req updateMerchantRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	m, err := s.Partners.UpdateMerchant(r.Context(), ws, partner.Update{Name: req.Name, WebhookURL: req.WebhookURL,
		TestWebhookURL: req.TestWebhookURL, Events: req.Events})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, merchantJSON(m))
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

// addMerchantGateway is POST /v1/partner/merchants/{id}/gateways
// (partner.AddGateway): the credentials are only hinted at in the answer.
func (s *API) addMerchantGateway(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.Partners.Workspace(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	var req addGatewayRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	g, err := s.Partners.AddGateway(r.Context(), ws, gateways.New{Provider: req.Provider, Name: req.Name, Live: req.Live,
		Countries: req.Countries, Credentials: req.Credentials})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, gatewayObject{ID: g.ID, Object: "gateway", Provider: g.Provider, Name: g.Name, Live: g.Live,
		Collect: g.Collect, Payout: g.Payout, Enabled: g.Enabled, Routes: g.Routes, Credentials: g.CredentialHints,
		CreatedAt: g.CreatedAt.UTC().Format(cauri.TimeFormat)})
	return nil
}

// merchantVerification is GET /v1/partner/merchants/{id}/verification:
// whether the service has verified the merchant's identity (until then its
// live keys create test objects, SPEC section 1).
func (s *API) merchantVerification(w http.ResponseWriter, r *http.Request, p *store.Partner) error {
	ws, err := s.Partners.Workspace(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	status := "pending"
	if ws.Verified {
		status = "verified"
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"id": ws.ID, "object": "verification", "status": status, "livemode": ws.Verified})
	return nil
}

// partnerNoRoute answers any other path under /v1/partner/: 404 once the
// partner is authenticated (503 and 401 before, as on every partner path).
func (s *API) partnerNoRoute(w http.ResponseWriter, r *http.Request, _ *store.Partner) error {
	return s.NotFound(w, r)
}
