package cauri

import (
	"math/big"
	"strconv"
	"strings"
)

// Currency is an ISO 4217 code in upper case.
type Currency string

// Currencies lists the accepted currencies (SPEC section 1).
var Currencies = []Currency{
	"XOF", "XAF", "GHS", "NGN", "KES", "TZS", "UGX", "RWF", "ZMW", "MWK", "CDF", "ETB", "MZN",
	"ZAR", "EGP", "MAD", "GNF", "SLE", "LRD", "GMD", "MGA", "MUR", "USD", "EUR", "GBP",
}

// zeroDecimal lists the currencies without minor units (SPEC section 1).
var zeroDecimal = map[Currency]bool{
	"XOF": true, "XAF": true, "GNF": true, "UGX": true, "RWF": true,
	"CDF": true, "MGA": true, "KMF": true, "DJF": true, "BIF": true,
}

// DefaultCurrency is used when a workspace has no default of its own.
const DefaultCurrency Currency = "XOF"

// MaxAmount caps an amount in major units: far above any real payment, and
// with two decimals still far below int64 overflow in sums.
const MaxAmount int64 = 1_000_000_000_000

// maxAmountText bounds the length of an amount as written, so that parsing
// an absurd literal costs nothing.
const maxAmountText = 40

// ParseCurrency accepts an accepted currency code in any case.
func ParseCurrency(s string) (Currency, error) {
	c := Currency(strings.ToUpper(strings.TrimSpace(s)))
	for _, a := range Currencies {
		if a == c {
			return c, nil
		}
	}
	return "", Errorf(EInvalid, "currency %q is not accepted; use one of %s", s, currencyList())
}

func currencyList() string {
	s := make([]string, len(Currencies))
	for i, c := range Currencies {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// Exponent is the number of decimals of the currency's minor unit.
func (c Currency) Exponent() int {
	if zeroDecimal[c] {
		return 0
	}
	return 2
}

// ParseAmount converts a decimal amount in major units, as written in a JSON
// number (for example "1500", "12.5" or "1e3"), into minor units of c.
// It never goes through float64, so 0.1 + 0.2 problems cannot happen.
func ParseAmount(field, number string, c Currency) (int64, error) {
	if len(number) > maxAmountText {
		return 0, Errorf(EInvalid, "%s is too large", field)
	}
	r, ok := new(big.Rat).SetString(number)
	if !ok {
		return 0, Errorf(EInvalid, "%s must be a number", field)
	}
	if r.Sign() <= 0 {
		return 0, Errorf(EInvalid, "%s must be greater than 0", field)
	}
	if r.Cmp(new(big.Rat).SetInt64(MaxAmount)) > 0 {
		return 0, Errorf(EInvalid, "%s is too large; at most %d", field, MaxAmount)
	}
	exp := c.Exponent()
	minor := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	if !minor.IsInt() {
		if exp == 0 {
			return 0, Errorf(EInvalid, "%s must be a whole number for %s, which has no minor unit", field, c)
		}
		return 0, Errorf(EInvalid, "%s has more than %d decimals for %s", field, exp, c)
	}
	return minor.Num().Int64(), nil
}

// FormatAmount writes minor units of c as a decimal number in major units,
// without trailing zeros: 150050 XOF -> "150050", 1550 GHS -> "15.5".
func FormatAmount(minor int64, c Currency) string {
	exp := c.Exponent()
	if exp == 0 {
		return strconv.FormatInt(minor, 10)
	}
	neg := minor < 0
	if neg {
		minor = -minor
	}
	div := int64(1)
	for range exp {
		div *= 10
	}
	s := strconv.FormatInt(minor/div, 10)
	if frac := minor % div; frac != 0 {
		f := strconv.FormatInt(frac, 10)
		f = strings.Repeat("0", exp-len(f)) + f
		s += "." + strings.TrimRight(f, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// CustomerAmount writes an amount for a paying customer: as DisplayAmount,
// with the name customers read beside the code of the CFA francs ("15 000
// FCFA (XOF)"; XOF and XAF are both francs CFA, each customer sees only
// their zone's).
func CustomerAmount(minor int64, c Currency) string {
	s := DisplayAmount(minor, c)
	if c == "XOF" || c == "XAF" {
		return strings.TrimSuffix(s, string(c)) + "FCFA (" + string(c) + ")"
	}
	return s
}

// DisplayAmount writes an amount for people: thousands grouped with a
// narrow no-break space, every minor digit where the currency has them,
// then the currency. 1500000 XOF is "1 500 000 XOF"; 1550 GHS "15.50 GHS";
// -1550 GHS "-15.50 GHS".
func DisplayAmount(minor int64, c Currency) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	exp := c.Exponent()
	div := int64(1)
	for range exp {
		div *= 10
	}
	digits := strconv.FormatInt(minor/div, 10)
	var b strings.Builder
	b.WriteString(sign)
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(d)
	}
	if exp > 0 {
		f := strconv.FormatInt(minor%div, 10)
		b.WriteString("." + strings.Repeat("0", exp-len(f)) + f)
	}
	return b.String() + " " + string(c)
}
