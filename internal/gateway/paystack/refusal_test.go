package paystack

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed charge's reason, as the connector reads Paystack's
// status and gateway_response, read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		status, response string
		want             gateway.Refusal
	}{
		{"failed", "Insufficient Funds", gateway.RefusalFunds},
		{"abandoned", "", gateway.RefusalNotApproved},
		{"timeout", "", gateway.RefusalNotApproved},
		{"failed", "Transaction limit exceeded", gateway.RefusalLimit},
		{"failed", "Declined", gateway.RefusalOther},
		{"reversed", "", gateway.RefusalOther},
	} {
		var a answer
		a.Data.ID, a.Data.Status, a.Data.GatewayResponse = 1, tc.status, tc.response
		st := chargeStatus(a)
		if st.Outcome != gateway.Failed {
			t.Fatalf("%s = %+v; want failed", tc.status, st)
		}
		if got := Refusal(st.Reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, tc.want)
		}
	}
}
