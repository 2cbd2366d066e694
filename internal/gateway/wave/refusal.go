package wave

import "github.com/cauri-pay/cauri/internal/gateway"

// refusals are the last_payment_error codes of a cancelled checkout
// session that say why, for the customer, and the session's expiry. The
// connector's reasons carry them ("cancelled: insufficient-funds: ...",
// "expired", "400 insufficient-funds" for a refused request). Sources:
// docs.wave.com/checkout's payment errors as public integrations list them
// (testdata/SOURCES.md: blocked-account, cross-border-payment-not-allowed,
// customer-age-restricted, insufficient-funds, kyb-limits-exceeded,
// payer-mobile-mismatch, payment-failure). payer-mobile-mismatch: the
// session was paid from another Wave account than the number given
// (restrict_payer_mobile). blocked-account, customer-age-restricted,
// cross-border-payment-not-allowed and payment-failure are RefusalOther:
// nothing the customer can fix on this page.
var refusals = map[string]gateway.Refusal{
	"INSUFFICIENT-FUNDS":    gateway.RefusalFunds,
	"KYB-LIMITS-EXCEEDED":   gateway.RefusalLimit,
	"PAYER-MOBILE-MISMATCH": gateway.RefusalNumber,
	"EXPIRED":               gateway.RefusalNotApproved,
}

// Refusal is what a failed Wave payment's reason means for the customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByCode(reason, refusals) }
