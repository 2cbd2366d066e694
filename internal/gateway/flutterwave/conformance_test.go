package flutterwave

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// conformanceHash is the secret hash of the conformance suite's account.
const conformanceHash = "conformance-hash"

// TestConformance holds the connector to Flutterwave's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run). Flutterwave keeps a charge under our tx_ref
// and a transfer under our reference.
func TestConformance(t *testing.T) {
	pending := gatewaytest.Pending
	failed := gatewaytest.Failed
	fixture := gatewaytest.Fixture
	body := func(code int, s string) gatewaytest.Reply { return gatewaytest.Reply{Code: code, Body: s} }
	field := gatewaytest.JSONField
	const (
		charge   = "cauri-ug-7f3a2c" // charge_request_uganda.json, verify_successful.json
		transfer = "cauri-tr-9d1e77" // transfer_request_uganda.json, transfer_queued.json, transfer_fetched_successful.json
		redirect = "https://flutterwave-authorize.example.org/captcha/verify/lang-en/40021:c0ffee00c0ffee00c0ffee00c0ffee00"
		// The documented error shape (integration-guides/errors), and a
		// list of transfers without ours.
		notListed = `{"status": "success", "message": "Transfers fetched", "meta": {"page_info": {"total": 0, "current_page": 1, "total_pages": 1}}, "data": []}`
		noID      = `{"status": "error", "message": "No transfer was found for this id", "data": null}`
	)
	fetch := "GET /transfers/610233"
	// A transfer's id that Flutterwave answers with another reference than
	// ours: its list is searched for ours.
	elsewhere := edited(t, "transfer_fetched_successful.json", map[string]any{"reference": "cauri-tr-another"})

	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, SecretKey: "FLWSECK_TEST-conformance", SecretHash: conformanceHash, HTTP: hc}
		},
		Collection: gateway.Collection{Reference: charge, Amount: 1500, Currency: "UGX", Phone: "+256771234567", Operator: "MTN", Country: "UG",
			Email: "payer@example.org", Name: "Amina Nakato", ReturnURL: "https://pay.example.org/return/cauri-ug-7f3a2c"},
		Initiation: "POST /charges",
		// Uganda, Rwanda, Zambia, Ghana: only Flutterwave's page, no data.
		Initiated: gatewaytest.Case{Reply: fixture("charge_redirect.json"), Want: gateway.Status{Outcome: gateway.Pending, RedirectURL: redirect}},
		Reference: field("tx_ref"),
		Request:   "charge_request_uganda.json",
		Collect: []gatewaytest.Case{
			{Reply: fixture("charge_redirect.json"), Want: gateway.Status{Outcome: gateway.Pending, RedirectURL: redirect}},
			// Tanzania and the francophone countries: the pending charge, a push on the phone.
			{Reply: fixture("charge_initiated_tanzania.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "880412"}},
			{Reply: fixture("charge_initiated_franco.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "880413"}},
			// A refusal in the error shape: nothing was created.
			{Reply: body(400, `{"status": "error", "message": "Invalid phone number", "data": null}`), Want: failed("400 Invalid phone number")},
			// A redirect without its address is no answer to act on.
			{Reply: body(200, `{"status": "success", "message": "Charge initiated", "meta": {"authorization": {"mode": "redirect"}}}`),
				Err: &gatewaytest.Err{Transient: true}},
			// A step this connector does not take (PHP-v3 AuthMode): the
			// charge exists, its status decides.
			{Reply: edited(t, "charge_initiated_franco.json", map[string]any{}, "meta", map[string]any{"authorization": map[string]any{"mode": "otp"}}),
				Err: &gatewaytest.Err{Transient: true, Contains: "otp"}},
		},
		StatusRef: gateway.Ref{Reference: charge},
		Status: []gatewaytest.Case{
			{Reply: fixture("verify_successful.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "880410"}},
			{Reply: gatewaytest.Reply{Fixture: "verify_not_found.json", Code: 400}, Want: gateway.Status{Outcome: gateway.NotFound}},
			{Reply: gatewaytest.Reply{Fixture: "verify_not_found.json", Code: 404}, Want: gateway.Status{Outcome: gateway.NotFound}},
			// The charge statuses (SOURCES.md, "Charge statuses"), any case.
			{Reply: edited(t, "verify_successful.json", map[string]any{"status": "pending", "processor_response": "Pending"}),
				Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "880410"}},
			{Reply: edited(t, "verify_successful.json", map[string]any{"status": "failed", "processor_response": "Insufficient funds"}),
				Want: failed("failed: Insufficient funds")},
			{Reply: edited(t, "verify_successful.json", map[string]any{"status": "FAILED", "processor_response": "Declined"}), Want: failed("failed: Declined")},
			{Reply: edited(t, "verify_successful.json", map[string]any{"status": "cancelled", "processor_response": "Cancelled by the customer"}),
				Want: failed("cancelled: Cancelled by the customer")},
			{Reply: edited(t, "verify_successful.json", map[string]any{"status": "error", "processor_response": "Timeout"}), Want: failed("error: Timeout")},
			// Any other word concludes nothing.
			{Reply: edited(t, "verify_successful.json", map[string]any{"status": "success-pending-validation"}), Err: &gatewaytest.Err{Contains: "unknown"}},
			// A charge about another tx_ref is not this one.
			{Reply: edited(t, "verify_successful.json", map[string]any{"tx_ref": "another-ref"}), Err: &gatewaytest.Err{Contains: "not " + charge}},
		},
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "transfer, older shape", Header: hash(conformanceHash), Body: fixture("transfer_webhook_v2.json"), Want: "cauri-tr-77c0e3"},
			// charge.completed and transfer.completed by the fields the
			// webhooks page names (SOURCES.md, "Webhooks"); no fixture.
			{Name: "charge.completed", Header: hash(conformanceHash),
				Body: body(0, `{"event": "charge.completed", "data": {"id": 880410, "tx_ref": "cauri-ug-7f3a2c", "status": "successful"}}`), Want: charge},
			{Name: "transfer.completed", Header: hash(conformanceHash),
				Body: body(0, `{"event": "transfer.completed", "data": {"id": 610233, "reference": "cauri-tr-9d1e77", "status": "SUCCESSFUL"}}`), Want: transfer},
			{Name: "wrong hash", Header: hash("guess"), Body: fixture("transfer_webhook_v2.json"), Err: true},
			{Name: "no hash", Header: http.Header{}, Body: fixture("transfer_webhook_v2.json"), Err: true},
			{Name: "no reference", Header: hash(conformanceHash), Body: body(0, `{"event": "charge.completed", "data": {"id": 880410}}`), Err: true},
		},
		Payout: &gatewaytest.PayoutSpec{
			Payout: gateway.Payout{Reference: transfer, Amount: 350, Currency: "UGX", Phone: "+256701234567", Operator: "AIRTEL", Country: "UG",
				RecipientName: "Okello Brian", Description: "Cauri payout"},
			Initiation: "POST /transfers",
			Initiated:  gatewaytest.Case{Reply: fixture("transfer_queued.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}},
			Reference:  field("reference"),
			Request:    "transfer_request_uganda.json",
			Sent: []gatewaytest.Case{
				{Reply: fixture("transfer_queued.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}},
				// The error shape refusing a transfer: nothing created.
				{Reply: body(400, `{"status": "error", "message": "Insufficient funds in customer wallet", "data": null}`),
					Want: gateway.Status{Outcome: gateway.Failed, Reason: "Insufficient funds in customer wallet", LowBalance: true}},
				// A 4xx that is not Flutterwave's refusal proves nothing.
				{Reply: body(429, `{"message": "upstream"}`), Err: &gatewaytest.Err{Transient: true, Contains: "may have been received"}},
				// Sent again: the reference is refused, the first transfer answers.
				{Replies: map[string]gatewaytest.Reply{"POST /transfers": {Fixture: "transfer_duplicate.json", Code: 400}, "GET /transfers": fixture("transfers_list_failed.json")},
					Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}},
				// ... and when it is not listed, it was received all the same: never a failure.
				{Replies: map[string]gatewaytest.Reply{"POST /transfers": {Fixture: "transfer_duplicate.json", Code: 400}, "GET /transfers": body(200, notListed)},
					Err: &gatewaytest.Err{Transient: true, Contains: "may have been received"}},
			},
			StatusRef: gateway.Ref{Reference: transfer, ProviderRef: "610233"},
			Status: []gatewaytest.Case{
				{Reply: fixture("transfer_fetched_successful.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "610233"}},
				// The transfer statuses (SOURCES.md, "Transfer statuses"), any case.
				{Reply: edited(t, "transfer_fetched_successful.json", map[string]any{"status": "NEW"}), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}},
				{Reply: edited(t, "transfer_fetched_successful.json", map[string]any{"status": "PENDING"}), Want: pending},
				{Reply: edited(t, "transfer_fetched_successful.json", map[string]any{"status": "FAILED", "complete_message": "DISBURSE FAILED: Insufficient funds in customer wallet"}),
					Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "610233", LowBalance: true, Reason: "DISBURSE FAILED: Insufficient funds in customer wallet"}},
				{Reply: edited(t, "transfer_fetched_successful.json", map[string]any{"status": "Failed", "complete_message": "beneficiary_name is required"}),
					Want: failed("beneficiary_name is required")},
				{Reply: edited(t, "transfer_fetched_successful.json", map[string]any{"status": "FAILED", "complete_message": ""}), Want: failed("failed")},
				{Reply: edited(t, "transfer_fetched_successful.json", map[string]any{"status": "REVERSED"}), Err: &gatewaytest.Err{Contains: "unknown"}},
				// The id names another transfer, or is not known: our
				// reference in the list decides.
				{Replies: map[string]gatewaytest.Reply{fetch: elsewhere, "GET /transfers": fixture("transfers_list_failed.json")},
					Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}},
				{Replies: map[string]gatewaytest.Reply{fetch: body(404, noID), "GET /transfers": fixture("transfers_list_failed.json")},
					Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}},
				// Not listed: never "not found", it may have been received.
				{Replies: map[string]gatewaytest.Reply{fetch: body(404, noID), "GET /transfers": body(200, notListed)},
					Err: &gatewaytest.Err{Transient: true, Contains: "may have been received"}},
			},
		},
	})
}

// edited is the documented answer testdata/name with the fields of its
// data set to set (a status word documented without an answer of its
// own, in the documented envelope), then each further pair of top-level
// field and value set.
func edited(t *testing.T, name string, set map[string]any, top ...any) gatewaytest.Reply {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(gatewaytest.Golden(t, name), &m); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
	data, ok := m["data"].(map[string]any)
	if !ok {
		t.Fatalf("testdata/%s has no data", name)
	}
	for k, v := range set {
		data[k] = v
	}
	for i := 0; i+1 < len(top); i += 2 {
		m[top[i].(string)] = top[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return gatewaytest.Reply{Body: string(b)}
}

// hash is the verif-hash header Flutterwave sends: the dashboard's secret
// hash as it is.
func hash(h string) http.Header { return http.Header{"Verif-Hash": {h}} }
