package api

import (
	"net/http"
	"strconv"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type webhookConfigResponse struct {
	Success         bool     `json:"success"`
	WebhookURL      *string  `json:"webhookUrl"`
	TestWebhookURL  *string  `json:"testWebhookUrl"`
	Events          []string `json:"events"`
	AvailableEvents []string `json:"available_events"`
}

// configResponse is the configuration as a key of mode live reads it: the
// events are that mode's selection.
func configResponse(c *cauri.WebhookConfig, live bool) webhookConfigResponse {
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return webhookConfigResponse{Success: true, WebhookURL: null(c.URL), TestWebhookURL: null(c.TestURL),
		Events: c.SelectedEvents(live), AvailableEvents: cauri.EventNames}
}

// getWebhookConfig is GET /v1/config/webhook.
func (s *API) getWebhookConfig(w http.ResponseWriter, r *http.Request, c *caller) error {
	cfg, err := s.Webhooks.Config(r.Context(), c.ws.ID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, configResponse(cfg, c.key.Live))
	return nil
}

type webhookConfigRequest struct {
	WebhookURL *string  `json:"webhookUrl"`
	Mode       string   `json:"mode"`
	Events     []string `json:"events"`
}

// patchWebhookConfig is PATCH /v1/config/webhook: it sets (or, with "",
// removes) the address of one mode, and the event selection.
func (s *API) patchWebhookConfig(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req webhookConfigRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	cfg, live, err := s.Webhooks.ConfigureMode(r.Context(), c.ws.ID, c.key.Live, req.Mode, req.WebhookURL, req.Events)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, configResponse(cfg, live))
	return nil
}

type deliveryList struct {
	Object string                 `json:"object"`
	Data   []cauri.DeliveryObject `json:"data"`
	Count  int                    `json:"count"`
}

// listDeliveries is GET /v1/webhooks/deliveries: the caller's mode only,
// newest first.
func (s *API) listDeliveries(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	f := store.DeliveryFilter{TransactionID: q.Get("transaction_id"), Status: q.Get("status"), Event: q.Get("event"), Limit: 50}
	if l := q.Get("limit"); l != "" {
		if f.Limit, err = strconv.Atoi(l); err != nil {
			f.Limit = -1 // refused as out of range
		}
	}
	list, err := s.Webhooks.Deliveries(r.Context(), c.ws.ID, c.livemode(), f)
	if err != nil {
		return err
	}
	out := deliveryList{Object: "list", Data: make([]cauri.DeliveryObject, len(list)), Count: len(list)}
	for i, d := range list {
		out.Data[i] = d.Object()
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getDelivery is GET /v1/webhooks/deliveries/{id}.
func (s *API) getDelivery(w http.ResponseWriter, r *http.Request, c *caller) error {
	d, err := s.Webhooks.Delivery(r.Context(), c.ws.ID, c.livemode(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d.Object())
	return nil
}

// resendDelivery is POST /v1/webhooks/deliveries/{id}/resend: one attempt
// now, with a fresh signature, to the current address, whatever the
// delivery's state; it answers once the receiver has (within 10 s).
func (s *API) resendDelivery(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.Limit(w, r, httpx.LimitResend, "per workspace", c.ws.ID, "rate_limited"); err != nil {
		return err
	}
	sent, err := s.Webhooks.Resend(r.Context(), c.ws.ID, c.livemode(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, sent.Object())
	return nil
}
