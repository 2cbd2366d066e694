// Package paystack is the connector to Paystack's mobile money charges
// (POST /charge, POST /charge/submit_otp for the voucher Telecel Cash asks
// for, GET /transaction/verify/{reference} and GET /charge/{reference})
// and transfers to mobile money wallets (POST /transferrecipient, POST
// /transfer, GET /transfer/verify/{reference}) and refunds (POST /refund,
// GET /refund/{id}), with their signed webhooks, and a simulator of that
// part of its API. Facts from Paystack's own
// material: its code samples for its docs (PaystackOSS/doc-code-snippets),
// its OpenAPI description (PaystackOSS/openapi), its iOS SDK
// (PaystackHQ/paystack-sdk-ios) and paystack.com/docs; testdata/SOURCES.md
// says which fact comes from where.
//
// It imports the domain and the gateway package.
package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a Paystack account.
type Client struct {
	BaseURL   string // https://api.paystack.co, or a simulator's
	SecretKey string // sk_test_... or sk_live_...: the bearer, and the webhooks' signing key
	HTTP      *http.Client
}

var (
	_ gateway.Connector     = (*Client)(nil)
	_ gateway.Payer         = (*Client)(nil)
	_ gateway.CodeSubmitter = (*Client)(nil)
)

type chargeRequest struct {
	Amount      int64       `json:"amount"` // subunits: our minor units as they are
	Email       string      `json:"email"`
	Currency    string      `json:"currency"`
	Reference   string      `json:"reference"`
	MobileMoney mobileMoney `json:"mobile_money"`
}

type mobileMoney struct {
	Phone    string `json:"phone"`
	Provider string `json:"provider"`
}

// submitOTP is POST /charge/submit_otp.
type submitOTP struct {
	OTP       string `json:"otp"`
	Reference string `json:"reference"`
}

// answer is Paystack's envelope around a charge or a transaction: the
// answer of POST /charge and of its submit_ steps, of GET /charge/{reference}
// and of GET /transaction/verify/{reference}. A refusal carries code
// (transaction_not_found, ...) beside status false and message.
type answer struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
	Code    string `json:"code"`
	Data    struct {
		Reference       string `json:"reference"`
		Status          string `json:"status"`
		DisplayText     string `json:"display_text"`
		Message         string `json:"message"` // a failed charge's reason ("Insufficient funds")
		GatewayResponse string `json:"gateway_response"`
		URL             string `json:"url"` // open_url: the page the customer must go to
		ID              int64  `json:"id"`
	} `json:"data"`
}

// NoEmail is the address sent when a session has no customer e-mail:
// Paystack requires one, and .invalid (RFC 6761) can never receive mail.
func NoEmail(reference string) string { return "customer-" + reference + "@cauri.invalid" }

// chargePhone writes the payer's E.164 number the way the Charge API's own
// samples have it for the charge's currency: Ghana's national form with its
// leading 0 (+233551234987 is 0551234987, as in every GHS sample); Kenya's
// international digits without the + (254700000000, the KES sample).
// Paystack's iOS SDK sends +254... and +233... to its checkout's own
// mobile money endpoint, another API than POST /charge.
func chargePhone(phone, currency string) string {
	if currency == "GHS" {
		return accountNumber(phone, currency)
	}
	return strings.TrimPrefix(phone, "+")
}

func encodeCharge(c gateway.Collection) chargeRequest {
	email := c.Email
	if email == "" {
		email = NoEmail(c.Reference)
	}
	return chargeRequest{Amount: c.Amount, Email: email, Currency: string(c.Currency), Reference: c.Reference,
		MobileMoney: mobileMoney{Phone: chargePhone(c.Phone, string(c.Currency)), Provider: c.Operator}}
}

// Collect implements gateway.Connector.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, http.MethodPost, "/charge", encodeCharge(col), &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if !a.Status || code == http.StatusBadRequest {
		return gateway.Status{Outcome: gateway.Failed, Reason: a.Message}, nil
	}
	return chargeStatus(a), nil
}

// SubmitCode implements gateway.CodeSubmitter: the voucher or one-time code
// the customer got after a charge answered send_otp (Telecel Cash: the
// customer dials a USSD code for a voucher) goes to POST
// /charge/submit_otp, whose answer is read like the charge's. Paystack
// answers a code it takes with the charge's next step (pending, pay_offline,
// success) and a code it refuses with status failed and its reason, or
// with send_otp again; an answer with status false (a reference it does
// not know at this step) says nothing of the charge, so the charge is read
// again and the refusal given as the reason while it still waits.
func (c *Client) SubmitCode(ctx context.Context, ref gateway.Ref, otp string) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, http.MethodPost, "/charge/submit_otp", submitOTP{OTP: otp, Reference: ref.Reference}, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case a.Status && code < 300:
		return chargeStatus(a), nil
	}
	st, err := c.CollectionStatus(ctx, ref)
	if err != nil {
		return gateway.Status{}, err
	}
	if st.Outcome == gateway.Pending && a.Message != "" {
		st.Reason = a.Message
	}
	return st, nil
}

