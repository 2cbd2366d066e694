package wave

import (
	"encoding/json"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// TestRefusal: a failed checkout session's reason, as the connector reads
// Wave's last_payment_error or the session's expiry, read for the customer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		session string
		want    gateway.Refusal
	}{
		{`{"id":"cos-1","checkout_status":"complete","payment_status":"cancelled","last_payment_error":{"code":"insufficient-funds","message":"The wallet does not have enough funds."}}`, gateway.RefusalFunds},
		{`{"id":"cos-1","checkout_status":"complete","payment_status":"cancelled","last_payment_error":{"code":"kyb-limits-exceeded","message":"x"}}`, gateway.RefusalLimit},
		{`{"id":"cos-1","checkout_status":"complete","payment_status":"cancelled","last_payment_error":{"code":"payer-mobile-mismatch","message":"x"}}`, gateway.RefusalNumber},
		{`{"id":"cos-1","checkout_status":"expired","payment_status":"processing"}`, gateway.RefusalNotApproved},
		{`{"id":"cos-1","checkout_status":"complete","payment_status":"cancelled","last_payment_error":{"code":"blocked-account","message":"x"}}`, gateway.RefusalOther},
		{`{"id":"cos-1","checkout_status":"complete","payment_status":"cancelled","last_payment_error":{"code":"payment-failure","message":"x"}}`, gateway.RefusalOther},
	} {
		var s session
		if err := json.Unmarshal([]byte(tc.session), &s); err != nil {
			t.Fatal(err)
		}
		st, _ := sessionStatus(s)
		if st.Outcome != gateway.Failed {
			t.Fatalf("%s = %+v; want failed", tc.session, st)
		}
		if got := Refusal(st.Reason); got != tc.want {
			t.Errorf("Refusal(%q) = %q; want %q", st.Reason, got, tc.want)
		}
	}
	if got := Refusal(refusal(400, json.RawMessage(`{"code":"insufficient-funds","message":"Not enough"}`))); got != gateway.RefusalFunds {
		t.Errorf("a refused request for want of funds = %q; want %q", got, gateway.RefusalFunds)
	}
}
