package checkout

import (
	"context"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Method is one way to pay a session, as the methods route lists it.
type Method struct {
	Code      string `json:"code"` // the serving gateway's own operator code
	GatewayID string `json:"gatewayId"`
	Name      string `json:"name"`
	Provider  string `json:"provider"`
	Country   string `json:"country"`
	Type      string `json:"type"` // MOBILE_MONEY or CARD
	Flag      string `json:"flag"` // country code; empty for cards
	Operator  string `json:"-"`    // the operator's key (catalog); empty for cards
	Logo      string `json:"logo"`
}

// Method types.
const (
	TypeMobileMoney = "MOBILE_MONEY"
	TypeCard        = "CARD"
)

// SandboxGateway is the gateway that serves every test session: it offers
// every operator of the catalog and the card methods, and settles through
// the simulate buttons of the hosted page.
const SandboxGateway = "sandbox"

// Methods lists the methods that can pay sess: Mobile Money operators of
// the countries that use the session's currency, narrowed to one country
// when country (an alpha-2 code in any case, or a country name) is given,
// and the card methods whatever the country. A valid code of a country
// Cauri does not serve yields the cards alone; anything else is invalid.
//
// A live session is served by the workspace's gateways: every enabled
// operator of every enabled gateway that collects with live credentials,
// each under that gateway's own code (two gateways serving one operator
// give two methods). A test session is served by the sandbox gateway.
func (s *Service) Methods(ctx context.Context, sess *cauri.Session, country string) ([]Method, error) {
	want := ""
	if country = strings.TrimSpace(country); country != "" {
		c, ok := catalog.LookupCountry(country)
		switch {
		case ok:
			want = c.Code
		case catalog.IsRegion(country):
			want = "--" // a real country without operators here: cards only
		default:
			return nil, cauri.Errorf(cauri.EInvalid, "country %q is neither an ISO 3166-1 alpha-2 code nor the name of a country Cauri serves", country)
		}
	}
	serves := func(code string) (*catalog.Country, bool) {
		c, ok := catalog.LookupCountry(code)
		return c, ok && (want == "" || want == c.Code) && c.Currency == sess.Currency
	}
	methods := []Method{}
	if !sess.Livemode {
		for _, c := range catalog.Countries() {
			if _, ok := serves(c.Code); !ok {
				continue
			}
			for _, key := range c.Operators {
				methods = append(methods, Method{
					Code: strings.ToUpper(key + "_" + c.Code), GatewayID: SandboxGateway, Name: catalog.OperatorByKey(key).Name,
					Provider: SandboxGateway, Country: c.Name, Type: TypeMobileMoney, Flag: c.Code, Operator: key, Logo: LogoPath(key),
				})
			}
		}
		for _, card := range catalog.Cards() {
			methods = append(methods, cardMethod(card, SandboxGateway, SandboxGateway))
		}
		return methods, nil
	}
	gateways, err := s.gateways(ctx, sess)
	if err != nil {
		return nil, err
	}
	cardFrom := map[string]*cauri.Gateway{}
	for _, g := range gateways {
		if !g.Enabled || !g.Collect || !g.Live {
			continue
		}
		for _, r := range g.Routes {
			c, ok := serves(r.Country)
			if !r.Enabled || !ok {
				continue
			}
			methods = append(methods, Method{
				Code: r.Code, GatewayID: g.ID, Name: catalog.OperatorByKey(r.Operator).Name, Provider: g.Provider,
				Country: c.Name, Type: TypeMobileMoney, Flag: c.Code, Operator: r.Operator, Logo: LogoPath(r.Operator),
			})
		}
		if p, ok := gateway.Lookup(g.Provider); ok {
			for _, key := range p.Cards {
				if cardFrom[key] == nil {
					cardFrom[key] = g
				}
			}
		}
	}
	for _, card := range catalog.Cards() {
		if g := cardFrom[card.Key]; g != nil {
			methods = append(methods, cardMethod(card, g.ID, g.Provider))
		}
	}
	return methods, nil
}

func cardMethod(card catalog.Card, gatewayID, provider string) Method {
	return Method{Code: strings.ToUpper(card.Key), GatewayID: gatewayID, Name: card.Name, Provider: provider,
		Country: card.Region, Type: TypeCard, Logo: LogoPath(card.Key)}
}

// LogoPath is where the service serves the icon of an operator or card.
func LogoPath(key string) string { return "/static/logos/" + key + ".svg" }
