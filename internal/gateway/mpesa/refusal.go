package mpesa

import (
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// refusals are the STK push ResultCodes that say why, for the customer.
// The connector's reason of a failed push begins with its ResultCode
// ("1032: Request cancelled by user"). Sources: Daraja's STK push
// documentation (1032, "Request cancelled by user") and the result codes
// of public error tables and PHP samples listed in testdata/SOURCES.md:
// 1 "The balance is insufficient for the transaction.", 2001 "The
// initiator information is invalid." (a wrong PIN), 1037 "DS timeout user
// cannot be reached", 1019 "Transaction has expired", 1001 unable to lock
// subscriber (another transaction of the subscriber in progress), 1025
// and 9999 the push not sent.
var refusals = map[string]gateway.Refusal{
	"1":    gateway.RefusalFunds,
	"1032": gateway.RefusalNotApproved,
	"1037": gateway.RefusalNotApproved,
	"1019": gateway.RefusalNotApproved,
	"2001": gateway.RefusalNotApproved,
	"1025": gateway.RefusalUnavailable,
	"9999": gateway.RefusalUnavailable,
}

// Refusal is what a failed push's reason means for the customer: its
// ResultCode, the reason's first word (an HTTP status begins a refused
// request's, and says nothing of the customer); the connector's own
// refusal of a number is RefusalNumber.
func Refusal(reason string) gateway.Refusal {
	if strings.HasPrefix(reason, gateway.NotStarted) {
		return gateway.RefusalUnavailable
	}
	if code, _, ok := strings.Cut(reason, ":"); ok {
		if r, ok := refusals[strings.TrimSpace(code)]; ok {
			return r
		}
	}
	return gateway.RefusalByPhrase(reason, []gateway.Phrase{{Words: "phone number", Refusal: gateway.RefusalNumber}})
}
