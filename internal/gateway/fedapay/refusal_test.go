package fedapay

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed transaction's reason, as the connector words
// FedaPay's status and last_error_code or a refused request, read for the
// customer.
func TestRefusal(t *testing.T) {
	for reason, want := range map[string]gateway.Refusal{
		"declined: insufficient_funds":    gateway.RefusalFunds,
		refusal(400, "Solde insuffisant"): gateway.RefusalFunds,
		"canceled":                        gateway.RefusalNotApproved,
		"expired":                         gateway.RefusalNotApproved,
		"declined":                        gateway.RefusalOther,
		refusal(422, "Le numéro de téléphone est requis"): gateway.RefusalOther,
	} {
		if got := Refusal(reason); got != want {
			t.Errorf("Refusal(%q) = %q; want %q", reason, got, want)
		}
	}
}
