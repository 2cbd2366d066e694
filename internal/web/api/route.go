package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// httpx.LimitRoute is SPEC section 8's 120 a minute per IP, for both routes.
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

type methodProviders struct {
	Method    string   `json:"method"`
	Providers []string `json:"providers"`
}

type rankedProvider struct {
	Provider string  `json:"provider"`
	Score    float64 `json:"score"`
}

type routeResponse struct {
	Routing          routeDecision     `json:"routing"`
	DetectedOperator *string           `json:"detectedOperator"`
	AvailableMethods []methodProviders `json:"availableMethods"`
	RankedProviders  []rankedProvider  `json:"rankedProviders"`
}

// route is POST /v1/route: the best provider for a payment context, its
// ordered fallbacks and how sure the engine is (docs/routing.md).
func (s *API) route(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var req routeRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	country, err := routeCountry(req.Country)
	if err != nil {
		return err
	}
	amount, err := httpx.JSONNumber("amount", req.Amount)
	if err != nil || amount == "" {
		return cauri.Errorf(cauri.EInvalid, "amount is required and must be a number")
	}
	cur := country.Currency
	if req.Currency != "" {
		if cur, err = cauri.ParseCurrency(req.Currency); err != nil {
			return err
		}
	}
	minor, err := cauri.ParseAmount("amount", amount, cur)
	if err != nil {
		return err
	}
	if len(req.AvailableProviders) == 0 {
		return cauri.Errorf(cauri.EInvalid, "availableProviders is required: a non-empty array of provider keys (%s)", strings.Join(gateway.Keys(), ", "))
	}
	asked, err := providerKeys(req.AvailableProviders)
	if err != nil {
		return err
	}
	operator := strings.ToLower(strings.TrimSpace(req.PaymentMethod))
	if operator != "" && !hasOperator(country, operator) && cardByKey(operator) == nil {
		return cauri.Errorf(cauri.EInvalid, "paymentMethod %q is not an operator of %s (%s) nor a card method", req.PaymentMethod, country.Code, strings.Join(country.Operators, ", "))
	}
	var detected *string
	if operator == "" && strings.TrimSpace(req.Phone) != "" {
		e164, err := catalog.ParsePhone("phone", req.Phone, country.Code)
		if err != nil {
			return err
		}
		if d := catalog.DetectOperator(country.Code, e164); d.Operator != "" {
			operator, detected = d.Operator, &d.Operator
		}
	}
	methods := availableMethods(country, asked)
	ctx := routing.Context{Country: country.Code, Operator: operator, Kind: routing.Collect, Amount: minor, Providers: serving(methods, asked, operator)}
	d := s.Router.Rank(ctx)
	out := routeResponse{DetectedOperator: detected, AvailableMethods: methods, RankedProviders: ranked(d),
		Routing: routeDecision{Provider: d.Provider, Reason: d.Reason, Alternates: d.Alternates, Confidence: d.Confidence}}
	if out.Routing.Alternates == nil {
		out.Routing.Alternates = []string{}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type routeOverview struct {
	Country          string            `json:"country"`
	Currency         cauri.Currency    `json:"currency"`
	AvailableMethods []methodProviders `json:"availableMethods"`
	RankedProviders  []rankedProvider  `json:"rankedProviders"`
}

// routeOverview is GET /v1/route: no key; a country's methods and its
// providers ranked by estimated reliability.
func (s *API) routeOverview(w http.ResponseWriter, r *http.Request) error {
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	country, err := routeCountry(q.Get("country"))
	if err != nil {
		return err
	}
	asked := gateway.Keys()
	if p := q.Get("providers"); p != "" {
		if asked, err = providerKeys(strings.Split(p, ",")); err != nil {
			return err
		}
	}
	cur := country.Currency
	if c := q.Get("currency"); c != "" {
		if cur, err = cauri.ParseCurrency(c); err != nil {
			return err
		}
	}
	methods := availableMethods(country, asked)
	d := s.Router.Rank(routing.Context{Country: country.Code, Kind: routing.Collect, Providers: serving(methods, asked, "")})
	httpx.WriteJSON(w, http.StatusOK, routeOverview{Country: country.Code, Currency: cur, AvailableMethods: methods, RankedProviders: ranked(d)})
	return nil
}

func routeCountry(code string) (*catalog.Country, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "country is required (an ISO 3166-1 alpha-2 code)")
	}
	c, ok := catalog.LookupCountry(code)
	if !ok || len(code) != 2 {
		if len(code) == 2 && catalog.IsRegion(code) {
			return nil, cauri.Errorf(cauri.EInvalid, "country %q is not served: no Mobile Money provider Cauri knows collects there", code)
		}
		return nil, cauri.Errorf(cauri.EInvalid, "country %q is not an ISO 3166-1 alpha-2 code of a served country", code)
	}
	return c, nil
}

// providerKeys checks the provider keys asked for (any case).
func providerKeys(keys []string) ([]string, error) {
	var out []string
	for _, k := range keys {
		k = strings.ToLower(strings.TrimSpace(k))
		if _, ok := gateway.Lookup(k); !ok {
			return nil, cauri.Errorf(cauri.EInvalid, "provider %q is unknown (known: %s)", k, strings.Join(gateway.Keys(), ", "))
		}
		out = append(out, k)
	}
	return out, nil
}

// availableMethods lists the country's operators and the card methods, each
// with the asked providers that collect it (a method no asked provider
// serves is left out).
func availableMethods(c *catalog.Country, asked []string) []methodProviders {
	out := []methodProviders{}
	add := func(method string, serves func(p *gateway.Provider) bool) {
		m := methodProviders{Method: method, Providers: []string{}}
		for _, k := range asked {
			if p, _ := gateway.Lookup(k); p.Collect && serves(p) && !slices.Contains(m.Providers, k) {
				m.Providers = append(m.Providers, k)
			}
		}
		if len(m.Providers) > 0 {
			sort.Strings(m.Providers)
			out = append(out, m)
		}
	}
	for _, op := range c.Operators {
		add(op, func(p *gateway.Provider) bool { return p.Operators[c.Code][op] != "" })
	}
	for _, card := range catalog.Cards() {
		add(card.Key, func(p *gateway.Provider) bool { return slices.Contains(p.Cards, card.Key) })
	}
	return out
}

// serving is the asked providers (in the order asked: the merchant's
// preference breaks ties) that serve a method, or, without one, any Mobile
// Money operator.
func serving(methods []methodProviders, asked []string, method string) []string {
	var out []string
	for _, p := range asked {
		for _, m := range methods {
			if (method == "" && cardByKey(m.Method) == nil || m.Method == method) && slices.Contains(m.Providers, p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
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

func hasOperator(c *catalog.Country, op string) bool { return slices.Contains(c.Operators, op) }

func cardByKey(key string) *catalog.Card {
	for _, c := range catalog.Cards() {
		if c.Key == key {
			return &c
		}
	}
	return nil
}
