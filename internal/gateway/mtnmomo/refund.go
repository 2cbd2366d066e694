package mtnmomo

import (
	"context"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

var _ gateway.Refunder = (*Client)(nil)

// refunds is the Disbursement product, for refunds: the same key, token
// and credential as payouts, named for what it does in messages.
func (c *Client) refunds() product {
	return product{"disbursement", c.DisbursementKey, "disbursement_key", "refunds"}
}

// refundRequest is POST /disbursement/v1_0/refund (MTN's JavaScript SDK,
// docs/disbursements/refundV1.Readme.md): every field a string, the amount
// in major units, referenceIdToRefund the X-Reference-Id of the request to
// pay refunded (the attempt's reference: Collect sends it as such).
type refundRequest struct {
	Amount              string `json:"amount"`
	Currency            string `json:"currency"`
	ExternalID          string `json:"externalId"`
	PayerMessage        string `json:"payerMessage"`
	PayeeNote           string `json:"payeeNote"`
	ReferenceIDToRefund string `json:"referenceIdToRefund"`
}

func encodeRefund(r gateway.Refund) refundRequest {
	n := note(r.Reason, r.Reference)
	return refundRequest{Amount: cauri.FormatAmount(r.Amount, r.Currency), Currency: string(r.Currency), ExternalID: r.Reference,
		PayerMessage: n, PayeeNote: n, ReferenceIDToRefund: r.Collection.Reference}
}

// RefundsUnavailable says why this gateway cannot refund: refunds are a
// Disbursement operation, and its credentials may hold the Collection
// product's key only. "" when it can.
func (c *Client) RefundsUnavailable() string {
	if strings.TrimSpace(c.DisbursementKey) == "" {
		return "MTN MoMo refunds are an operation of the Disbursement product, and this gateway's credentials have no Disbursement " +
			"subscription key (credential \"disbursement_key\", with an API user and key of that product)"
	}
	return ""
}

// Refund implements gateway.Refunder: a refund from the merchant's
// disbursement account of the request to pay with our reference
// Collection.Reference, under the refund's own reference as X-Reference-Id,
// so that a refund sent again is refused as a duplicate (409), never
// refunded twice. MTN answers 202 with no body; a refusal is a failed
// refund.
func (c *Client) Refund(ctx context.Context, r gateway.Refund) (gateway.Status, error) {
	why := ""
	switch {
	case !isUUID(r.Reference):
		why = "the refund's reference is not a UUID, which MTN needs as X-Reference-Id"
	case !isUUID(r.Collection.Reference):
		why = "the payment's reference is not a UUID: MTN never received it as a request to pay"
	case r.Amount <= 0:
		why = "the amount is not positive"
	}
	if why != "" {
		return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to MTN MoMo: " + why}, nil
	}
	return c.initiate(ctx, c.refunds(), "/disbursement/v1_0/refund", referenceHeader(r.Reference, r.NotifyURL), encodeRefund(r), false)
}

// RefundStatus implements gateway.Refunder: GET
// /disbursement/v1_0/refund/{referenceId}, by the refund's X-Reference-Id
// (docs/disbursements/getRefundStatus.Readme.md): PENDING, SUCCESSFUL or
// FAILED with its reason; 404 RESOURCE_NOT_FOUND for one MTN never
// received (safe to send again under the same reference).
func (c *Client) RefundStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, c.refunds(), "/disbursement/v1_0/refund/", ref.Reference, false)
}

// IdempotentRefund: a refund sent again under the same X-Reference-Id is
// refused as a duplicate (409 RESOURCE_ALREADY_EXIST), never refunded twice.
func (c *Client) IdempotentRefund() bool { return true }
