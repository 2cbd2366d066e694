package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type routeRequest struct {
	Country            string          `json:"country"`
	Amount             json.RawMessage `json:"amount"`
	AvailableProviders []string        `json:"availableProviders"`
	Currency           string          `json:"currency"`
	PaymentMethod      string          `json:"paymentMethod"`
	Phone              string          `json:"phone"`
}

type routeDecision struct {
	Provider   string   `json:"provider"`
	Reason     string   `json:"reason"`
	Alternates []string `json:"alternates"`
	Confidence float64  `json:"confidence"`
}

type rankedProvider struct {
	Provider string  `json:"provider"`
	Score    float64 `json:"score"`
}

type routeResponse struct {
	Routing          routeDecision             `json:"routing"`
	DetectedOperator *string                   `json:"detectedOperator"`
	AvailableMethods []routing.MethodProviders `json:"availableMethods"`
	RankedProviders  []rankedProvider          `json:"rankedProviders"`
}

// route is POST /v1/route: the best provider for a payment context, its
// ordered fallbacks and how sure the engine is (docs/routing.md).
func (s *API) route(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var req routeRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	amount, err := httpx.JSONNumber("amount", req.Amount)
	if err != nil {
		amount = "" // refused as missing: "amount is required and must be a number"
	}
	a, err := s.Router.Advise(routing.Ask{Country: req.Country, Amount: amount, Currency: req.Currency,
		Providers: req.AvailableProviders, PaymentMethod: req.PaymentMethod, Phone: req.Phone})
	if err != nil {
		return err
	}
	d := a.Decision
	out := routeResponse{AvailableMethods: a.Methods, RankedProviders: ranked(d),
		Routing: routeDecision{Provider: d.Provider, Reason: d.Reason, Alternates: d.Alternates, Confidence: d.Confidence}}
	if a.DetectedOperator != "" {
		out.DetectedOperator = &a.DetectedOperator
	}
	if out.Routing.Alternates == nil {
		out.Routing.Alternates = []string{}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type routeOverview struct {
	Country          string                    `json:"country"`
	Currency         cauri.Currency            `json:"currency"`
	AvailableMethods []routing.MethodProviders `json:"availableMethods"`
	RankedProviders  []rankedProvider          `json:"rankedProviders"`
}

// routeOverview is GET /v1/route: no key; a country's methods and its
// providers ranked by estimated reliability.
func (s *API) routeOverview(w http.ResponseWriter, r *http.Request) error {
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	var providers []string // all
	if p := q.Get("providers"); p != "" {
		providers = strings.Split(p, ",")
	}
	o, err := s.Router.Overview(q.Get("country"), providers, q.Get("currency"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, routeOverview{Country: o.Country, Currency: o.Currency, AvailableMethods: o.Methods, RankedProviders: ranked(o.Decision)})
	return nil
}

func ranked(d routing.Decision) []rankedProvider {
	out := []rankedProvider{}
	for _, s := range d.Ranked {
		score := s.Rate
		if s.Down {
			score = 0
		}
		out = append(out, rankedProvider{Provider: s.Provider, Score: float64(int(score*1000+0.5)) / 1000})
	}
	return out
}
