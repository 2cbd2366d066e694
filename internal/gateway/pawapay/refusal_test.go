package pawapay

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed deposit's reason, as the connector words
// pawaPay's failureReason, read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		code, message string
		want          gateway.Refusal
	}{
		{"INSUFFICIENT_BALANCE", "The payer does not have enough funds", gateway.RefusalFunds},
		{"PAYMENT_NOT_APPROVED", "The payer did not approve the payment", gateway.RefusalNotApproved},
		{"PAYER_NOT_FOUND", "The payer's wallet was not found", gateway.RefusalNumber},
		{"INVALID_PHONE_NUMBER", "The phone number is not valid for the provider", gateway.RefusalNumber},
		{"PAYER_LIMIT_REACHED", "The payer has reached a limit of the wallet", gateway.RefusalLimit},
		{"WALLET_LIMIT_REACHED", "The payer's wallet limit was reached", gateway.RefusalLimit},
		{"PAYMENT_IN_PROGRESS", "The payer has a payment in progress", gateway.RefusalOther},
		{"AMOUNT_OUT_OF_BOUNDS", "The amount needs to be more than 100", gateway.RefusalLimit},
		{"PROVIDER_TEMPORARILY_UNAVAILABLE", "The provider is not available", gateway.RefusalUnavailable},
		{"UNSPECIFIED_FAILURE", "The provider gave no reason", gateway.RefusalOther},
		{"UNKNOWN_ERROR", "", gateway.RefusalOther},
	} {
		reason := failed(&failureReason{tc.code, tc.message}, false).Reason
		if got := Refusal(reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", reason, got, tc.want)
		}
	}
	if got := Refusal(failed(nil, false).Reason); got != gateway.RefusalOther {
		t.Errorf("a refusal without a reason = %q; want the generic kind", got)
	}
}
