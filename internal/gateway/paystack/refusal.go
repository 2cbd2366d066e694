package paystack

import "github.com/cauri-pay/cauri/internal/gateway"

// phrases are the words of a failed charge that say why, for the customer.
// Paystack gives words, not codes: the connector's reason is the charge's
// status and its gateway_response ("failed: Insufficient Funds",
// "abandoned: ...", "timeout: ..."). Sources: the transaction statuses
// (testdata/SOURCES.md: success, failed, abandoned, reversed; the iOS SDK's
// TransactionStatus adds timeout, on which its mobile money screen ends a
// payment) and gateway_response "Insufficient Funds" (the simulator's,
// Paystack's wording for a card or wallet without funds in its test
// responses). "Declined" and anything else is RefusalOther.
var phrases = []gateway.Phrase{
	{Words: "insufficient", Refusal: gateway.RefusalFunds},
	{Words: "limit", Refusal: gateway.RefusalLimit},
	{Words: "abandoned", Refusal: gateway.RefusalNotApproved},
	{Words: "timeout", Refusal: gateway.RefusalNotApproved},
	{Words: "timed out", Refusal: gateway.RefusalNotApproved},
}

// Refusal is what a failed Paystack charge's reason means for the customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByPhrase(reason, phrases) }
