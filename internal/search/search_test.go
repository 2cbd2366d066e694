package search

import (
	"slices"
	"testing"

	"github.com/cauri-pay/cauri"
)

func TestSessionTerms(t *testing.T) {
	got := SessionTerms(&cauri.Session{CustomerName: "  Aïcha  N'Diaye-Koné ", CustomerEmail: " Aicha@Boutique.SN",
		CustomerPhone: "+2250707123456", Metadata: map[string]string{"order_id": "ORD-42"}})
	want := []string{"aicha ndiaye kone", "aicha", "ndiaye", "kone", "aicha@boutique.sn", "ord-42", "0707123456"}
	if !slices.Equal(got, want) {
		t.Fatalf("terms = %q; want %q", got, want)
	}
	if got := SessionTerms(&cauri.Session{}); len(got) != 0 {
		t.Fatalf("an empty session's terms = %q; want none", got)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		q               string
		prefixes, exact []string
	}{
		{"Awa", []string{"awa"}, nil},
		{"di", nil, []string{"di"}},
		{"Jean-Paul", []string{"jean-paul", "jean paul"}, nil},
		{"+221 77 123 45 67", []string{"+221 77 123 45 67", "771234567"}, nil},
		{"00225 07 07 12 34 56", []string{"00225 07 07 12 34 56", "0707123456"}, nil},
		{"77-123-45", []string{"77-123-45", "7712345"}, nil},
		{"07 07 12", []string{"07 07 12", "070712", "70712"}, nil},
		{"client4242@", []string{"client4242@"}, nil},
		{"ord-", []string{"ord-"}, nil},
		{"N'Diaye", []string{"n'diaye", "ndiaye"}, nil},
	} {
		q := Parse(c.q)
		if !slices.Equal(q.Prefixes, c.prefixes) || !slices.Equal(q.Exact, c.exact) || q.ID != c.q {
			t.Errorf("Parse(%q) = %q %q; want %q %q", c.q, q.Prefixes, q.Exact, c.prefixes, c.exact)
		}
	}
}
