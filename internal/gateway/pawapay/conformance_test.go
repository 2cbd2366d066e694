package pawapay

import (
	"net/http"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestConformance holds the connector to pawaPay's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run).
func TestConformance(t *testing.T) {
	pending := gatewaytest.Pending
	failed := gatewaytest.Failed
	fixture := gatewaytest.Fixture
	idOf := gatewaytest.JSONField
	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, Token: "t", HTTP: hc, AuthURLWait: -1}
		},
		Setup: map[string]gatewaytest.Reply{"GET /v2/active-conf": fixture("active_conf.json")},
		Collection: gateway.Collection{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41", Amount: 2500, Currency: "XOF",
			Phone: "+22675123456", Operator: "ORANGE_BFA", Code: " 482 913 "},
		Initiation: "POST /v2/deposits",
		Initiated:  gatewaytest.Case{Reply: fixture("deposit_accepted.json"), Want: pending},
		Reference:  idOf("depositId"),
		Request:    "deposit_request_preauth.json",
		Collect: []gatewaytest.Case{
			{Reply: fixture("deposit_accepted_final_status.json"), Want: pending},
			{Reply: fixture("deposit_accepted_get_auth_url.json"), Want: pending},
			{Reply: fixture("deposit_duplicate_ignored.json"), Want: pending},
			{Reply: fixture("deposit_rejected.json"), Want: failed("INVALID_PHONE_NUMBER: The phone number is not valid for the provider")},
			{Reply: fixture("deposit_rejected_out_of_bounds.json"), Want: failed("AMOUNT_OUT_OF_BOUNDS")},
			{Reply: fixture("deposit_rejected_invalid_amount.json"), Want: failed("INVALID_AMOUNT")},
			{Reply: gatewaytest.Reply{Fixture: "deposit_missing_parameter.json", Code: 400}, Want: failed("MISSING_PARAMETER: preAuthorisationCode is mandatory")},
			{Reply: gatewaytest.Reply{Fixture: "unknown_error.json", Code: 500}, Err: &gatewaytest.Err{Transient: true, Contains: "answered 500"}},
			{Reply: gatewaytest.Reply{Fixture: "authentication_error.json", Code: 403}, Err: &gatewaytest.Err{Contains: "AUTHENTICATION_ERROR"}},
			{Reply: gatewaytest.Reply{Fixture: "deposits_not_allowed.json", Code: 403}, Err: &gatewaytest.Err{Contains: "DEPOSITS_NOT_ALLOWED"}},
		},
		StatusRef: gateway.Ref{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41"},
		Status: []gatewaytest.Case{
			{Reply: fixture("deposit_status_accepted.json"), Want: pending},
			{Reply: fixture("deposit_status_processing.json"), Want: pending},
			{Reply: fixture("deposit_status_in_reconciliation.json"), Want: pending},
			{Reply: fixture("deposit_status_get_auth_url.json"), Want: pending},
			{Reply: fixture("deposit_status_redirect.json"), Want: gateway.Status{Outcome: gateway.Pending, RedirectURL: "https://wave.example/c/7d1e4b90"}},
			{Reply: fixture("deposit_status_completed.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "ABC123"}},
			{Reply: fixture("deposit_status_failed.json"), Want: failed("PAYMENT_NOT_APPROVED: The customer did not approve the payment.")},
			{Reply: fixture("deposit_status_failed_unknown_code.json"), Want: failed("PAYER_LIMIT_REACHED")},
			{Reply: fixture("deposit_status_not_found.json"), Want: gateway.Status{Outcome: gateway.NotFound}},
			{Reply: gatewaytest.Reply{Fixture: "unknown_error.json", Code: 500}, Err: &gatewaytest.Err{Transient: true}},
		},
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "deposit completed", Body: fixture("deposit_callback_completed.json"), Want: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41"},
			{Name: "deposit with Wave's page", Body: fixture("deposit_callback_auth_url.json"), Want: "7d1e4b90-2c6a-4f3e-9b8d-1a5c7e9f0b23"},
			{Name: "payout completed", Body: fixture("payout_callback_completed.json"), Want: "5a8c2e17-6f40-4b9d-8e21-3c7f9a0d4b65"},
			{Name: "no id", Body: gatewaytest.Reply{Body: `{"status": "COMPLETED"}`}, Err: true},
		},
		Payout: &gatewaytest.PayoutSpec{
			Payout: gateway.Payout{Reference: "5a8c2e17-6f40-4b9d-8e21-3c7f9a0d4b65", Amount: 1500, Currency: "XOF", Phone: "+22675123456",
				Operator: "ORANGE_BFA", Country: "BF"},
			Initiation: "POST /v2/payouts",
			Initiated:  gatewaytest.Case{Reply: fixture("payout_accepted.json"), Want: pending},
			Reference:  idOf("payoutId"),
			StatusRef:  gateway.Ref{Reference: "5a8c2e17-6f40-4b9d-8e21-3c7f9a0d4b65"},
			Status: []gatewaytest.Case{
				{Reply: fixture("payout_status_enqueued.json"), Want: pending},
				{Reply: fixture("payout_status_out_of_funds.json"), Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true,
					Reason: "PAWAPAY_WALLET_OUT_OF_FUNDS"}},
				{Reply: fixture("payout_status_manually_cancelled.json"), Want: failed("MANUALLY_CANCELLED")},
			},
		},
	})
}
