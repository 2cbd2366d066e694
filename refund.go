package cauri

import (
	"encoding/json"
	"time"
)

// RefundStatus is where a refund stands.
type RefundStatus string

const (
	RefundPending   RefundStatus = "pending" // committed; the aggregator (or the payout) has it or is about to
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
)

// RefundMethod is how a refund's money goes back to the payer.
type RefundMethod string

const (
	// RefundByAggregator: the aggregator that collected the payment
	// refunds it through its own refund API.
	RefundByAggregator RefundMethod = "aggregator"
	// RefundByPayout: a transfer to the payer's wallet through a gateway
	// that sends money, with the transfers' rules (the merchant asks for
	// it where the aggregator cannot refund).
	RefundByPayout RefundMethod = "payout"
)

// MaxRefundReason bounds a refund's reason, in characters.
const MaxRefundReason = 500

// Refund is money given back to the payer of a successful checkout
// session, in whole or in part. Like a transfer, it is committed, pending,
// before its aggregator is called, and its Reference is the aggregator's
// idempotency id where the aggregator takes one (pawaPay's refundId, MTN
// MoMo's X-Reference-Id); ProviderRef is the aggregator's own id of it,
// the only way to ask Paystack and Flutterwave about it.
type Refund struct {
	ID          string
	WorkspaceID string
	Livemode    bool
	SessionID   string // the refunded transaction
	AttemptID   string // the attempt that collected it ("" for a test session)
	GatewayID   string // the gateway it goes through ("" for a test session)
	Provider    string // "sandbox" for a test session
	Amount      int64  // minor units of Currency
	Currency    Currency
	Status      RefundStatus
	FailureCode string
	// FailureMessage is the aggregator's words, when failed.
	FailureMessage string
	Method         RefundMethod
	Reason         string // the merchant's, free text
	Reference      string // a UUID, ours: the aggregator's idempotency id, where it takes one
	ProviderRef    string // the aggregator's own id, once known
	TransferID     string // the transfer that pays it back, for RefundByPayout
	CreatedAt      time.Time
	UpdatedAt      time.Time
	CompletedAt    *time.Time
	// InitiatedAt is when the refund call returned (or its transfer was
	// created); until then nobody asks the aggregator about it.
	InitiatedAt *time.Time
}

// RefundObject is the public JSON form of a refund: API responses and the
// "refund" of a payment.updated event's data.
type RefundObject struct {
	ID             string       `json:"id"`
	Object         string       `json:"object"`
	TransactionID  string       `json:"transaction_id"`
	Amount         json.Number  `json:"amount"`
	Currency       Currency     `json:"currency"`
	Status         RefundStatus `json:"status"`
	FailureCode    *string      `json:"failure_code"`
	FailureMessage *string      `json:"failure_message"`
	Method         RefundMethod `json:"method"`
	Reason         *string      `json:"reason"`
	Provider       string       `json:"provider"`
	TransferID     *string      `json:"transfer_id"`
	Livemode       bool         `json:"livemode"`
	CreatedAt      string       `json:"created_at"`
	UpdatedAt      string       `json:"updated_at"`
	CompletedAt    *string      `json:"completed_at"`
}

// Object returns the public form of r.
func (r *Refund) Object() RefundObject {
	return RefundObject{
		ID: r.ID, Object: "refund", TransactionID: r.SessionID, Amount: json.Number(FormatAmount(r.Amount, r.Currency)),
		Currency: r.Currency, Status: r.Status, FailureCode: nullable(r.FailureCode), FailureMessage: nullable(r.FailureMessage),
		Method: r.Method, Reason: nullable(r.Reason), Provider: r.Provider, TransferID: nullable(r.TransferID), Livemode: r.Livemode,
		CreatedAt: r.CreatedAt.UTC().Format(TimeFormat), UpdatedAt: r.UpdatedAt.UTC().Format(TimeFormat),
		CompletedAt: formatTime(r.CompletedAt),
	}
}

// Refundable is how much of a session's amount may still be refunded,
// given its refunds: what was paid, less every refund that has not failed
// (a pending refund may yet succeed, so it holds its amount). Never
// negative; 0 for a session that is not SUCCESS.
func Refundable(sess *Session, refunds []*Refund) int64 {
	if sess.Status != SessionSuccess {
		return 0
	}
	left := sess.Amount
	for _, r := range refunds {
		if r.SessionID == sess.ID && r.Status != RefundFailed {
			left -= r.Amount
		}
	}
	return max(left, 0)
}

