package flutterwave

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed charge's reason, as the connector reads
// Flutterwave's status and processor_response, read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		status, response string
		want             gateway.Refusal
	}{
		{"failed", "Insufficient funds in customer wallet", gateway.RefusalFunds},
		{"cancelled", "", gateway.RefusalNotApproved},
		{"failed", "Transaction timed out", gateway.RefusalNotApproved},
		{"failed", "Declined", gateway.RefusalOther},
		{"error", "", gateway.RefusalOther},
	} {
		st, known := chargeStatus(charge{ID: 1, Status: tc.status, ProcessorResp: tc.response})
		if !known || st.Outcome != gateway.Failed {
			t.Fatalf("%s = %+v; want failed", tc.status, st)
		}
		if got := Refusal(st.Reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, tc.want)
		}
	}
}
