package orangemoney

import "github.com/cauri-pay/cauri/internal/gateway"

// refusals: OM WebPay's transaction status gives no cause, only FAILED or
// EXPIRED (INITIATED, PENDING, EXPIRED, SUCCESS, FAILED: research notes
// and testdata/SOURCES.md); the connector words them "failed" and
// "expired". An expired web payment is one the customer did not finish in
// time; a failed one says nothing more (RefusalOther).
var refusals = map[string]gateway.Refusal{
	"EXPIRED": gateway.RefusalNotApproved,
}

// Refusal is what a failed web payment's reason means for the customer.
func Refusal(reason string) gateway.Refusal { return gateway.RefusalByCode(reason, refusals) }
