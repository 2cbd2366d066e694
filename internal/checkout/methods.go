package checkout

import (
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
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

// Methods lists the methods that can pay sess. country (an alpha-2 code in
// any case, or a country name) narrows the Mobile Money operators to one
// country; card methods are listed whatever the country. A valid code of a
// country Cauri does not serve yields the cards alone; anything else is
// invalid.
func (s *Service) Methods(sess *cauri.Session, country string) ([]Method, error) {
	countries := catalog.Countries()
	if country = strings.TrimSpace(country); country != "" {
		c, ok := catalog.LookupCountry(country)
		switch {
		case ok:
			countries = []catalog.Country{*c}
		case catalog.IsRegion(country):
			countries = nil
		default:
			return nil, cauri.Errorf(cauri.EInvalid, "country %q is neither an ISO 3166-1 alpha-2 code nor the name of a country Cauri serves", country)
		}
	}
	methods := []Method{}
	if sess.Livemode {
		// Live sessions are served by the workspace's own gateways, which a
		// later version connects; until then a live session has no method.
		return methods, nil
	}
	for _, c := range countries {
		for _, key := range c.Operators {
			op := catalog.OperatorByKey(key)
			methods = append(methods, Method{
				Code: strings.ToUpper(key + "_" + c.Code), GatewayID: SandboxGateway, Name: op.Name, Provider: SandboxGateway,
				Country: c.Name, Type: TypeMobileMoney, Flag: c.Code, Logo: LogoPath(key),
			})
		}
	}
	for _, card := range catalog.Cards() {
		methods = append(methods, Method{
			Code: strings.ToUpper(card.Key), GatewayID: SandboxGateway, Name: card.Name, Provider: SandboxGateway,
			Country: card.Region, Type: TypeCard, Logo: LogoPath(card.Key),
		})
	}
	return methods, nil
}

// LogoPath is where the service serves the icon of an operator or card.
func LogoPath(key string) string { return "/static/logos/" + key + ".svg" }
