package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

//go:embed prefixes.json
var prefixesJSON []byte

// Sources of a Detection.
const (
	SourcePrefix  = "prefix"         // the prefix table alone
	SourceCarrier = "carrier"        // libphonenumber's carrier data, no prefix having matched
	SourceBoth    = "prefix+carrier" // the prefix table, confirmed by the carrier data
)

// Agreement compares libphonenumber's carrier data with the prefix table.
type Agreement int8

const (
	CarrierUnknown   Agreement = iota // no prefix matched, or libphonenumber names no known carrier
	CarrierAgrees                     // both give the same operator (or both no wallet)
	CarrierDisagrees                  // they differ; the prefix table wins
)

// Detection is the Mobile Money operator guessed from a phone number.
type Detection struct {
	// Operator is the operator key ("orange_money"), or "" when the number
	// is unknown or its carrier has no wallet in the catalog. Wave is never
	// returned: it runs on any SIM.
	Operator string
	// Source is SourcePrefix, SourceCarrier or SourceBoth; "" when
	// Operator is "".
	Source string
	// Portable reports that the country has mobile number portability:
	// the operator is then only a guess the payer must be able to correct.
	Portable bool
	// Carrier is libphonenumber's carrier name for the number, "" if none.
	Carrier string
	// CarrierCheck says whether Carrier agrees with the prefix table.
	CarrierCheck Agreement
}

// plan is a country's numbering data, built once from prefixes.json.
type plan struct {
	callingCode  int32
	e164Prefix   string // "+" and the calling code
	trunkPrefix  string // national (trunk) prefix, "" if none
	portable     bool
	prefixes     map[string]string // national prefix -> operator key, "" = no wallet
	maxLen       int               // longest prefix
	carriers     map[string]string // libphonenumber carrier name -> operator key
	legacyLen    int               // NSN length of the former plan, 0 if none
	legacyPrefix string            // prepended to a former-plan NSN
}

// plans by country code, and the operators no number reveals (key -> why).
var plans, undetectable = mustLoadPlans()

