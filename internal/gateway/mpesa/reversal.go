package mpesa

// Refunds of collections through Daraja's Reversal API. Sources:
// testdata/SOURCES.md, "Reversals".
//
// A reversal is POST /mpesa/reversal/v1/request naming the payment by its
// M-Pesa receipt number (TransactionID) and the organisation that received
// it (ReceiverParty, RecieverIdentifierType "11", spelt so by Safaricom's
// own library and portal). Like B2C, Daraja acknowledges it at once and
// POSTs the outcome later to the ResultURL (or the QueueTimeOutURL); it
// takes no id of ours and no idempotency key. So, as for B2C:
//
//   - the ResultURL and QueueTimeOutURL carry the refund's reference, the
//     amount, the receipt reversed and their token (tokenFor): a result
//     without the right token, or about another receipt or amount, is
//     ignored;
//   - the refund is never sent twice (IdempotentRefund false); one whose
//     acknowledgement or result was lost is asked about with the
//     transaction status query, whose own result comes back the same way.
//
// The portal's Reversal page describes the reversal of a payment received
// (C2B), with Amount "Transaction amount"; nothing describes reversing part
// of one, and M-Pesa refuses to reverse a transaction twice (R000001 "The
// transaction has already been reversed"): a reversal gives back the whole
// payment (WholeRefundsOnly). Its initiator needs the "Org Reversals
// Initiator" role on the shortcode that received the payment: the
// gateway's reversal initiator when it has one (reversal_initiator_name,
// with reversal_initiator_password or reversal_security_credential), else
// the B2C initiator; the status queries about reversals are the same
// initiator's (it needs the "Transaction Status query ORG API" role too).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// reversalPath is the Reversal API's (the portal's and the library's v1).
const reversalPath = "/mpesa/reversal/v1/request"

// The reversal's fixed fields: its only CommandID, and the receiver's
// identifier type, "11" (the portal: "Type of Organization (should be
// '11')"; the library's default).
const (
	transactionReversal  = "TransactionReversal"
	reversalReceiverType = "11"
)

// The result codes of a reversal that name the initiator (the portal's
// Reversal page): 21 "The initiator is not allowed to initiate" (no Org
// Reversals Initiator role), 2001 "The initiator information is invalid",
// 8006 "The security credential is locked".
const (
	resultNotAllowed = "21"
	resultLocked     = "8006"
)

// reversalRequest is POST /mpesa/reversal/v1/request, its numbers written
// as strings, as in the portal's example (testdata/reversal_request.json).
type reversalRequest struct {
	Initiator              string `json:"Initiator"`
	SecurityCredential     string `json:"SecurityCredential"`
	CommandID              string `json:"CommandID"`
	TransactionID          string `json:"TransactionID"`
	Amount                 string `json:"Amount"`
	ReceiverParty          string `json:"ReceiverParty"`
	RecieverIdentifierType string `json:"RecieverIdentifierType"`
	ResultURL              string `json:"ResultURL"`
	QueueTimeOutURL        string `json:"QueueTimeOutURL"`
	Remarks                string `json:"Remarks"`
	Occasion               string `json:"Occasion"`
}

// reversalRemarksMax is Remarks' longest ("2-100 characters").
const reversalRemarksMax = 100

// receiverParty is the organisation a collection paid: the till of a buy
// goods gateway, else the paybill shortcode.
func (c *Client) receiverParty() string {
	if till := strings.TrimSpace(c.TillNumber); till != "" {
		return till
	}
	return strings.TrimSpace(c.ShortCode)
}

// reversalInitiator is who reverses: the gateway's reversal initiator when
// it has one, else its B2C initiator; prefix is its credentials' ("" or
// "reversal_").
func (c *Client) reversalInitiator() (name, prefix string) {
	if name := strings.TrimSpace(c.ReversalInitiatorName); name != "" {
		return name, "reversal_"
	}
	return strings.TrimSpace(c.InitiatorName), ""
}