// chargeStatus reads a charge's data.status, whichever endpoint answered.
// The Charge API's steps (paystack.com/docs/payments/payment-channels,
// "Handling Charge API responses"; doc-code-snippets src/api/charges) and
// the transaction's statuses of Verify Transaction:
//   - success: paid; failed, reversed, abandoned: final; timeout (the
//     customer never approved, final as Paystack's iOS SDK treats it): failed.
//   - send_otp: waiting for a code the customer received (Telecel Cash's
//     voucher): NeedsCode, with Paystack's display_text for the customer.
//   - pay_offline: waiting for the customer to approve on the phone, or to
//     pay by the instructions of display_text.
//   - open_url: the customer must go to data.url.
//   - pending, ongoing, processing, queued and any status not known here:
//     still pending; the status is read again.
//   - send_pin, send_phone, send_birthday, send_address: steps of card and
//     bank charges that a mobile money payment has no way to answer: the
//     charge can never go on, and nothing was taken without them, so it is
//     failed rather than left waiting forever.
func chargeStatus(a answer) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending}
	if a.Data.ID != 0 {
		st.ProviderRef = fmt.Sprint(a.Data.ID)
	}
	words := firstOf(a.Data.Message, a.Data.GatewayResponse, a.Data.DisplayText)
	switch s := a.Data.Status; s {
	case "success":
		st.Outcome = gateway.Succeeded
	case "failed", "abandoned", "reversed", "timeout":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix(s+": "+words, ": ")
	case "send_otp":
		st.NeedsCode, st.Instructions = true, a.Data.DisplayText
	case "pay_offline":
		st.Instructions = a.Data.DisplayText
	case "open_url":
		st.RedirectURL, st.Instructions = a.Data.URL, a.Data.DisplayText
	case "send_pin", "send_phone", "send_birthday", "send_address":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix("Paystack asked for a step a mobile money payment cannot give ("+s+"): "+words, ": ")
	}
	return st
}

// firstOf returns the first of words that is not blank.
func firstOf(words ...string) string {
	for _, w := range words {
		if w = strings.TrimSpace(w); w != "" {
			return w
		}
	}
	return ""
}

// settled reports a transaction status that will not change.
func settled(status string) bool {
	switch status {
	case "success", "failed", "abandoned", "reversed", "timeout":
		return true
	}
	return false
}

// CollectionStatus implements gateway.Connector. Verify Transaction says
// whether the money came; while it has not, Check Pending Charge (GET
// /charge/{reference}) says which step the charge waits on (a voucher to
// enter, the customer's approval), which Verify does not.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, http.MethodGet, "/transaction/verify/"+url.PathEscape(ref.Reference), nil, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case !a.Status || code >= 300:
		if notFound(code, a) {
			return gateway.Status{Outcome: gateway.NotFound}, nil
		}
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Paystack answered %d to a transaction's verification: %s", code, a.Message)}
	case a.Data.Reference != "" && a.Data.Reference != ref.Reference:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Paystack verified transaction %q when asked about %q", a.Data.Reference, ref.Reference)}
	case settled(a.Data.Status):
		return chargeStatus(a), nil
	}
	st := chargeStatus(a)
	var step answer
	code, err = c.call(ctx, http.MethodGet, "/charge/"+url.PathEscape(ref.Reference), nil, &step)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case !step.Status || code >= 300:
		// The transaction exists (Verify found it) but its charge has no
		// step to tell: it stays as Verify says.
		return st, nil
	}
	next := chargeStatus(step)
	if next.ProviderRef == "" {
		next.ProviderRef = st.ProviderRef
	}
	return next, nil
}

// notFound reports Paystack's answer for a reference it holds no
// transaction of: 404, or 400 with code transaction_not_found or a message
// saying so ("Transaction reference not found"); any other refusal (an
// invalid key answered 400) is not taken for one, since NotFound lets the
// payment be tried elsewhere.
func notFound(code int, a answer) bool {
	return code == http.StatusNotFound || code == http.StatusBadRequest &&
		(a.Code == "transaction_not_found" || strings.Contains(strings.ToLower(a.Message), "not found"))
}

