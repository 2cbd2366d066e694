package cinetpay

import "github.com/cauri-pay/cauri/internal/gateway"

// refusals are CinetPay's codes of a refused payment that say why, for the
// customer. The connector's reasons begin with the code ("602
// INSUFFICIENT_BALANCE: ..."); the API v1's carry its status word
// ("2005 INSUFFICIENT_BALANCE ..."). Sources: the code table of
// docs.cinetpay.com/api/1.0-en/checkout/tableau (testdata/SOURCES.md: 602
// INSUFFICIENT_BALANCE, 603 SERVICE_UNAVAILABLE, 604 OTP_CODE_ERROR, 627
// TRANSACTION_CANCEL, 621/622/626 and 804 OPERATOR_UNAVAILABLE, 635/636/637
// the phone refused, 641/642 the amount too low or too high, 807-812 the
// daily, weekly and monthly limits) and the API v1's statuses (the
// cinetpay-seamless README: INSUFFICIENT_BALANCE, EXPIRED). 600
// PAYMENT_FAILED, 606 INCORRECT_SETTINGS, 620 ERROR_DOUBLE_PAYEMNT and 625
// ABONNEMENT_OR_TRANSACTIONS_EXPIRED (the merchant's subscription) are
// RefusalOther.
var refusals = map[string]gateway.Refusal{
	"602": gateway.RefusalFunds, "INSUFFICIENT_BALANCE": gateway.RefusalFunds,
	"604": gateway.RefusalNotApproved, "OTP_CODE_ERROR": gateway.RefusalNotApproved,
	"627": gateway.RefusalNotApproved, "TRANSACTION_CANCEL": gateway.RefusalNotApproved,
	"EXPIRED": gateway.RefusalNotApproved,
	"635":     gateway.RefusalNumber, "636": gateway.RefusalNumber, "637": gateway.RefusalNumber,
	"641": gateway.RefusalLimit, "642": gateway.RefusalLimit,
	"807": gateway.RefusalLimit, "808": gateway.RefusalLimit, "809": gateway.RefusalLimit,
	"810": gateway.RefusalLimit, "811": gateway.RefusalLimit, "812": gateway.RefusalLimit,
	"603": gateway.RefusalUnavailable, "SERVICE_UNAVAILABLE": gateway.RefusalUnavailable,
	"621": gateway.RefusalUnavailable, "622": gateway.RefusalUnavailable, "626": gateway.RefusalUnavailable,
	"804": gateway.RefusalUnavailable, "OPERATOR_UNAVAILABLE": gateway.RefusalUnavailable,
}

// Refusal is what a refused CinetPay payment's reason means for the
// customer. A number is read as a code only as the reason's first word
// (the code the connector put there), not within CinetPay's description.
func Refusal(reason string) gateway.Refusal {
	words := gateway.Words(reason)
	for i, w := range words {
		if r, ok := refusals[w]; ok && (i == 0 || w[0] < '0' || w[0] > '9') {
			return r
		}
	}
	return gateway.RefusalByCode(reason, nil) // a payment never started
}