// Refunded is how much of a session's amount its succeeded refunds gave back.
func Refunded(sess *Session, refunds []*Refund) int64 {
	var n int64
	for _, r := range refunds {
		if r.SessionID == sess.ID && r.Status == RefundSucceeded {
			n += r.Amount
		}
	}
	return n
}

// FullyRefunded reports whether a session's succeeded refunds give back
// its whole amount: it is REFUNDED then.
func FullyRefunded(sess *Session, refunds []*Refund) bool {
	return sess.Amount > 0 && Refunded(sess, refunds) >= sess.Amount
}

// AdmitRefund decides, given a session and its refunds as they are under
// the session's lock, whether refund r may be made, and sets its amount
// when the merchant gave none (the rest): the session must be SUCCESS
// (400 not_refundable) and r may not take more than remains
// (400 refund_exceeds_payment), so that concurrent refunds never give
// back more than was paid.
func AdmitRefund(r *Refund, sess *Session, refunds []*Refund) error {
	if sess.Status != SessionSuccess {
		return Reasonf(EInvalid, "not_refundable", "Transaction %s is %s: only a SUCCESS transaction can be refunded", sess.ID, sess.Status)
	}
	left := Refundable(sess, refunds)
	if r.Amount == 0 {
		r.Amount = left
	}
	if left == 0 {
		return Reasonf(EInvalid, "refund_exceeds_payment", "Nothing of transaction %s is left to refund: %s %s paid, every part refunded or being refunded",
			sess.ID, FormatAmount(sess.Amount, sess.Currency), sess.Currency)
	}
	if r.Amount > left {
		return Reasonf(EInvalid, "refund_exceeds_payment", "The refund of %s %s exceeds what is left to refund of transaction %s: %s %s",
			FormatAmount(r.Amount, r.Currency), r.Currency, sess.ID, FormatAmount(left, sess.Currency), sess.Currency)
	}
	return nil
}

// EndRefund records a pending refund's outcome, at now, and moves its
// session to REFUNDED when the refund makes it fully refunded (refunds
// are the session's others, the ended one excluded or not). It returns the
// payment.updated event the end emits: every end emits one, succeeded or
// failed, so that the merchant learns the outcome of an asynchronous
// refund; its data is the session with amount_refunded and the refund
// (RefundEventData). payURL is the hosted pages' base.
func EndRefund(r *Refund, sess *Session, refunds []*Refund, status RefundStatus, failureCode, failureMessage string, now time.Time, payURL string) (*Event, error) {
	now = now.UTC()
	r.Status, r.UpdatedAt, r.CompletedAt = status, now, &now
	if status == RefundFailed {
		r.FailureCode, r.FailureMessage = failureCode, failureMessage
	}
	all := []*Refund{r}
	for _, o := range refunds {
		if o.ID != r.ID {
			all = append(all, o)
		}
	}
	if status == RefundSucceeded && sess.Status == SessionSuccess && FullyRefunded(sess, all) {
		sess.Status, sess.UpdatedAt = SessionRefunded, now
	}
	data, err := json.Marshal(RefundEventData{SessionObject: sess.Object(payURL),
		AmountRefunded: json.Number(FormatAmount(Refunded(sess, all), sess.Currency)), Refund: r.Object()})
	if err != nil {
		return nil, err
	}
	return &Event{ID: NewLogID("evt_", now), WorkspaceID: sess.WorkspaceID, Livemode: sess.Livemode, Type: EventPaymentUpdated,
		SessionID: sess.ID, Data: data, CreatedAt: now}, nil
}

// RefundEventData is the data of the payment.updated event a refund's end
// emits: the session as GET /v1/checkout/sessions/{id}/status shows it
// (status REFUNDED once fully refunded), how much its succeeded refunds
// gave back, and the refund that ended.
type RefundEventData struct {
	SessionObject
	AmountRefunded json.Number  `json:"amount_refunded"`
	Refund         RefundObject `json:"refund"`
}
