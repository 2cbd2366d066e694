package cinetpay

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a refused payment's reason, as the connector reads
// CinetPay's check (code, message, description) or the API v1's status,
// read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		code, message string
		want          gateway.Refusal
	}{
		{"602", "INSUFFICIENT_BALANCE", gateway.RefusalFunds},
		{"604", "OTP_CODE_ERROR", gateway.RefusalNotApproved},
		{"627", "TRANSACTION_CANCEL", gateway.RefusalNotApproved},
		{"635", "ERROR_PHONE_NUMBER_NOT_FOUND", gateway.RefusalNumber},
		{"641", "ERROR_AMOUNT_TOO_LOW", gateway.RefusalLimit},
		{"809", "DAILY_LIMIT", gateway.RefusalLimit},
		{"603", "SERVICE_UNAVAILABLE", gateway.RefusalUnavailable},
		{"804", "OPERATOR_UNAVAILABLE", gateway.RefusalUnavailable},
		{"600", "PAYMENT_FAILED", gateway.RefusalOther},
		{"606", "INCORRECT_SETTINGS", gateway.RefusalOther},
	} {
		st, err := checkOutcome(200, answer{Code: tc.code, Message: tc.message, Description: "Transaction 602 refused"}, checkData{Status: "REFUSED"})
		if err != nil || st.Outcome != gateway.Failed {
			t.Fatalf("%s = %+v, %v; want failed", tc.code, st, err)
		}
		if got := Refusal(st.Reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, tc.want)
		}
	}
	// The API v1: its status word.
	for reason, want := range map[string]gateway.Refusal{
		(&v1Answer{Code: "2005", Status: "INSUFFICIENT_BALANCE"}).words(): gateway.RefusalFunds,
		(&v1Answer{Code: "2003", Status: "EXPIRED"}).words():              gateway.RefusalNotApproved,
		(&v1Answer{Code: "2010", Status: "FAILED"}).words():               gateway.RefusalOther,
	} {
		if got := Refusal(reason); got != want {
			t.Errorf("Refusal(%q) = %q; want %q", reason, got, want)
		}
	}
}