// reversalCredential is the reversal initiator's SecurityCredential.
func (c *Client) reversalCredential() (string, error) {
	if _, prefix := c.reversalInitiator(); prefix != "" {
		return c.securityCredentialOf(&c.reversalCred, c.ReversalSecurityCredential, c.ReversalInitiatorPassword, "reversal_security_credential")
	}
	return c.securityCredential()
}

// RefundsUnavailable implements the refund service's question: a gateway
// reverses payments only with an API initiator (the reversal initiator's
// credentials, or the B2C ones).
func (c *Client) RefundsUnavailable() string {
	name, prefix := c.reversalInitiator()
	password, ready := c.InitiatorPassword, c.SecurityCredential
	if prefix != "" {
		password, ready = c.ReversalInitiatorPassword, c.ReversalSecurityCredential
	}
	switch {
	case name == "":
		return `M-Pesa refunds a payment by reversing it, which needs an API initiator with the "Org Reversals Initiator" role: the gateway has no "reversal_initiator_name" nor "initiator_name"`
	case strings.TrimSpace(ready) == "" && password == "":
		return `M-Pesa refunds a payment by reversing it, which needs the initiator's "` + prefix + `initiator_password" (or a ready "` + prefix + `security_credential"): the gateway has neither`
	}
	return ""
}

// WholeRefundsOnly implements the refund service's question: a reversal
// gives back the whole payment.
func (c *Client) WholeRefundsOnly() bool { return true }

// CollectionUnrefundable implements the refund service's question: a
// reversal names the payment by its M-Pesa receipt, which the payment's
// ProviderRef is only once its callback gave it (PaidReference).
func (c *Client) CollectionUnrefundable(ref gateway.Ref) string {
	if isReceipt(strings.TrimSpace(ref.ProviderRef)) {
		return ""
	}
	return "M-Pesa reverses a payment by its receipt number, and Safaricom's callback that gives it never reached Cauri for this payment " +
		"(the status query does not give it); reverse it from the M-PESA organisation portal, or ask for \"method\": \"payout\""
}

// IdempotentRefund implements gateway.Refunder: Daraja takes no
// idempotency key.
func (c *Client) IdempotentRefund() bool { return false }

// reversalConfigured refuses, before anything is sent, a client that cannot
// reverse.
func (c *Client) reversalConfigured() error {
	for _, f := range []struct{ value, credential string }{
		{c.ConsumerKey, "consumer_key"}, {c.ConsumerSecret, "consumer_secret"}, {c.receiverParty(), "shortcode"},
	} {
		if strings.TrimSpace(f.value) == "" {
			return &gateway.Error{NotSent: true, Message: fmt.Sprintf("M-Pesa reversals need the credential %q", f.credential)}
		}
	}
	if why := c.RefundsUnavailable(); why != "" {
		return &gateway.Error{NotSent: true, Message: why}
	}
	return nil
}

// Refund implements gateway.Refunder: the reversal of the whole payment
// r.Collection, named by its M-Pesa receipt (the attempt's ProviderRef once
// the payment's callback gave it, see PaidReference). A payment whose
// receipt is unknown (its callback never came: the status query does not
// give it) cannot be reversed through the API: nothing is sent, and the
// error says what the merchant can do. Daraja's acknowledgement is pending,
// with its OriginatorConversationID as ProviderRef (what the status query
// asks by); a 4xx or another ResponseCode is a refusal; a 5xx, an
// unreadable answer or none concludes nothing.
func (c *Client) Refund(ctx context.Context, r gateway.Refund) (gateway.Status, error) {
	receipt := strings.TrimSpace(r.Collection.ProviderRef)
	whole, amountOK := shillings(r.Amount, r.Currency)
	why := ""
	switch {
	case r.Currency != "KES":
		why = "M-Pesa reverses Kenyan shillings (KES) only, not " + string(r.Currency)
	case !amountOK:
		why = "M-Pesa reverses whole shillings; the amount is not one"
	case strings.TrimSpace(r.Reference) == "":
		why = "the refund has no reference"
	}
	if why != "" {
		return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to M-Pesa: " + why}, nil
	}
	if why := c.CollectionUnrefundable(r.Collection); why != "" {
		return gateway.Status{}, &gateway.Error{NotSent: true, Message: why}
	}
	if err := c.reversalConfigured(); err != nil {
		return gateway.Status{}, err
	}
	amount := strconv.FormatInt(whole, 10)
	result, err := c.resultURLFor(r.NotifyURL, "reversal", r.Reference, amount, receipt)
	if err != nil {
		return gateway.Status{}, &gateway.Error{NotSent: true, Message: "M-Pesa reversal: " + err.Error()}
	}
	timeout, _ := c.resultURLFor(r.NotifyURL, "reversal_timeout", r.Reference, amount, receipt)
	cred, err := c.reversalCredential()
	if err != nil {
		return gateway.Status{}, err
	}
	a, refused, err := c.acknowledged(ctx, reversalPath, "the reversal", "check the gateway's address, and that its Daraja app has the Reversal product",
		c.encodeReversal(r.Reference, receipt, amount, r.Reason, cred, result, timeout))
	if err != nil || refused != nil {
		return refusedOr(refused), err
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: strings.TrimSpace(a.OriginatorConversationID)}, nil
}

