package paystack

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// conformanceKey is the secret key of the conformance suite's account: the
// bearer, and the webhooks' signing key.
const conformanceKey = "sk_test_conformance"

// TestConformance holds the connector to Paystack's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run). Paystack keeps a charge and a transfer under
// our reference (the charge's and the transfer's reference field).
func TestConformance(t *testing.T) {
	pending := gatewaytest.Pending
	failed := gatewaytest.Failed
	fixture := gatewaytest.Fixture
	refused := func(name string, code int) gatewaytest.Reply { return gatewaytest.Reply{Fixture: name, Code: code} }
	reference := gatewaytest.JSONField("reference")
	const (
		charge      = "5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b40" // the charge of charge_request.json, verify_ongoing.json, verify_success.json
		voucher     = "Dial *110# for a payment voucher, then type the voucher in"
		approve     = "Approve the prompt on your phone to finish paying"
		transfer    = "acv_9ee55786-2323-4760-98e2-6380c9cb3f68" // transfer_request.json
		transferred = "acv_9ee55786-2323-4760-98e2-6380c9cb3f67" // transfer_verify_success.json
	)
	step := "GET /charge/" + charge

	// Every step of the Charge API and every transaction status
	// (SOURCES.md, "Charges"), in a charge answer: the documented ones end
	// the payment or say what it waits for; any other word waits.
	var words []gatewaytest.Case
	for status, want := range map[string]gateway.Status{
		"success":       {Outcome: gateway.Succeeded},
		"failed":        failed("failed: words"),
		"abandoned":     failed("abandoned: words"),
		"reversed":      failed("reversed: words"),
		"timeout":       failed("timeout: words"),
		"send_pin":      failed("(send_pin): words"),
		"send_phone":    failed("(send_phone): words"),
		"send_birthday": failed("(send_birthday): words"),
		"send_address":  failed("(send_address): words"),
		"send_otp":      {Outcome: gateway.Pending, NeedsCode: true, Instructions: "words"},
		"pay_offline":   {Outcome: gateway.Pending, Instructions: "words"},
		"open_url":      {Outcome: gateway.Pending, Instructions: "words"},
		"pending":       pending, "ongoing": pending, "processing": pending, "queued": pending, "a-new-one": pending,
	} {
		words = append(words, gatewaytest.Case{Reply: edited(t, "charge_pending.json", map[string]any{"status": status, "display_text": "words"}),
			Want: want})
	}
	// Every transfer status (openapi paths/transfer.yaml), in Verify
	// Transfer's answer.
	var transferWords []gatewaytest.Case
	for status, want := range map[string]gateway.Status{
		"pending": pending, "received": pending, "new-one": pending,
		"otp":       {Outcome: gateway.Pending, Reason: otpReason},
		"success":   {Outcome: gateway.Succeeded, ProviderRef: "TRF_8opchtrhtjlfz90n"},
		"failed":    failed("failed: Account closed"),
		"reversed":  failed("reversed: Account closed"),
		"blocked":   failed("blocked: Account closed"),
		"rejected":  failed("rejected: Account closed"),
		"abandoned": failed("abandoned: " + otpReason),
	} {
		transferWords = append(transferWords, gatewaytest.Case{
			Reply: edited(t, "transfer_verify_success.json", map[string]any{"status": status, "gateway_response": "Account closed"}), Want: want})
	}

	var created atomic.Int32
	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, SecretKey: conformanceKey, HTTP: hc}
		},
		// A payout first creates its recipient (no money moves).
		Setup: map[string]gatewaytest.Reply{"POST /transferrecipient": fixture("transfer_recipient_created.json")},
		Collection: gateway.Collection{Reference: charge, Amount: 2500, Currency: "GHS", Phone: "+233241234567", Operator: "mtn",
			Email: "ama.mensah@example.com"},
		Initiation: "POST /charge",
		Initiated:  gatewaytest.Case{Reply: fixture("charge_pay_offline.json"), Want: gateway.Status{Outcome: gateway.Pending, Instructions: approve}},
		Reference:  reference,
		Request:    "charge_request.json",
		Collect: append([]gatewaytest.Case{
			{Reply: fixture("charge_send_otp.json"), Want: gateway.Status{Outcome: gateway.Pending, NeedsCode: true, Instructions: voucher}},
			{Reply: fixture("charge_pay_offline.json"), Want: gateway.Status{Outcome: gateway.Pending, Instructions: approve}},
			{Reply: fixture("charge_pending.json"), Want: pending},
			{Reply: fixture("charge_success.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "61024"}},
			{Reply: fixture("charge_failed.json"), Want: failed("failed: Insufficient funds")},
			{Reply: fixture("charge_open_url.json"), Want: gateway.Status{Outcome: gateway.Pending, RedirectURL: "https://checkout.example.com/authorize/5e1c7a2b"}},
			{Reply: fixture("charge_send_pin.json"), Want: failed("Paystack asked for a step a mobile money payment cannot give (send_pin)")},
			{Reply: refused("charge_refused.json", 400), Want: failed("Email address is required")},
		}, words...),
		StatusRef: gateway.Ref{Reference: charge},
		Status: []gatewaytest.Case{
			{Reply: fixture("verify_success.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "61024"}},
			// Not settled: Check Pending Charge tells the step it waits on.
			{Reply: fixture("verify_ongoing.json"), Replies: map[string]gatewaytest.Reply{step: fixture("charge_send_otp.json")},
				Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "61025", NeedsCode: true, Instructions: voucher}},
			{Reply: fixture("verify_ongoing.json"), Replies: map[string]gatewaytest.Reply{step: fixture("charge_pay_offline.json")},
				Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "61025", Instructions: approve}},
			{Reply: fixture("verify_ongoing.json"), Replies: map[string]gatewaytest.Reply{step: fixture("charge_failed.json")},
				Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "61025", Reason: "failed: Insufficient funds"}},
			// No step to tell: the transaction stays as Verify says.
			{Reply: fixture("verify_ongoing.json"), Replies: map[string]gatewaytest.Reply{step: {Code: 404, Body: `{"status": false, "message": "Entity not found"}`}},
				Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "61025"}},
			{Reply: refused("verify_not_found.json", 400), Want: gateway.Status{Outcome: gateway.NotFound}},
			// Any other refusal is an error, never a payment not received.
			{Reply: refused("verify_invalid_key.json", 400), Err: &gatewaytest.Err{Contains: "Invalid key"}},
			// A transaction about another reference is not this one.
			{Reply: edited(t, "verify_success.json", map[string]any{"reference": "another"}), Err: &gatewaytest.Err{Contains: "when asked about"}},
			{Reply: edited(t, "verify_success.json", map[string]any{"status": "abandoned", "gateway_response": "Customer went away"}),
				Want: failed("abandoned: Customer went away")},
			{Reply: edited(t, "verify_success.json", map[string]any{"status": "reversed", "gateway_response": "Refunded"}),
				Want: failed("reversed: Refunded")},
		},
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "charge.success", Header: signed(t, "webhook_charge_success.json", conformanceKey),
				Body: fixture("webhook_charge_success.json"), Want: "5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b43"},
			{Name: "transfer.reversed", Header: signed(t, "webhook_transfer_reversed.json", conformanceKey),
				Body: fixture("webhook_transfer_reversed.json"), Want: "a1111111-2222-4333-8444-555555555555"},
			{Name: "refund.processed names the refunded transaction", Header: signed(t, "webhook_refund_processed.json", conformanceKey),
				Body: fixture("webhook_refund_processed.json"), Want: gateway.RefundsOf("5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b40")},
			{Name: "refund webhook without transaction_reference", Header: signature(`{"event": "refund.failed", "data": {"status": "failed"}}`, conformanceKey),
				Body: gatewaytest.Reply{Body: `{"event": "refund.failed", "data": {"status": "failed"}}`}, Err: true},
			{Name: "body changed after signing", Header: signed(t, "webhook_charge_success.json", conformanceKey),
				Body: gatewaytest.Reply{Body: string(gatewaytest.Golden(t, "webhook_charge_success.json")) + " "}, Err: true},
			{Name: "signed with another key", Header: signed(t, "webhook_charge_success.json", "sk_test_another"),
				Body: fixture("webhook_charge_success.json"), Err: true},
			{Name: "unsigned", Header: http.Header{}, Body: fixture("webhook_charge_success.json"), Err: true},
			{Name: "signature not hex", Header: http.Header{"X-Paystack-Signature": {"not-hex"}}, Body: fixture("webhook_charge_success.json"), Err: true},
			{Name: "signed, no reference", Header: signature(`{"event": "charge.success", "data": {}}`, conformanceKey),
				Body: gatewaytest.Reply{Body: `{"event": "charge.success", "data": {}}`}, Err: true},
		},
		Payout: &gatewaytest.PayoutSpec{
			Payout: gateway.Payout{Reference: transfer, Amount: 100000, Currency: "GHS", Phone: "+233551234987", Operator: "mtn", Country: "GH",
				RecipientName: "Abina Nana", Description: "Bonus for the week",
				Created: func(string) error { created.Add(1); return nil }},
			Initiation: "POST /transfer",
			Initiated:  gatewaytest.Case{Reply: fixture("transfer_queued.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "TRF_v5tip3zx8nna9o78"}},
			Reference:  reference,
			Request:    "transfer_request.json", // to the recipient_code of transfer_recipient_created.json
			Sent: []gatewaytest.Case{
				{Reply: fixture("transfer_queued.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "TRF_v5tip3zx8nna9o78"}},
				{Reply: fixture("transfer_otp.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "TRF_1aqrqhoomp0rjro", Reason: otpReason}},
				{Reply: refused("transfer_low_balance.json", 400), Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true,
					Reason: "Your balance is not enough to fulfil this request"}},
				// Initiate Transfer's documented 400 (SOURCES.md, transfer_low_balance.json).
				{Reply: gatewaytest.Reply{Code: 400, Body: `{"status": false, "message": "Recipient specified is invalid", "type": "validation_error", "code": "invalid_transfer_recipient"}`},
					Want: failed("Recipient specified is invalid")},
				// The recipient refused: no transfer is made.
				{Replies: map[string]gatewaytest.Reply{"POST /transferrecipient": {Code: 400, Body: `{"status": false, "message": "Account number is invalid"}`}},
					Want: failed("Account number is invalid")},
			},
			StatusRef: gateway.Ref{Reference: transferred},
			Status: append([]gatewaytest.Case{
				{Reply: fixture("transfer_verify_success.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "TRF_8opchtrhtjlfz90n"}},
				{Reply: refused("transfer_not_found.json", 404), Want: gateway.Status{Outcome: gateway.NotFound}},
				{Reply: edited(t, "transfer_verify_success.json", map[string]any{"reference": "another"}), Err: &gatewaytest.Err{Contains: "when asked about"}},
			}, transferWords...),
		},
		// A Telecel Cash voucher (send_otp), sent as Submit OTP takes it.
		Code: &gatewaytest.CodeSpec{
			Ref: gateway.Ref{Reference: charge}, Code: "482913", Call: "POST /charge/submit_otp", Request: "submit_otp_request.json",
			Cases: []gatewaytest.Case{
				{Replies: map[string]gatewaytest.Reply{"POST /charge/submit_otp": fixture("charge_pending.json")}, Want: pending, Exact: true},
				{Replies: map[string]gatewaytest.Reply{"POST /charge/submit_otp": fixture("charge_success.json")},
					Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "61024"}, Exact: true},
				{Replies: map[string]gatewaytest.Reply{"POST /charge/submit_otp": fixture("submit_otp_failed.json")},
					Want: failed("failed: The voucher could not be used"), Exact: true},
				{Replies: map[string]gatewaytest.Reply{"POST /charge/submit_otp": fixture("charge_send_otp.json")},
					Want: gateway.Status{Outcome: gateway.Pending, NeedsCode: true, Instructions: voucher}, Exact: true},
				// A refusal that says nothing of the charge: the charge is read again.
				{Replies: map[string]gatewaytest.Reply{"POST /charge/submit_otp": refused("submit_otp_invalid_reference.json", 400),
					"GET /transaction/verify/" + charge: fixture("verify_ongoing.json"), step: fixture("charge_send_otp.json")},
					Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "61025", NeedsCode: true, Instructions: voucher,
						Reason: "Transaction reference is invalid"}, Exact: true},
			},
		},
	})
	if n := created.Load(); n != 0 {
		t.Errorf("Payout.Created called %d times: Paystack is asked by our reference", n)
	}
}

// edited is the documented answer testdata/name with the fields of its
// data set to set: a status word documented without an answer of its own,
// in the documented envelope.
func edited(t *testing.T, name string, set map[string]any) gatewaytest.Reply {
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
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return gatewaytest.Reply{Body: string(b)}
}

// signed is the x-paystack-signature of testdata/name under key.
func signed(t *testing.T, name, key string) http.Header {
	t.Helper()
	return signature(string(gatewaytest.Golden(t, name)), key)
}

// signature is the x-paystack-signature Paystack sends with body: the hex
// HMAC-SHA512 of the raw body under the secret key.
func signature(body, key string) http.Header {
	mac := hmac.New(sha512.New, []byte(key))
	mac.Write([]byte(body))
	return http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}}
}
