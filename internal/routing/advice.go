package routing

import (
	"slices"
	"sort"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Ask is a merchant's question to the engine (POST /v1/route): which of
// these providers for this payment. Amount is the JSON number's text ("":
// missing or not a number).
type Ask struct {
	Country, Amount, Currency string
	Providers                 []string // provider keys, any case, in the merchant's order of preference
	PaymentMethod, Phone      string   // an operator or card key; or the payer's number, to detect the operator
}

// Advice is the engine's answer: its decision, the operator read from the
// phone number (""), and the country's methods with the asked providers
// that collect each.
type Advice struct {
	Decision         Decision
	DetectedOperator string
	Methods          []MethodProviders
}

// MethodProviders is a payment method (an operator or a card) and the
// providers that collect it.
type MethodProviders struct {
	Method    string   `json:"method"`
	Providers []string `json:"providers"`
}

// Advise checks an Ask in order (country, amount, currency, providers,
// method, phone) and ranks the providers that serve its method, or, without
// one, any Mobile Money operator of the country.
func (r *Router) Advise(a Ask) (*Advice, error) {
	country, err := servedCountry(a.Country)
	if err != nil {
		return nil, err
	}
	if a.Amount == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "amount is required and must be a number")
	}
	cur := country.Currency
	if a.Currency != "" {
		if cur, err = cauri.ParseCurrency(a.Currency); err != nil {
			return nil, err
		}
	}
	minor, err := cauri.ParseAmount("amount", a.Amount, cur)
	if err != nil {
		return nil, err
	}
	if len(a.Providers) == 0 {
		return nil, cauri.Errorf(cauri.EInvalid, "availableProviders is required: a non-empty array of provider keys (%s)", strings.Join(gateway.Keys(), ", "))
	}
	asked, err := providerKeys(a.Providers)
	if err != nil {
		return nil, err
	}
	operator := strings.ToLower(strings.TrimSpace(a.PaymentMethod))
	if operator != "" && !slices.Contains(country.Operators, operator) && cardByKey(operator) == nil {
		return nil, cauri.Errorf(cauri.EInvalid, "paymentMethod %q is not an operator of %s (%s) nor a card method", a.PaymentMethod, country.Code, strings.Join(country.Operators, ", "))
	}
	out := &Advice{}
	if operator == "" && strings.TrimSpace(a.Phone) != "" {
		e164, err := catalog.ParsePhone("phone", a.Phone, country.Code)
		if err != nil {
			return nil, err
		}
		if d := catalog.DetectOperator(country.Code, e164); d.Operator != "" {
			operator, out.DetectedOperator = d.Operator, d.Operator
		}
	}
	out.Methods = availableMethods(country, asked)
	out.Decision = r.Rank(Context{Country: country.Code, Operator: operator, Kind: Collect, Amount: minor, Providers: serving(out.Methods, asked, operator)})
	return out, nil
}

// Overview is a country's methods and its providers ranked (GET /v1/route).
type Overview struct {
	Country  string
	Currency cauri.Currency
	Methods  []MethodProviders
	Decision Decision
}

// Overview ranks the providers (nil: every one known) for a country's
// Mobile Money, in its currency unless another is given.
func (r *Router) Overview(countryCode string, providers []string, currency string) (*Overview, error) {
	country, err := servedCountry(countryCode)
	if err != nil {
		return nil, err
	}
	asked := gateway.Keys()
	if providers != nil {
		if asked, err = providerKeys(providers); err != nil {
			return nil, err
		}
	}
	cur := country.Currency
	if currency != "" {
		if cur, err = cauri.ParseCurrency(currency); err != nil {
			return nil, err
		}
	}
	methods := availableMethods(country, asked)
	d := r.Rank(Context{Country: country.Code, Kind: Collect, Providers: serving(methods, asked, "")})
	return &Overview{Country: country.Code, Currency: cur, Methods: methods, Decision: d}, nil
}

func servedCountry(code string) (*catalog.Country, error) {
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
func availableMethods(c *catalog.Country, asked []string) []MethodProviders {
	out := []MethodProviders{}
	add := func(method string, serves func(p *gateway.Provider) bool) {
		m := MethodProviders{Method: method, Providers: []string{}}
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
func serving(methods []MethodProviders, asked []string, method string) []string {
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

func cardByKey(key string) *catalog.Card {
	for _, c := range catalog.Cards() {
		if c.Key == key {
			return &c
		}
	}
	return nil
}
