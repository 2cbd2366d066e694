package cinetpay

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestPayoutStatus_Treatment holds every documented treatment_status
// (transfert/statuts) to an outcome, from the check's fixtures.
func TestPayoutStatus_Treatment(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set("POST /auth/login", http.StatusOK, gatewaytest.Golden(t, "transfer_login.json"))
	c := &Client{TransferBaseURL: srv.URL, APIKey: "k", TransferPassword: "pw"}
	for _, tc := range []struct {
		file   string
		want   gateway.Outcome
		reason string
	}{
		{"transfer_check_new.json", gateway.Pending, ""},
		{"transfer_check_rec.json", gateway.Pending, ""},
		{"transfer_check_nos.json", gateway.Pending, ""},
		{"transfer_check_val.json", gateway.Succeeded, ""},
		{"transfer_check_rej.json", gateway.Failed, "REJ REJECTED"},
	} {
		srv.Set("GET /transfer/check/money", http.StatusOK, gatewaytest.Golden(t, tc.file))
		st, err := c.PayoutStatus(context.Background(), gateway.Ref{Reference: "Test_retrait_20230301_01"})
		if err != nil || st.Outcome != tc.want || !strings.Contains(st.Reason, tc.reason) || st.ProviderRef != "EA230301.165358.X622533" {
			t.Errorf("%s: got %+v, %v; want %s (%s) with CinetPay's transaction_id", tc.file, st, err, tc.want, tc.reason)
		}
	}
	srv.Set("GET /transfer/check/money", http.StatusOK, []byte(`{"code":0,"message":"OPERATION_SUCCES","data":[{"client_transaction_id":"Test_retrait_20230301_01","treatment_status":"XYZ"}]}`))
	if st, err := c.PayoutStatus(context.Background(), gateway.Ref{Reference: "Test_retrait_20230301_01"}); err == nil {
		t.Errorf("an unknown treatment_status: got %+v; want an error that concludes nothing", st)
	}
}
