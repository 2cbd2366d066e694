package orangemoney

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: OM WebPay's FAILED and EXPIRED, as the connector words
// them, read for the customer.
func TestRefusal(t *testing.T) {
	for status, want := range map[string]gateway.Refusal{"EXPIRED": gateway.RefusalNotApproved, "FAILED": gateway.RefusalOther} {
		st, err := transactionStatus(transaction{Status: status}, "pt_1")
		if err != nil || st.Outcome != gateway.Failed {
			t.Fatalf("%s = %+v, %v; want failed", status, st, err)
		}
		if got := Refusal(st.Reason); got != want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, want)
		}
	}
}
