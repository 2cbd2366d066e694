// Package gateway describes the aggregators Cauri connects to: each
// provider's credentials, base URLs, and the codes it gives the operators it
// serves per country (embedded data with its sources). The connectors, one
// package per aggregator below this one, use it; so does the command line
// that adds a merchant's gateway.
//
// It imports the domain and the catalog.
package gateway

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
)

//go:embed providers.json
var providersJSON []byte

// Provider is what Cauri knows of one aggregator.
type Provider struct {
	Key                 string   `json:"key"`
	Name                string   `json:"name"`
	Credentials         []string `json:"credentials"` // required fields
	OptionalCredentials []string `json:"optional_credentials"`
	// CredentialSets are other complete sets of credentials the provider
	// takes instead of Credentials, for accounts on another of its APIs
	// (CinetPay's API v1: api_key and api_password); the set given tells
	// which API the gateway speaks.
	CredentialSets    [][]string                  `json:"credential_sets"`
	BaseURL           struct{ Live, Test string } `json:"base_url"`
	Collect           bool                        `json:"collect"`
	Payout            bool                        `json:"payout"`
	NoPayout          []string                    `json:"no_payout"`          // countries it collects in but cannot pay out to
	PayoutCredentials []string                    `json:"payout_credentials"` // optional credentials payouts need
	Cards             []string                    `json:"cards"`
	// CardBilling: the provider offers a card only with the card holder's
	// name, e-mail, phone number and postal address (CinetPay), which the
	// hosted page then asks for.
	CardBilling bool `json:"card_billing"`
	// OneCountry: an account of this provider is bound to one country (a
	// Wave wallet, an MTN MoMo country's API): a gateway serves one.
	OneCountry bool                         `json:"one_country"`
	Operators  map[string]map[string]string `json:"operators"` // country -> operator key -> provider code
	// Preauth lists the provider's operator codes that need a code from
	// the customer at initiation (Collection.Code), each with how the
	// customer gets it, in English and French (keys "en" and "fr"), as
	// the aggregator documents it; "{amount}" stands for the amount in
	// major units.
	Preauth map[string]map[string]string `json:"preauth"`
}

var providers = mustLoad()