// encodeReversal is the reversal of receipt's whole amount (whole
// shillings), received by the gateway's shortcode (or till); Remarks is the
// merchant's reason's letters, digits and spaces ("Refund" when it has
// fewer than 2), Occasion our reference's first 12 letters and digits.
func (c *Client) encodeReversal(reference, receipt, amount, reason, cred, result, timeout string) reversalRequest {
	remarks := alphanumerics(reason, reversalRemarksMax, true)
	if len(remarks) < 2 {
		remarks = "Refund"
	}
	name, _ := c.reversalInitiator()
	return reversalRequest{Initiator: name, SecurityCredential: cred, CommandID: transactionReversal, TransactionID: receipt,
		Amount: amount, ReceiverParty: c.receiverParty(), RecieverIdentifierType: reversalReceiverType, ResultURL: result,
		QueueTimeOutURL: timeout, Remarks: remarks, Occasion: accountReference(reference)}
}

// RefundStatus implements gateway.Refunder: the outcome a trusted result
// brought (see CallbackReference), else the transaction status query is
// sent and the refund is pending until its result arrives. The query names
// the reversal by the OriginatorConversationID Daraja acknowledged it with
// (ref.ProviderRef); when that acknowledgement was lost, it asks about the
// reversed payment, by its receipt. Never NotFound: nothing proves Daraja
// did not receive a reversal whose answer was lost.
func (c *Client) RefundStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if r, ok := c.results.take(ref.Reference); ok {
		return r.Status, nil
	}
	if err := c.reversalConfigured(); err != nil {
		return gateway.Status{}, err
	}
	name, _ := c.reversalInitiator()
	req := statusRequest{Initiator: name, CommandID: "TransactionStatusQuery", PartyA: c.receiverParty(), IdentifierType: "4",
		Remarks: "Status", Occasion: accountReference(ref.Reference)}
	kind, subject := "reversal_status", strings.TrimSpace(ref.ProviderRef)
	if subject != "" {
		req.OriginatorConversationID = subject
	} else {
		if ref.Collection == nil || !isReceipt(strings.TrimSpace(ref.Collection.ProviderRef)) {
			return gateway.Status{}, &gateway.Error{Message: "M-Pesa reversal " + ref.Reference + ": neither Daraja's id of the reversal nor the payment's receipt is known: it cannot be asked about; look for it in the M-PESA organisation portal"}
		}
		kind, subject = "reversed_status", strings.TrimSpace(ref.Collection.ProviderRef)
		req.TransactionID = subject
	}
	var err error
	if req.ResultURL, err = c.resultURLFor(ref.NotifyURL, kind, ref.Reference, "", subject); err != nil {
		return gateway.Status{}, &gateway.Error{Message: "M-Pesa status query: " + err.Error()}
	}
	req.QueueTimeOutURL, _ = c.resultURLFor(ref.NotifyURL, "status_timeout", ref.Reference, "", subject)
	if req.SecurityCredential, err = c.reversalCredential(); err != nil {
		return gateway.Status{}, err
	}
	return c.statusQuery(ctx, req, ref.ProviderRef)
}

