// Package catalog is Cauri's reference data, embedded in the binary: the
// countries it serves with their currency and Mobile Money operators, the
// card methods, and phone-number parsing per country (through the
// libphonenumber port). It does no I/O at run time.
package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/nyaruka/phonenumbers"
)

//go:embed countries.json
var countriesJSON []byte

// Country is a country Cauri serves.
type Country struct {
	Code        string         `json:"code"`         // ISO 3166-1 alpha-2
	CallingCode int            `json:"calling_code"` // checked against libphonenumber at load
	Name        string         `json:"name"`
	NameFR      string         `json:"name_fr"`
	Aliases     []string       `json:"aliases"`
	Currency    cauri.Currency `json:"currency"`
	Operators   []string       `json:"operators"` // operator keys
}

// Operator is a Mobile Money wallet, keyed like "orange_money".
type Operator struct {
	Key   string
	Name  string `json:"name"`
	Color string `json:"color"`
}

// Card is a card method, offered whatever the country.
type Card struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	Region string `json:"region"`
}

type data struct {
	Countries []Country            `json:"countries"`
	Operators map[string]*Operator `json:"operators"`
	Cards     []Card               `json:"cards"`
}

var cat = mustLoad()

func mustLoad() *data {
	var d data
	if err := json.Unmarshal(countriesJSON, &d); err != nil {
		panic("catalog: " + err.Error())
	}
	for k, op := range d.Operators {
		op.Key = k
	}
	for _, c := range d.Countries {
		if cc := phonenumbers.GetCountryCodeForRegion(c.Code); cc != c.CallingCode {
			panic(fmt.Sprintf("catalog: %s has calling code %d; libphonenumber says %d", c.Code, c.CallingCode, cc))
		}
		for _, k := range c.Operators {
			if d.Operators[k] == nil {
				panic(fmt.Sprintf("catalog: %s lists unknown operator %q", c.Code, k))
			}
		}
	}
	sort.Slice(d.Countries, func(i, j int) bool { return d.Countries[i].Code < d.Countries[j].Code })
	return &d
}

// Countries lists the served countries by code.
func Countries() []Country { return cat.Countries }

// Cards lists the card methods.
func Cards() []Card { return cat.Cards }

// OperatorByKey returns an operator, or nil.
func OperatorByKey(key string) *Operator { return cat.Operators[key] }

// LookupCountry finds a served country by its alpha-2 code (any case) or by
// one of its names (English, French or an alias, any case).
func LookupCountry(s string) (*Country, bool) {
	s = strings.TrimSpace(s)
	for i := range cat.Countries {
		c := &cat.Countries[i]
		if strings.EqualFold(c.Code, s) || strings.EqualFold(c.Name, s) || strings.EqualFold(c.NameFR, s) {
			return c, true
		}
		for _, a := range c.Aliases {
			if strings.EqualFold(a, s) {
				return c, true
			}
		}
	}
	return nil, false
}

// IsRegion reports whether s is an ISO 3166-1 alpha-2 code known to
// libphonenumber, served or not.
func IsRegion(s string) bool {
	return len(s) == 2 && phonenumbers.GetSupportedRegions()[strings.ToUpper(s)]
}

// ParseInternationalPhone checks a phone number written in international
// format ("+225 07 07 12 34 56", spaces, dots and dashes allowed) and
// returns it in E.164. It asks only that the number be possible for its
// country (the right length), not that its range be allocated today:
// numbering plans in the region change faster than the metadata.
func ParseInternationalPhone(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "00") {
		return "", cauri.Errorf(cauri.EInvalid, "%s must be in international format, starting with + and the country code (for example +2250707123456)", field)
	}
	if strings.HasPrefix(s, "00") {
		s = "+" + s[2:]
	}
	n, err := phonenumbers.Parse(s, "")
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", cauri.Errorf(cauri.EInvalid, "%s %q is not a possible phone number", field, s)
	}
	return phonenumbers.Format(n, phonenumbers.E164), nil
}

// ParsePhone checks a phone number of the given country (alpha-2): in
// national format ("07 07 12 34 56") or international ("+225 ..."), which
// must then be of that country. It returns the number in E.164.
func ParsePhone(field, s, country string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "00") {
		s = "+" + s[2:]
	}
	n, err := phonenumbers.Parse(s, strings.ToUpper(country))
	if err != nil || !phonenumbers.IsPossibleNumber(n) || phonenumbers.GetRegionCodeForNumber(n) != strings.ToUpper(country) {
		return "", cauri.Errorf(cauri.EInvalid, "%s %q is not a phone number of %s", field, s, country)
	}
	return phonenumbers.Format(n, phonenumbers.E164), nil
}

// NationalNumber is the national significant number of a number in E.164
// (without the country code nor a trunk prefix: 771234567 for
// +221771234567), "" when it names none.
func NationalNumber(e164 string) string {
	n, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return ""
	}
	return phonenumbers.GetNationalSignificantNumber(n)
}

// DisplayPhone is a number in E.164 grouped as people read it
// ("+221 77 123 45 67"), the number as it is when it cannot be read.
func DisplayPhone(e164 string) string {
	n, err := phonenumbers.Parse(e164, "")
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return e164
	}
	return phonenumbers.Format(n, phonenumbers.INTERNATIONAL)
}

// PhoneCountry is the country (alpha-2) of a number in E.164, "" when it
// names none.
func PhoneCountry(e164 string) string {
	n, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return ""
	}
	return phonenumbers.GetRegionCodeForNumber(n)
}
