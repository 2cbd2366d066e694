package paystack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
)

var _ gateway.Refunder = (*Client)(nil)

// refundRequest is POST /refund (openapi RefundCreate.yaml): transaction
// is the refunded transaction's reference or id (ours: the attempt's
// reference); amount, in subunits, is always sent, so that a part is
// refunded exactly and the whole rest is what Cauri admitted.
type refundRequest struct {
	Transaction  string `json:"transaction"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency,omitempty"`
	MerchantNote string `json:"merchant_note,omitempty"`
}

// refundAnswer is a refund as Create Refund and Fetch Refund answer it
// (openapi RefundCreateResponse.yaml, RefundFetchResponse.yaml). Its
// transaction is an object in the first and an id in the second: not read.
type refundAnswer struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
	Data    struct {
		ID                   int64  `json:"id"`
		Status               string `json:"status"`
		Amount               int64  `json:"amount"`
		Currency             string `json:"currency"`
		TransactionReference string `json:"transaction_reference"`
		Reason               string `json:"reason"`
	} `json:"data"`
}

// maxMerchantNote bounds the note sent with a refund: Paystack documents
// no limit; the merchant's reason is at most 500 characters already.
const maxMerchantNote = 500

// Refund implements gateway.Refunder with POST /refund. Paystack answers
// the refund's id (kept as its ProviderRef: the only way to ask about it)
// and its status, pending or processing. A refusal (status false: an
// amount over what is left, a transaction already fully refunded) is a
// Failed Status with Paystack's message; a 429 made nothing, so it is an
// error that says the refund was not sent.
func (c *Client) Refund(ctx context.Context, r gateway.Refund) (gateway.Status, error) {
	note := strings.TrimSpace(r.Reason)
	if len([]rune(note)) > maxMerchantNote {
		note = string([]rune(note)[:maxMerchantNote])
	}
	var a refundAnswer
	code, err := c.call(ctx, http.MethodPost, "/refund", refundRequest{Transaction: r.Collection.Reference, Amount: r.Amount,
		Currency: string(r.Currency), MerchantNote: note}, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusTooManyRequests:
		return gateway.Status{}, &gateway.Error{Message: "Paystack answered 429 (too many requests): the refund was not made"}
	case !a.Status || code >= 300:
		return gateway.Status{Outcome: gateway.Failed, Reason: firstOf(a.Message, fmt.Sprintf("Paystack refused the refund (%d)", code))}, nil
	case a.Data.ID == 0:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Paystack answered a refund without its id"}
	}
	return refundStatus(a), nil
}

// needsAttention is why a refund at needs-attention stays pending.
const needsAttention = "needs-attention: Paystack could not send the refund back by the payment's channel and waits for the merchant " +
	"to give the customer's account details in Paystack's dashboard (or POST /refund/retry_with_customer_details/{id})"

// refundStatus reads a refund's status (Paystack's refund webhooks and
// paystack.com/docs/payments/refunds): processed is refunded; failed is
// final; needs-attention waits for the merchant in Paystack's dashboard,
// so it stays pending; pending, processing and any status not known here
// stay pending.
func refundStatus(a refundAnswer) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending, ProviderRef: strconv.FormatInt(a.Data.ID, 10)}
	switch a.Data.Status {
	case "processed":
		st.Outcome = gateway.Succeeded
	case "failed":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix("failed: "+strings.TrimSpace(a.Data.Reason), ": ")
	case "needs-attention":
		st.Reason = needsAttention
	}
	return st
}

// RefundStatus implements gateway.Refunder with GET /refund/{id}, by the
// id Paystack answered the refund with. Without it (the refund's answer
// was lost), Paystack cannot be asked: it takes no reference of ours for a
// refund and its list of refunds has no filter by transaction. The error
// says so and the refund stays pending (never NotFound: nothing proves
// Paystack did not make it).
func (c *Client) RefundStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if _, err := strconv.ParseInt(ref.ProviderRef, 10, 64); err != nil {
		return gateway.Status{}, &gateway.Error{Message: "Paystack's id of this refund is unknown (the answer to its request was lost), " +
			"and Paystack can only be asked about a refund by its id: find it in Paystack's dashboard"}
	}
	var a refundAnswer
	code, err := c.call(ctx, http.MethodGet, "/refund/"+url.PathEscape(ref.ProviderRef), nil, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusTooManyRequests:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Paystack answered 429 (too many requests)"}
	case code >= 300 || !a.Status:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Paystack answered %d to refund %s's fetch: %s", code, ref.ProviderRef, a.Message)}
	case a.Data.ID != 0 && strconv.FormatInt(a.Data.ID, 10) != ref.ProviderRef:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Paystack answered refund %d when asked about %s", a.Data.ID, ref.ProviderRef)}
	}
	a.Data.ID, _ = strconv.ParseInt(ref.ProviderRef, 10, 64)
	return refundStatus(a), nil
}

// IdempotentRefund: POST /refund takes no idempotency key nor reference of
// ours, so a refund sent again is a second refund. A refund whose answer
// was lost is never sent again.
func (c *Client) IdempotentRefund() bool { return false }
