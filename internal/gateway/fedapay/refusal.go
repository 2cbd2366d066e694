package fedapay

import "github.com/cauri-pay/cauri/internal/gateway"

// phrases are the words of a failed transaction that say why, for the
// customer. The connector's reason is the transaction's status and its
// last_error_code ("declined: ...", "canceled", "expired") or a refused
// request's "<HTTP status> <message>". Sources: testdata/SOURCES.md (a
// transaction is pending, then approved, declined or canceled; the API
// reference's declined_at, canceled_at; the webhooks transaction.declined
// and transaction.canceled); FedaPay documents no error codes for the
// cause, so an insufficient balance is read from its words as the
// payouts already do ("insufficient", "insuffisant", "not enough"). A
// transaction canceled or expired was not completed by the customer;
// declined alone is RefusalOther.
var phrases = []gateway.Phrase{
	{Words: "insufficient", Refusal: gateway.RefusalFunds},
	{Words: "insuffisant", Refusal: gateway.RefusalFunds},
	{Words: "not enough", Refusal: gateway.RefusalFunds},
	{Words: "canceled", Refusal: gateway.RefusalNotApproved},
	{Words: "expired", Refusal: gateway.RefusalNotApproved},
}

// Refusal is what a failed FedaPay transaction's reason means for the
// customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByPhrase(reason, phrases) }
