package routing

import (
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
)

func TestAdvise_ChecksInOrder(t *testing.T) {
	r := &Router{Engine: New(func() time.Time { return time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC) }, 1)}
	for _, tc := range []struct {
		name string
		ask  Ask
		want string // the refusal's start
	}{
		{"no country", Ask{Amount: "5000", Providers: []string{"pawapay"}}, "country is required"},
		{"not served", Ask{Country: "FR", Amount: "5000", Providers: []string{"pawapay"}}, `country "FR" is not served`},
		{"no amount", Ask{Country: "SN", Providers: []string{"pawapay"}}, "amount is required"},
		{"bad currency", Ask{Country: "SN", Amount: "5000", Currency: "XYZ", Providers: []string{"pawapay"}}, "currency"},
		{"no providers", Ask{Country: "SN", Amount: "5000"}, "availableProviders is required"},
		{"unknown provider", Ask{Country: "SN", Amount: "5000", Providers: []string{"nope"}}, `provider "nope" is unknown`},
		{"not an operator there", Ask{Country: "SN", Amount: "5000", Providers: []string{"pawapay"}, PaymentMethod: "mtn"}, `paymentMethod "mtn" is not an operator of SN`},
		{"bad phone", Ask{Country: "SN", Amount: "5000", Providers: []string{"pawapay"}, Phone: "12"}, "phone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Advise(tc.ask)
			if got, want := cauri.ErrorCode(err), cauri.EInvalid; got != want {
				t.Fatalf("code = %q (%v); want %q", got, err, want)
			}
			if got := cauri.ErrorMessage(err); !strings.Contains(strings.ToLower(got), strings.ToLower(tc.want)) {
				t.Errorf("message = %q; want it to name %q", got, tc.want)
			}
		})
	}
}

func TestAdvise_DetectsTheOperatorAndRanksWhoServesIt(t *testing.T) {
	r := &Router{Engine: New(func() time.Time { return time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC) }, 1)}
	// +221 77: Orange Senegal (catalog/prefixes.json). Wave serves only
	// its own wallet there, so an Orange payment goes to the others.
	a, err := r.Advise(Ask{Country: "SN", Amount: "5000", Providers: []string{"wave", "pawapay", "cinetpay"}, Phone: "+221771234567"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.DetectedOperator, "orange_money"; got != want {
		t.Errorf("detected = %q; want %q", got, want)
	}
	for _, p := range append([]string{a.Decision.Provider}, a.Decision.Alternates...) {
		if p == "wave" {
			t.Errorf("wave ranked for an Orange payment: %+v", a.Decision)
		}
	}
	if a.Decision.Provider == "" {
		t.Errorf("no provider chosen: %+v", a.Decision)
	}
}
