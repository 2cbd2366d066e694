package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type createLinkRequest struct {
	Title       string          `json:"title"`
	Amount      json.RawMessage `json:"amount"`
	Currency    string          `json:"currency"`
	ExpiresAt   string          `json:"expires_at"`
	MaxPayments json.RawMessage `json:"max_payments"`
	Phone       string          `json:"phone"`
	Metadata    json.RawMessage `json:"metadata"`
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
	max, err := httpx.JSONNumber("max_payments", req.MaxPayments)
	if err != nil {
		return err
	}
	metadata, err := httpx.StringMap("metadata", req.Metadata)
	if err != nil {
		return err
	}
	l, err := s.Checkout.CreateLink(r.Context(), c.ws, c.key.Live, checkout.LinkParams{Title: req.Title, Amount: amount, Currency: req.Currency,
		ExpiresAt: req.ExpiresAt, MaxPayments: max, Phone: req.Phone, Metadata: metadata})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, l.Object(s.LinkURL, 0))
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

type linkList struct {
	Object  string                    `json:"object"`
	Data    []cauri.PaymentLinkObject `json:"data"`
	Count   int                       `json:"count"`
	HasMore bool                      `json:"has_more"`
}

// listLinks is GET /v1/payment-links: a page of the workspace's links,
// newest first.
func (s *API) listLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	limit := checkout.DefaultLinkPage
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil {
			limit = -1 // refused as out of range
		}
	}
	links, more, err := s.Checkout.Links(r.Context(), c.ws, c.key.Live, limit, q.Get("starting_after"))
	if err != nil {
		return err
	}
	out := linkList{Object: "list", Data: make([]cauri.PaymentLinkObject, len(links)), Count: len(links), HasMore: more}
	for i, l := range links {
		out.Data[i] = l.Object(s.LinkURL)
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getLink is GET /v1/payment-links/{id}.
func (s *API) getLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.Checkout.GetLink(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, l.Object(s.LinkURL))
	return nil
}

type updateLinkRequest struct {
	Active    json.RawMessage `json:"active"`
	ExpiresAt json.RawMessage `json:"expires_at"`
}

// updateLink is PATCH /v1/payment-links/{id}: active, expires_at (null
// removes the expiry); the fields left out stay as they are.
func (s *API) updateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req updateLinkRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	var u checkout.LinkUpdate
	if req.Active != nil {
		var active bool
		if isNull(req.Active) || json.Unmarshal(req.Active, &active) != nil {
			return cauri.Errorf(cauri.EInvalid, "active must be true or false")
		}
		u.Active = &active
	}
	if req.ExpiresAt != nil {
		expires := ""
		if !isNull(req.ExpiresAt) && (json.Unmarshal(req.ExpiresAt, &expires) != nil || expires == "") {
			return cauri.Errorf(cauri.EInvalid, "expires_at must be an RFC 3339 date and time (a string), or null to remove the expiry")
		}
		u.ExpiresAt = &expires
	}
	if u.Active == nil && u.ExpiresAt == nil {
		return cauri.Errorf(cauri.EInvalid, "Nothing to change: send active, expires_at or both")
	}
	if _, err := s.Checkout.UpdateLink(r.Context(), c.ws, c.key.Live, r.PathValue("id"), u); err != nil {
		return err
	}
	l, err := s.Checkout.GetLink(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, l.Object(s.LinkURL))
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// linkQR is GET /v1/payment-links/{id}/qr: the QR code of the link's page
// address, as SVG (the default) or PNG.
func (s *API) linkQR(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	format := q.Get("format")
	if format != "" && format != "svg" && format != "png" {
		return cauri.Errorf(cauri.EInvalid, "format must be svg or png")
	}
	l, err := s.Checkout.GetLink(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
	if err != nil {
		return err
	}
	return httpx.WriteQR(w, l.URL(s.LinkURL), format, l.ID)
}