func mustLoad() map[string]*Provider {
	var d struct{ Providers []*Provider }
	if err := json.Unmarshal(providersJSON, &d); err != nil {
		panic("gateway: " + err.Error())
	}
	out := map[string]*Provider{}
	for _, p := range d.Providers {
		for country, ops := range p.Operators {
			c, ok := catalog.LookupCountry(country)
			if !ok {
				panic(fmt.Sprintf("gateway: %s serves %s, not in the catalog", p.Key, country))
			}
			for op := range ops {
				if catalog.OperatorByKey(op) == nil || !containsString(c.Operators, op) {
					panic(fmt.Sprintf("gateway: %s serves %s in %s, not in the catalog", p.Key, op, country))
				}
			}
		}
		out[p.Key] = p
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// PaysOut reports whether the provider can send money to country.
func (p *Provider) PaysOut(country string) bool {
	return p.Payout && !containsString(p.NoPayout, country)
}

// CanPayOut reports whether a gateway of the provider with these
// credentials can send money (some providers need extra credentials).
func (p *Provider) CanPayOut(creds map[string]string) bool {
	for _, f := range p.PayoutCredentials {
		if strings.TrimSpace(creds[f]) == "" {
			return false
		}
	}
	return p.Payout
}

// Lookup returns a provider by key.
func Lookup(key string) (*Provider, bool) {
	p, ok := providers[strings.ToLower(strings.TrimSpace(key))]
	return p, ok
}

// Keys lists the provider keys, sorted.
func Keys() []string {
	var out []string
	for k := range providers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckCredentials refuses credentials missing a required field or
// carrying an unknown one.
func (p *Provider) CheckCredentials(creds map[string]string) error {
	set := p.CredentialSet(creds)
	for _, f := range set {
		if strings.TrimSpace(creds[f]) == "" {
			return cauri.Errorf(cauri.EInvalid, "%s credentials need %q (required: %s)", p.Name, f, p.requiredText())
		}
	}
	for f := range creds {
		if !containsString(set, f) && !containsString(p.OptionalCredentials, f) {
			return cauri.Errorf(cauri.EInvalid, "%s credentials have no field %q (known: %s)", p.Name, f,
				strings.Join(append(append([]string{}, set...), p.OptionalCredentials...), ", "))
		}
	}
	return nil
}

// CredentialSet is the set of required credentials creds are of: the
// first of CredentialSets of which creds name a field Credentials does
// not have, else Credentials.
func (p *Provider) CredentialSet(creds map[string]string) []string {
	for _, set := range p.CredentialSets {
		for _, f := range set {
			if _, ok := creds[f]; ok && !containsString(p.Credentials, f) {
				return set
			}
		}
	}
	return p.Credentials
}

// requiredText names the required credentials, each set of them.
func (p *Provider) requiredText() string {
	out := strings.Join(p.Credentials, ", ")
	for _, set := range p.CredentialSets {
		out += "; or " + strings.Join(set, ", ")
	}
	return out
}

// Routes lists the operators the provider serves in the given countries
// (all its countries when none is given), each enabled.
func (p *Provider) Routes(countries []string) ([]cauri.GatewayRoute, error) {
	if len(countries) == 0 {
		for c := range p.Operators {
			countries = append(countries, c)
		}
	}
	var out []cauri.GatewayRoute
	for _, raw := range countries {
		c, ok := catalog.LookupCountry(raw)
		if !ok || p.Operators[c.Code] == nil {
			return nil, cauri.Errorf(cauri.EInvalid, "%s does not serve country %q", p.Name, raw)
		}
		for op, code := range p.Operators[c.Code] {
			out = append(out, cauri.GatewayRoute{Country: c.Code, Operator: op, Code: code, Enabled: true})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Country != out[j].Country {
			return out[i].Country < out[j].Country
		}
		return out[i].Operator < out[j].Operator
	})
	return out, nil
}

// NewGateway checks a merchant's account of the provider and returns it as
// a gateway of the workspace: the credentials complete and known (each a
// short line of text), the countries served (all when none is given), each
// of their operators enabled, collecting where the provider collects and
// paying out where these credentials can. The command line and the
// dashboard add gateways through it.
func (p *Provider) NewGateway(workspaceID, name string, live bool, countries []string, creds map[string]string, now time.Time) (*cauri.Gateway, error) {
	if err := p.CheckCredentials(creds); err != nil {
		return nil, err
	}
	if check := credentialChecks[p.Key]; check != nil {
		if err := check(creds, live); err != nil {
			return nil, cauri.Errorf(cauri.EInvalid, "%s credentials: %s", p.Name, err.Error())
		}
	}
	for f, v := range creds {
		if _, err := cauri.CleanText("credential "+f, v, 4096); err != nil || strings.ContainsAny(v, "\r\n") {
			return nil, cauri.Errorf(cauri.EInvalid, "credential %q must be one line of text of at most 4096 characters", f)
		}
	}
	name, err := cauri.CleanText("name", name, 200)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = p.Name
	}
	if p.OneCountry && len(countries) != 1 {
		return nil, cauri.Errorf(cauri.EInvalid, "a %s account is bound to one country: give exactly one country (one gateway per country)", p.Name)
	}
	routes, err := p.Routes(countries)
	if err != nil {
		return nil, err
	}
	return &cauri.Gateway{
		ID: cauri.NewID("gw_"), WorkspaceID: workspaceID, Provider: p.Key, Name: name, Live: live,
		Collect: p.Collect, Payout: p.CanPayOut(creds), Enabled: true, Routes: routes, CreatedAt: now.UTC(),
	}, nil
}
