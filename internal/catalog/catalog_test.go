package catalog

import (
	"testing"

	"github.com/cauri-pay/cauri"
)

func TestLookupCountry(t *testing.T) {
	for _, in := range []string{"ci", "CI", "Côte d'Ivoire", "ivory coast", "côte d'ivoire"} {
		c, ok := LookupCountry(in)
		if !ok || c.Code != "CI" || c.Currency != "XOF" {
			t.Errorf("LookupCountry(%q) = %+v, %v; want CI", in, c, ok)
		}
	}
	if _, ok := LookupCountry("Atlantis"); ok {
		t.Error("LookupCountry(Atlantis) found a country")
	}
}

func TestCatalog_Consistent(t *testing.T) {
	for _, c := range Countries() {
		if !IsRegion(c.Code) {
			t.Errorf("%s is not an ISO region", c.Code)
		}
		if _, err := cauri.ParseCurrency(string(c.Currency)); err != nil {
			t.Errorf("%s: %v", c.Code, err)
		}
		if len(c.Operators) == 0 {
			t.Errorf("%s has no operator", c.Code)
		}
	}
}

func TestParseInternationalPhone(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"+225 07 07 12 34 56", "+2250707123456"},
		{"+221-77-123-45-67", "+221771234567"},
		{"+254712345678", "+254712345678"},
		{"00233241234567", "+233241234567"},
	} {
		got, err := ParseInternationalPhone("customer_phone", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseInternationalPhone(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"0707123456", "+225 12", "+999123456789", "hello", "+"} {
		if _, err := ParseInternationalPhone("customer_phone", in); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Errorf("ParseInternationalPhone(%q) err = %v; want invalid", in, err)
		}
	}
}

func BenchmarkParseInternationalPhone(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseInternationalPhone("customer_phone", "+225 07 07 12 34 56"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDisplayPhone: grouped as libphonenumber's metadata groups them.
func TestDisplayPhone(t *testing.T) {
	for in, want := range map[string]string{"+221771234567": "+221 77 123 45 67", "+2250707123456": "+225 07 07 12 3456", "": "", "n/a": "n/a"} {
		if got := DisplayPhone(in); got != want {
			t.Errorf("DisplayPhone(%q) = %q; want %q", in, got, want)
		}
	}
}
