package mtnmomo

import "github.com/cauri-pay/cauri/internal/gateway"

// refusals are the reason codes of a failed request to pay that say why,
// for the customer. The connector's reasons carry the code (a FAILED
// status's reason, or "<HTTP status> <code> <message>" for a refused
// request). Sources: momodeveloper.mtn.com "Common Error Codes" and the
// community update "Reason for some FAILED API responses updated"
// (NOT_ENOUGH_FUNDS, PAYER_NOT_FOUND, PAYER_LIMIT_REACHED,
// COULD_NOT_PERFORM_TRANSACTION: the payer did not approve within 5
// minutes, SENDER_ACCOUNT_NOT_ACTIVE, NOT_ALLOWED), the API reference's
// ErrorReason enum (docs.rs mtnmomo: APPROVAL_REJECTED, EXPIRED,
// TRANSACTION_CANCELED, PAYMENT_NOT_APPROVED, SERVICE_UNAVAILABLE,
// INTERNAL_PROCESSING_ERROR) and the sandbox use cases, all in
// testdata/SOURCES.md and ../shared/research/aggregators.md section 6.
// INTERNAL_PROCESSING_ERROR, MTN's generic code, is RefusalOther.
var refusals = map[string]gateway.Refusal{
	"NOT_ENOUGH_FUNDS":              gateway.RefusalFunds,
	"APPROVAL_REJECTED":             gateway.RefusalNotApproved,
	"EXPIRED":                       gateway.RefusalNotApproved,
	"TRANSACTION_CANCELED":          gateway.RefusalNotApproved,
	"PAYMENT_NOT_APPROVED":          gateway.RefusalNotApproved,
	"COULD_NOT_PERFORM_TRANSACTION": gateway.RefusalNotApproved,
	"PAYER_NOT_FOUND":               gateway.RefusalNumber,
	"SENDER_ACCOUNT_NOT_ACTIVE":     gateway.RefusalNumber,
	"PAYER_LIMIT_REACHED":           gateway.RefusalLimit,
	"SERVICE_UNAVAILABLE":           gateway.RefusalUnavailable,
}

// Refusal is what a failed request to pay's reason means for the customer;
// the connector's own refusal of a number not in E.164 is RefusalNumber.
func Refusal(reason string) gateway.Refusal {
	if r := gateway.RefusalByCode(reason, refusals); r != gateway.RefusalOther {
		return r
	}
	return gateway.RefusalByPhrase(reason, []gateway.Phrase{{Words: "phone number", Refusal: gateway.RefusalNumber}})
}
