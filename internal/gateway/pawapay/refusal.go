package pawapay

import "github.com/cauri-pay/cauri/internal/gateway"

// refusals are the failureCode values of a deposit that say why, for the
// customer. The connector's reasons begin with the code ("CODE: message").
// Sources: docs.pawapay.io/v2/docs/failure_codes (transaction failures:
// PAYER_NOT_FOUND, PAYMENT_NOT_APPROVED, INSUFFICIENT_BALANCE,
// PAYMENT_IN_PROGRESS, AMOUNT_OUT_OF_BOUNDS, INVALID_PHONE_NUMBER,
// UNSPECIFIED_FAILURE, UNKNOWN_ERROR); PAYER_LIMIT_REACHED from pawaPay's
// sandbox test numbers (docs.pawapay.io/v2/docs/test_numbers, see
// testdata/SOURCES.md); PROVIDER_TEMPORARILY_UNAVAILABLE from the same
// failure codes page (the provider is not available at the moment;
// not in our fixtures). Anything else (UNSPECIFIED_FAILURE, UNKNOWN_ERROR,
// the technical codes) is RefusalOther.
var refusals = map[string]gateway.Refusal{
	"INSUFFICIENT_BALANCE":             gateway.RefusalFunds,
	"PAYMENT_NOT_APPROVED":             gateway.RefusalNotApproved,
	"PAYER_NOT_FOUND":                  gateway.RefusalNumber,
	"INVALID_PHONE_NUMBER":             gateway.RefusalNumber,
	"PAYER_LIMIT_REACHED":              gateway.RefusalLimit,
	"AMOUNT_OUT_OF_BOUNDS":             gateway.RefusalLimit,
	"PROVIDER_TEMPORARILY_UNAVAILABLE": gateway.RefusalUnavailable,
}

// Refusal is what a failed deposit's reason means for the customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByCode(reason, refusals) }