func mustLoadPlans() (map[string]*plan, map[string]string) {
	var d struct {
		Sources      []string          `json:"sources"`
		Undetectable map[string]string `json:"undetectable"`
		Countries    map[string]struct {
			MNP    bool `json:"mnp"`
			Legacy *struct {
				NSNLength int    `json:"nsn_length"`
				Prefix    string `json:"prefix"`
			} `json:"legacy"`
			Prefixes map[string]string `json:"prefixes"`
			Carriers map[string]string `json:"carriers"`
			Sources  []string          `json:"sources"`
		} `json:"countries"`
	}
	dec := json.NewDecoder(bytes.NewReader(prefixesJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		panic("catalog: prefixes.json: " + err.Error())
	}
	fail := func(format string, a ...any) { panic("catalog: prefixes.json: " + fmt.Sprintf(format, a...)) }
	for k := range d.Undetectable {
		if cat.Operators[k] == nil {
			fail("unknown undetectable operator %q", k)
		}
	}
	ps := make(map[string]*plan, len(d.Countries))
	for _, c := range cat.Countries {
		src, ok := d.Countries[c.Code]
		if !ok {
			fail("no entry for %s", c.Code)
		}
		if len(src.Sources) == 0 {
			fail("%s has no sources", c.Code)
		}
		wallets := make(map[string]bool, len(c.Operators))
		for _, k := range c.Operators {
			wallets[k] = true
		}
		checkOp := func(what, k, op string) {
			switch {
			case op == "":
			case d.Undetectable[op] != "":
				fail("%s %s %q maps to %s, which cannot be detected", c.Code, what, k, op)
			case !wallets[op]:
				fail("%s %s %q maps to %q, not a wallet of %s", c.Code, what, k, op, c.Code)
			}
		}
		p := &plan{
			callingCode: int32(phonenumbers.GetCountryCodeForRegion(c.Code)),
			portable:    src.MNP,
			prefixes:    src.Prefixes,
			carriers:    src.Carriers,
		}
		if p.callingCode == 0 {
			fail("%s has no calling code", c.Code)
		}
		p.e164Prefix = "+" + strconv.Itoa(int(p.callingCode))
		p.trunkPrefix = phonenumbers.GetNddPrefixForRegion(c.Code, true)
		for k, op := range src.Prefixes {
			if !isDigits(k) {
				fail("%s prefix %q is not digits", c.Code, k)
			}
			checkOp("prefix", k, op)
			p.maxLen = max(p.maxLen, len(k))
		}
		for k, op := range src.Carriers {
			if strings.TrimSpace(k) == "" {
				fail("%s has an empty carrier name", c.Code)
			}
			checkOp("carrier", k, op)
		}
		if l := src.Legacy; l != nil {
			if l.NSNLength <= 0 || !isDigits(l.Prefix) {
				fail("%s has a bad legacy rule", c.Code)
			}
			p.legacyLen, p.legacyPrefix = l.NSNLength, l.Prefix
		}
		ps[c.Code] = p
	}
	if len(ps) != len(d.Countries) {
		fail("%d countries, the catalog serves %d", len(d.Countries), len(ps))
	}
	return ps, d.Undetectable
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// OperatorDetectable reports whether an operator can ever be inferred from
// a phone number; false for Wave, which runs on any SIM.
func OperatorDetectable(key string) bool {
	return cat.Operators[key] != nil && undetectable[key] == ""
}

// DetectOperator guesses the Mobile Money operator of a phone number of a
// served country (alpha-2), given in E.164 (as ParsePhone returns it). The
// longest national prefix of the country's table wins; libphonenumber's
// carrier name cross-checks it, and answers alone when no prefix matches.
// A number that is not a possible number of the country gives a zero
// Detection. In a country with number portability (Detection.Portable)
// the answer is only a guess.
func DetectOperator(country, e164 string) Detection {
	country = strings.ToUpper(country)
	p := plans[country]
	if p == nil {
		return Detection{}
	}
	n, nsn := p.parse(country, e164)
	if n == nil || !phonenumbers.IsPossibleNumber(n) {
		return Detection{}
	}
	d := Detection{Portable: p.portable}
	op, matched := p.lookup(nsn)
	if name, _ := phonenumbers.GetCarrierForNumber(n, "en"); name != "" {
		d.Carrier = name
		if cop, known := p.carriers[name]; known {
			switch {
			case !matched:
				op, d.Source = cop, SourceCarrier
			case cop == op:
				d.CarrierCheck, d.Source = CarrierAgrees, SourceBoth
			default:
				d.CarrierCheck = CarrierDisagrees
			}
		}
	}
	if op == "" {
		d.Source = ""
		return d
	}
	if d.Source == "" {
		d.Source = SourcePrefix
	}
	d.Operator = op
	return d
}

// parse reads a phone number of the plan's country and returns it with its
// national significant number, or nil. The canonical E.164 form ParsePhone
// returns is read directly, without the full parser, which costs ten times
// more than the rest of a detection; anything else, including a trunk 0
// left after the calling code, goes through the parser.
func (p *plan) parse(country, s string) (*phonenumbers.PhoneNumber, string) {
	nsn, ok := strings.CutPrefix(s, p.e164Prefix)
	if ok && isDigits(nsn) && len(nsn) <= phonenumbers.MAX_LENGTH_FOR_NSN &&
		(p.trunkPrefix == "" || !strings.HasPrefix(nsn, p.trunkPrefix)) {
		nn, _ := strconv.ParseUint(nsn, 10, 64)
		if nn == 0 {
			return nil, ""
		}
		zeros := int32(len(nsn) - len(strings.TrimLeft(nsn, "0")))
		leading := zeros > 0
		return &phonenumbers.PhoneNumber{
			CountryCode:          &p.callingCode,
			NationalNumber:       &nn,
			ItalianLeadingZero:   &leading,
			NumberOfLeadingZeros: &zeros,
		}, nsn
	}
	n, err := phonenumbers.Parse(s, country)
	if err != nil || n.GetCountryCode() != p.callingCode {
		return nil, ""
	}
	return n, phonenumbers.GetNationalSignificantNumber(n)
}

// lookup finds the longest prefix of a national significant number, reading
// a number of the former plan as its current form.
func (p *plan) lookup(nsn string) (op string, ok bool) {
	var buf [32]byte
	key := buf[:0]
	if p.legacyLen > 0 && len(nsn) == p.legacyLen {
		key = append(key, p.legacyPrefix...)
	}
	key = append(key, nsn...)
	for i := min(p.maxLen, len(key)); i > 0; i-- {
		if op, ok := p.prefixes[string(key[:i])]; ok {
			return op, true
		}
	}
	return "", false
}