// CallbackReference implements gateway.Connector for charge, transfer and
// refund webhooks alike: it checks the webhook's x-paystack-signature (hex
// HMAC-SHA512 of the raw body under the secret key) before reading it.
// charge.success, transfer.success, transfer.failed and transfer.reversed
// name our reference in data.reference. The refund events (refund.pending,
// refund.processing, refund.processed, refund.failed,
// refund.needs-attention) name the refunded transaction's reference (ours)
// in data.transaction_reference, and no id of the refund but in
// needs-attention: they are answered as gateway.RefundsOf that reference,
// and every pending refund of the payment is checked.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	mac := hmac.New(sha512.New, []byte(c.SecretKey))
	mac.Write(body)
	got, err := hex.DecodeString(h.Get("X-Paystack-Signature"))
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return "", errors.New("Paystack webhook with a missing or wrong signature")
	}
	var ev struct {
		Event string `json:"event"`
		Data  struct {
			Reference            string `json:"reference"`
			TransactionReference string `json:"transaction_reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return "", errors.New("Paystack webhook that is not JSON")
	}
	if strings.HasPrefix(ev.Event, "refund.") {
		if ev.Data.TransactionReference == "" {
			return "", errors.New("Paystack refund webhook without a transaction_reference")
		}
		return gateway.RefundsOf(ev.Data.TransactionReference), nil
	}
	if ev.Data.Reference == "" {
		return "", errors.New("Paystack webhook without a reference")
	}
	return ev.Data.Reference, nil
}

// recipientRequest is POST /transferrecipient for a mobile money wallet.
type recipientRequest struct {
	Type          string `json:"type"` // mobile_money
	Name          string `json:"name"`
	AccountNumber string `json:"account_number"` // the phone number, national format
	BankCode      string `json:"bank_code"`      // the telco's code (GET /bank?type=mobile_money)
	Currency      string `json:"currency"`
}

// recipientAnswer is the answer to a recipient's creation.
type recipientAnswer struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
	Data    struct {
		RecipientCode string `json:"recipient_code"`
	} `json:"data"`
}

// transferRequest is POST /transfer.
type transferRequest struct {
	Source    string `json:"source"` // balance: the only source
	Amount    int64  `json:"amount"` // subunits: our minor units as they are
	Recipient string `json:"recipient"`
	Reference string `json:"reference"`
	Reason    string `json:"reason,omitempty"`
	Currency  string `json:"currency"`
}

// transferAnswer is a transfer as its initiation and its verification
// answer it.
type transferAnswer struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
	Data    struct {
		Reference       string `json:"reference"`
		Status          string `json:"status"`
		TransferCode    string `json:"transfer_code"`
		GatewayResponse any    `json:"gateway_response"` // null, or the processor's words
	} `json:"data"`
}

// bankCodes are Paystack's mobile money telco codes for transfers, by our
// operator codes (the charges' providers): Ghana's MTN, AirtelTigo and
// Telecel (ex-Vodafone), as GET /bank?currency=GHS&type=mobile_money lists
// them; Kenya's M-PESA wallet as MPESA, the code Paystack's iOS SDK gives an
// M-PESA wallet (Paystack's samples show only a till, MPTILL, of type
// mobile_money_business: MPESA for a wallet recipient is not confirmed).
var bankCodes = map[string]string{"mtn": "MTN", "atl": "ATL", "vod": "VOD", "mpesa": "MPESA"}

// callingCodes are the country calling codes of the transfers' currencies.
var callingCodes = map[string]string{"GHS": "233", "KES": "254"}

// otpReason is why a transfer waits at status otp.
const otpReason = "the transfer waits for the OTP Paystack sent to the merchant; turn off OTP for transfers " +
	"in Paystack's dashboard (Settings, Preferences) so that API transfers complete on their own"

// accountNumber writes an E.164 number the way Paystack's documented
// mobile money recipient has it: national, with its leading 0
// (+233551234987 is 0551234987).
func accountNumber(phone, currency string) string {
	digits := strings.TrimPrefix(phone, "+")
	if cc := callingCodes[currency]; cc != "" && strings.HasPrefix(digits, cc) {
		return "0" + digits[len(cc):]
	}
	return digits
}

// encodeRecipient builds the recipient of a payout; false when Paystack
// has no transfers to the operator.
func encodeRecipient(p gateway.Payout) (recipientRequest, bool) {
	bank, ok := bankCodes[p.Operator]
	account := accountNumber(p.Phone, string(p.Currency))
	name := strings.TrimSpace(p.RecipientName)
	if name == "" {
		name = account // Paystack requires a name; the number names the wallet
	}
	return recipientRequest{Type: "mobile_money", Name: name, AccountNumber: account, BankCode: bank, Currency: string(p.Currency)}, ok
}

// encodeTransfer builds the transfer of a payout to recipient (a
// recipient_code). Our reference, a lowercase UUID, fits Paystack's
// lowercase letters, digits, - and _.
func encodeTransfer(p gateway.Payout, recipient string) transferRequest {
	return transferRequest{Source: "balance", Amount: p.Amount, Recipient: recipient, Reference: p.Reference,
		Reason: p.Description, Currency: string(p.Currency)}
}

// Payout implements gateway.Payer: it creates the recipient (Paystack
// answers with the existing one for an account it knows; no money moves),
// then the transfer under our reference. Paystack is asked by that
// reference, so p.Created is not called.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	rr, ok := encodeRecipient(p)
	if !ok {
		return gateway.Status{Outcome: gateway.Failed, Reason: fmt.Sprintf("Paystack has no transfers to operator %q", p.Operator)}, nil
	}
	var rec recipientAnswer
	code, err := c.transferCall(ctx, http.MethodPost, "/transferrecipient", rr, &rec)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case !rec.Status || code >= 300:
		return gateway.Status{Outcome: gateway.Failed, Reason: rec.Message}, nil
	case rec.Data.RecipientCode == "":
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Paystack answered a recipient without its recipient_code"}
	}
	var a transferAnswer
	code, err = c.transferCall(ctx, http.MethodPost, "/transfer", encodeTransfer(p, rec.Data.RecipientCode), &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case a.Status && code < 300:
		return transferStatus(a), nil
	case duplicate(a.Message):
		// Our reference is already a transfer (an earlier attempt whose
		// answer was lost): Paystack refuses it again, so read that one.
		return c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference})
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: a.Message, LowBalance: lowBalance(a.Message)}, nil
}

// duplicate reports Paystack's refusal of a reference already used by a
// transfer ("This reference has already been used on a prior transfer";
// its exact message is not documented).
func duplicate(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "duplicate") || strings.Contains(m, "reference") && strings.Contains(m, "already")
}

// lowBalance reports Paystack's refusal for want of funds in the
// merchant's Paystack balance ("Your balance is not enough to fulfil this
// request").
func lowBalance(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "balance is not enough") || strings.Contains(m, "insufficient")
}

// IdempotentPayout: Paystack never makes two transfers with one reference,
// but it refuses the second request instead of answering it like the first
// (and the words of that refusal are not documented), so a payout is not
// simply sent again: its status is read.
func (c *Client) IdempotentPayout() bool { return false }

// PayoutStatus implements gateway.Payer with GET /transfer/verify/{reference}.
// Paystack answers 404 for a reference it never made a transfer of (a
// request refused at validation, its balance check included, creates none).
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var a transferAnswer
	code, err := c.transferCall(ctx, http.MethodGet, "/transfer/verify/"+url.PathEscape(ref.Reference), nil, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusNotFound:
		return gateway.Status{Outcome: gateway.NotFound}, nil
	case code >= 300 || !a.Status:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Paystack answered %d to a transfer's verification: %s", code, a.Message)}
	case a.Data.Reference != "" && a.Data.Reference != ref.Reference:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Paystack verified transfer %q when asked about %q", a.Data.Reference, ref.Reference)}
	}
	return transferStatus(a), nil
}

// transferStatus reads a transfer's status. success, failed, reversed (the
// wallet refused it: the amount is back in the balance), abandoned,
// blocked and rejected are final; pending and received (awaiting the
// merchant's approval URL) are not. otp stays pending: the merchant can
// still enter the OTP in Paystack's dashboard and have it paid, so calling
// it failed could pay twice; left alone it is abandoned after 30 minutes.
func transferStatus(a transferAnswer) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending, ProviderRef: a.Data.TransferCode}
	switch s := a.Data.Status; s {
	case "success":
		st.Outcome = gateway.Succeeded
	case "otp":
		st.Reason = otpReason
	case "abandoned":
		st.Outcome, st.Reason = gateway.Failed, "abandoned: "+otpReason
	case "failed", "reversed", "blocked", "rejected":
		st.Outcome, st.Reason = gateway.Failed, s
		if words, _ := a.Data.GatewayResponse.(string); words != "" {
			st.Reason += ": " + words
		}
	}
	return st
}

// transferCall is call for the transfer endpoints, where a 429 (too many
// requests) is transient: Paystack did nothing.
func (c *Client) transferCall(ctx context.Context, method, path string, in, out any) (int, error) {
	code, err := c.call(ctx, method, path, in, out)
	if err == nil && code == http.StatusTooManyRequests {
		return code, &gateway.Error{Transient: true, Answered: true, Message: "Paystack answered 429 (too many requests)"}
	}
	return code, err
}

// call sends one request to Paystack with the gateway's secret key.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	return gateway.Call(ctx, c.HTTP, "Paystack", method, gateway.URL(c.BaseURL, path),
		http.Header{"Authorization": {"Bearer " + c.SecretKey}}, in, out)
}
