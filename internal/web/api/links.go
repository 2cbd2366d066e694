package api

import (
	"encoding/json"
	"net/http"

	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type createLinkRequest struct {
	Title    string          `json:"title"`
	Amount   json.RawMessage `json:"amount"`
	Currency string          `json:"currency"`
}

// createLink is POST /v1/payment-links: 200 with the link (SPEC section 4).
func (s *API) createLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req createLinkRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	amount, err := httpx.JSONNumber("amount", req.Amount)
	if err != nil {
		return err
	}
	l, err := s.Checkout.CreateLink(r.Context(), c.ws, c.key.Live, req.Title, amount, req.Currency)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, l.Object(s.LinkURL))
	return nil
}

// checkLink is GET /v1/payment-links/{id}/check.
func (s *API) checkLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	out, err := s.Checkout.CheckLink(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
