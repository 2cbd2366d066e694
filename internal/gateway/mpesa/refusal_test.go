package mpesa

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed push's reason, as the connector reads Daraja's
// status query (ResultCode and ResultDesc), read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		code text
		desc string
		want gateway.Refusal
	}{
		{"1", "The balance is insufficient for the transaction.", gateway.RefusalFunds},
		{"1032", "Request cancelled by user", gateway.RefusalNotApproved},
		{"1037", "DS timeout user cannot be reached", gateway.RefusalNotApproved},
		{"1019", "Transaction has expired", gateway.RefusalNotApproved},
		{"2001", "The initiator information is invalid.", gateway.RefusalNotApproved},
		{"1025", "An error occurred while sending a push request", gateway.RefusalUnavailable},
		{"9999", "An error occurred while sending a push request", gateway.RefusalUnavailable},
		{"1001", "Unable to lock subscriber, a transaction is already in process for the current subscriber", gateway.RefusalOther},
		{"17", "System internal error.", gateway.RefusalOther},
	} {
		st, err := resultStatus(queryAnswer{ResponseCode: "0", CheckoutRequestID: "ws_CO_1", ResultCode: tc.code, ResultDesc: tc.desc}, "ws_CO_1")
		if err != nil || st.Outcome != gateway.Failed {
			t.Fatalf("ResultCode %s = %+v, %v; want failed", tc.code, st, err)
		}
		if got := Refusal(st.Reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, tc.want)
		}
	}
	// A refused request's HTTP status is not a ResultCode.
	if got := Refusal(refusal(400, []byte(`{"requestId":"1","errorCode":"400.002.02","errorMessage":"Bad Request - Invalid PhoneNumber"}`))); got != gateway.RefusalOther {
		t.Errorf("a refused request = %q; want the generic kind", got)
	}
	st, _ := invalid(gateway.Collection{Reference: "r", Amount: 100, Currency: "KES", Phone: "+221771234567", NotifyURL: "https://cauri.example/cb"})
	if got := Refusal(st.Reason); got != gateway.RefusalNumber {
		t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, gateway.RefusalNumber)
	}
}
