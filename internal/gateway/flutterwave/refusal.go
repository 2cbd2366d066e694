package flutterwave

import "github.com/cauri-pay/cauri/internal/gateway"

// phrases are the words of a failed charge that say why, for the customer.
// Flutterwave gives words, not codes: the connector's reason is the
// charge's status and its processor_response ("failed: ...") or a refused
// request's message. Sources: testdata/SOURCES.md (statuses successful,
// failed, cancelled, error; processor_response free text, e.g.
// "Transaction in progress"; "Insufficient funds in customer wallet" on a
// failed mobile money transfer's complete_message). Anything else is
// RefusalOther.
var phrases = []gateway.Phrase{
	{Words: "insufficient", Refusal: gateway.RefusalFunds},
	{Words: "limit", Refusal: gateway.RefusalLimit},
	{Words: "cancelled", Refusal: gateway.RefusalNotApproved},
	{Words: "timeout", Refusal: gateway.RefusalNotApproved},
	{Words: "timed out", Refusal: gateway.RefusalNotApproved},
	{Words: "expired", Refusal: gateway.RefusalNotApproved},
}

// Refusal is what a failed Flutterwave charge's reason means for the
// customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByPhrase(reason, phrases) }
