package mtnmomo

import (
	"encoding/json"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed request to pay's reason, as the connector reads
// MTN's status (a string or an ErrorReason object) or a refused request,
// read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		status string // a status read's body
		want   gateway.Refusal
	}{
		{`{"status":"FAILED","reason":"NOT_ENOUGH_FUNDS"}`, gateway.RefusalFunds},
		{`{"status":"FAILED","reason":{"code":"APPROVAL_REJECTED","message":"The payer rejected the request"}}`, gateway.RefusalNotApproved},
		{`{"status":"FAILED","reason":"EXPIRED"}`, gateway.RefusalNotApproved},
		{`{"status":"FAILED","reason":"COULD_NOT_PERFORM_TRANSACTION"}`, gateway.RefusalNotApproved},
		{`{"status":"FAILED","reason":"PAYER_NOT_FOUND"}`, gateway.RefusalNumber},
		{`{"status":"FAILED","reason":"PAYER_LIMIT_REACHED"}`, gateway.RefusalLimit},
		{`{"status":"FAILED","reason":"SERVICE_UNAVAILABLE"}`, gateway.RefusalUnavailable},
		{`{"status":"FAILED","reason":"INTERNAL_PROCESSING_ERROR"}`, gateway.RefusalOther},
		{`{"status":"FAILED"}`, gateway.RefusalOther},
	} {
		var r result
		if err := json.Unmarshal([]byte(tc.status), &r); err != nil {
			t.Fatal(err)
		}
		st, err := resultStatus(r, false)
		if err != nil || st.Outcome != gateway.Failed {
			t.Fatalf("%s = %+v, %v; want failed", tc.status, st, err)
		}
		if got := Refusal(st.Reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, tc.want)
		}
	}
	// A refused request: the HTTP status, then MTN's {code, message}.
	if got := Refusal(refusal(500, []byte(`{"code":"NOT_ENOUGH_FUNDS","message":"The payer does not have enough funds"}`))); got != gateway.RefusalFunds {
		t.Errorf("a refused request for want of funds = %q; want %q", got, gateway.RefusalFunds)
	}
	// The connector's own refusal of a number MTN would not take.
	if st, _ := invalid("0b0f6f8e-3f8a-4c52-9d0e-2f6b3b0c1a11", 100, "22997"); Refusal(st.Reason) != gateway.RefusalNumber {
		t.Errorf("Refusal(%q) = %q; want %q", st.Reason, Refusal(st.Reason), gateway.RefusalNumber)
	}
}
