package pawapay

import "github.com/cauri-pay/cauri/internal/gateway"

// refusals are the failureCode values of a deposit that say why, for the
// customer. The connector's reasons begin with the code ("CODE: message").
// Sources: docs.pawapay.io/v2/docs/failure_codes, as
// ../shared/research/aggregators.md section 1 copies it (business
// refusals, HTTP 200 REJECTED: AMOUNT_OUT_OF_BOUNDS "outside of the
// transaction limits for this provider", INVALID_PHONE_NUMBER "not in the
// MSISDN format", PROVIDER_TEMPORARILY_UNAVAILABLE; transaction failures:
// PAYMENT_NOT_APPROVED, INSUFFICIENT_BALANCE, PAYER_NOT_FOUND,
// PAYMENT_IN_PROGRESS, WALLET_LIMIT_REACHED, UNSPECIFIED_FAILURE,
// UNKNOWN_ERROR; full list in andydefer/php-pawapay
// src/Enums/FailureCode.php) and pawaPay's sandbox test numbers
// (docs.pawapay.io/testing_the_api: PAYER_LIMIT_REACHED for Cameroon's and
// the DRC's ...019; testdata/SOURCES.md). PAYMENT_IN_PROGRESS (another
// payment of the payer still open), UNSPECIFIED_FAILURE, UNKNOWN_ERROR,
// OTHER_ERROR and the technical codes are RefusalOther.
var refusals = map[string]gateway.Refusal{
	"INSUFFICIENT_BALANCE":             gateway.RefusalFunds,
	"PAYMENT_NOT_APPROVED":             gateway.RefusalNotApproved,
	"PAYER_NOT_FOUND":                  gateway.RefusalNumber,
	"INVALID_PHONE_NUMBER":             gateway.RefusalNumber,
	"PAYER_LIMIT_REACHED":              gateway.RefusalLimit,
	"WALLET_LIMIT_REACHED":             gateway.RefusalLimit,
	"AMOUNT_OUT_OF_BOUNDS":             gateway.RefusalLimit,
	"PROVIDER_TEMPORARILY_UNAVAILABLE": gateway.RefusalUnavailable,
}

// Refusal is what a failed deposit's reason means for the customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByCode(reason, refusals) }
