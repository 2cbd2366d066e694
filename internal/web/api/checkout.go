package api

import (
	"encoding/json"
	"net/http"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type createSessionRequest struct {
	Amount        json.RawMessage `json:"amount"`
	Currency      string          `json:"currency"`
	CustomerName  string          `json:"customer_name"`
	CustomerEmail string          `json:"customer_email"`
	CustomerPhone string          `json:"customer_phone"`
	Description   string          `json:"description"`
	SuccessURL    string          `json:"success_url"`
	CancelURL     string          `json:"cancel_url"`
	Metadata      json.RawMessage `json:"metadata"`
	MerchantName  string          `json:"merchant_name"`
	MerchantLogo  string          `json:"merchant_logo"`
	ExpiresAt     string          `json:"expires_at"`
}

// createSession is POST /v1/checkout/sessions: 201 with a new session, or
// 200 with Idempotent-Replayed: true when an Idempotency-Key repeats.
func (s *API) createSession(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req createSessionRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	amount, err := httpx.JSONNumber("amount", req.Amount)
	if err != nil {
		return err
	}
	metadata, err := httpx.StringMap("metadata", req.Metadata)
	if err != nil {
		return err
	}
	sess, replayed, err := s.Checkout.Create(r.Context(), c.ws, c.key.Live, checkout.CreateParams{
		Amount: amount, Currency: req.Currency, CustomerName: req.CustomerName, CustomerEmail: req.CustomerEmail,
		CustomerPhone: req.CustomerPhone, Description: req.Description, SuccessURL: req.SuccessURL, CancelURL: req.CancelURL,
		MerchantName: req.MerchantName, MerchantLogo: req.MerchantLogo, Metadata: metadata, ExpiresAt: req.ExpiresAt,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		status = http.StatusOK
	}
	httpx.WriteJSON(w, status, sess.Object(s.PayURL))
	return nil
}

// sessionStatus is GET /v1/checkout/sessions/{id}/status: the whole
// session, whose status, paid and livemode are the SPEC's fields.
// A public key may sit in a web page, so what it reads leaves out the
// customer's personal data and the merchant's metadata.
func (s *API) sessionStatus(w http.ResponseWriter, r *http.Request, c *caller) error {
	sess, err := s.ownSession(r, c)
	if err != nil {
		return err
	}
	obj := sess.Object(s.PayURL)
	if c.key.Kind == cauri.KeyPublic {
		obj.CustomerName, obj.CustomerEmail, obj.CustomerPhone, obj.Metadata = nil, nil, nil, map[string]string{}
	}
	httpx.WriteJSON(w, http.StatusOK, obj)
	return nil
}

type methodsResponse struct {
	ID       string            `json:"id"`
	Currency cauri.Currency    `json:"currency"`
	Methods  []checkout.Method `json:"methods"`
}

// sessionMethods is GET /v1/checkout/sessions/{id}/methods[?country=].
func (s *API) sessionMethods(w http.ResponseWriter, r *http.Request, c *caller) error {
	sess, err := s.ownSession(r, c)
	if err != nil {
		return err
	}
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	methods, err := s.Checkout.Methods(r.Context(), sess, q.Get("country"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, methodsResponse{ID: sess.ID, Currency: sess.Currency, Methods: methods})
	return nil
}

// ownSession reads the session named in the path, which must belong to the
// caller's workspace and mode.
func (s *API) ownSession(r *http.Request, c *caller) (*cauri.Session, error) {
	return s.Checkout.Get(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
}