// reversalCallback reads a trusted (token checked) reversal result, or the
// result of a status query about a reversal, for the refund with our
// reference; subject is the receipt reversed (reversal), the reversal's
// OriginatorConversationID (reversal_status) or the reversed payment's
// receipt (reversed_status). A final outcome is kept for RefundStatus.
func (c *Client) reversalCallback(kind, reference, amount, subject string, body []byte) error {
	if kind == "reversal_timeout" {
		return nil // only a signal: the status query decides
	}
	var b resultBody
	if err := json.Unmarshal(body, &b); err != nil || b.Result.ResultCode == "" {
		return errors.New("M-Pesa reversal callback is not a Result")
	}
	switch kind {
	case "reversal":
		if orig := b.param("OriginalTransactionID"); orig != "" && orig != subject {
			return errors.New("M-Pesa reversal result about " + truncate(orig, 20) + ", not " + subject + ": ignored")
		}
		if !sameAmount(b.param("Amount"), amount) {
			return errors.New("M-Pesa reversal result of " + truncate(b.param("Amount"), 20) + " KES, not " + amount + ": ignored")
		}
		_, prefix := c.reversalInitiator()
		c.results.put(reference, B2CResult{Status: reversalOutcome(b, prefix)})
	case "reversal_status", "reversed_status":
		param, want := "OriginatorConversationID", "Completed"
		if kind == "reversed_status" {
			param, want = "ReceiptNo", "Reversed"
		}
		if got := b.param(param); got != "" && got != subject {
			return errors.New("M-Pesa status result about " + truncate(got, 60) + ", not " + subject + ": ignored")
		}
		// Only a completed reversal concludes (or, asked about the payment,
		// a payment said reversed): any other answer (M-PESA's 2032 "does
		// not exist" included: a refund is never ended as not received)
		// leaves the refund pending, never ended on a guess, and is not
		// a signal either (the reconciler asks again, with its backoff).
		if b.Result.ResultCode != "0" || !strings.EqualFold(b.param("TransactionStatus"), want) {
			return errors.New("M-Pesa status result about refund " + reference + " concludes nothing (" +
				truncate(strings.Trim(string(b.Result.ResultCode)+": "+b.Result.ResultDesc, ": "), 100) + "): the reconciler asks again")
		}
		receipt := ""
		if kind == "reversal_status" {
			receipt = firstNonEmpty(b.param("ReceiptNo"), b.Result.TransactionID)
		}
		c.results.put(reference, B2CResult{Status: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: receipt}})
	}
	return nil
}

// reversalOutcome reads a reversal's result: ResultCode 0 reversed (the
// ProviderRef its TransactionID, the reversal's own receipt), any other
// code failed in Daraja's words, with what the merchant must fix when it
// names the initiator (whose credentials' names begin with prefix: ""
// or "reversal_").
func reversalOutcome(b resultBody, prefix string) gateway.Status {
	r := b.Result
	if r.ResultCode == "0" {
		return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: strings.TrimSpace(r.TransactionID)}
	}
	why := truncate(strings.Trim(string(r.ResultCode)+": "+strings.TrimSpace(r.ResultDesc), ": "), 200)
	switch r.ResultCode {
	case resultNotAllowed:
		why += " (the gateway's " + prefix + `initiator_name needs the "Org Reversals Initiator" role on the shortcode that received the payment)`
	case resultInitiator, resultLocked:
		why += " (check the gateway's " + prefix + "initiator_name and " + prefix + "initiator_password or " + prefix + "security_credential)"
	}
	return gateway.Status{Outcome: gateway.Failed, ProviderRef: strings.TrimSpace(r.TransactionID), Reason: why,
		CredentialsRefused: r.ResultCode == resultInitiator || r.ResultCode == resultLocked || r.ResultCode == resultNotAllowed}
}
