package flutterwave

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

var _ gateway.Refunder = (*Client)(nil)

// refundRequest is POST /v3/transactions/{id}/refund (Node-v3
// services/transactions/rave.refund.js and refundSchema: amount, a
// positive number; the refunds guide adds comments). amount, in major
// units as the charge's, is always sent, so that a part is refunded
// exactly and the whole rest is what Cauri admitted.
type refundRequest struct {
	Amount   json.Number `json:"amount"`
	Comments string      `json:"comments,omitempty"`
}

// refundObject is a refund as the initiation (documentation/transactions.md,
// "Create a transaction refund") and GET /v3/refunds/{id} show it.
type refundObject struct {
	ID             int64       `json:"id"`
	TxID           int64       `json:"tx_id"`
	FlwRef         string      `json:"flw_ref"`
	AmountRefunded json.Number `json:"amount_refunded"`
	Status         string      `json:"status"`
	Comment        string      `json:"comment"`
}

type refundAnswer struct {
	Status  string        `json:"status"` // success | error
	Message string        `json:"message"`
	Data    *refundObject `json:"data"`
}

// Refund implements gateway.Refunder: POST /transactions/{id}/refund by
// Flutterwave's numeric id of the charge (the attempt's ProviderRef, which
// verify gives as data.id). Flutterwave answers the refund's id (kept as
// its ProviderRef: the only way to ask about it) and its status. A payment
// whose Flutterwave id was never recorded cannot be refunded here: nothing
// is sent. A refusal (status "error", 4xx: an amount under Flutterwave's
// minimum, a transaction not refundable) is a Failed Status with
// Flutterwave's message.
func (c *Client) Refund(ctx context.Context, r gateway.Refund) (gateway.Status, error) {
	if _, err := strconv.ParseInt(r.Collection.ProviderRef, 10, 64); err != nil {
		return gateway.Status{}, &gateway.Error{NotSent: true, Message: "the payment's Flutterwave transaction id (data.id) was never recorded, " +
			"and Flutterwave refunds only by that id: refund it with method payout, or from Flutterwave's dashboard"}
	}
	var a refundAnswer
	code, err := c.call(ctx, http.MethodPost, "/transactions/"+url.PathEscape(r.Collection.ProviderRef)+"/refund",
		refundRequest{Amount: json.Number(cauri.FormatAmount(r.Amount, r.Currency)), Comments: clip(strings.TrimSpace(r.Reason), 100)}, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code >= 400 && a.Status == "error":
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, a.Message)}, nil
	case code >= 300 || a.Status != "success" || a.Data == nil || a.Data.ID == 0:
		// It may have been made: the refund waits, never sent again.
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true,
			Message: "Flutterwave answered a refund without its id: " + refusal(code, a.Message)}
	}
	st, known := refundStatus(*a.Data)
	if !known {
		st.Outcome, st.Reason = gateway.Pending, "" // made, in a status not known here: its reads decide
	}
	return st, nil
}

// refundStatus reads a refund's status (developer.flutterwave.com's
// refunds guide): completed, complete and every completed-* (bank
// transfer, momo, mpgs, offline, preauth) are refunded; failed (a status
// Get all refunds filters by) ends it; pending-momo, processing, pending
// and new wait. known is false for any other word, which concludes
// nothing.
func refundStatus(d refundObject) (st gateway.Status, known bool) {
	st = gateway.Status{Outcome: gateway.Pending, ProviderRef: strconv.FormatInt(d.ID, 10)}
	switch s := strings.ToLower(strings.TrimSpace(d.Status)); {
	case s == "completed", s == "complete", strings.HasPrefix(s, "completed-"):
		st.Outcome = gateway.Succeeded
	case s == "failed":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix("failed: "+strings.TrimSpace(d.Comment), ": ")
	case s == "pending-momo", s == "processing", s == "pending", s == "new":
	default:
		return st, false
	}
	return st, true
}

// RefundStatus implements gateway.Refunder with GET /refunds/{id}, by the
// id Flutterwave answered the refund with. Without it (the answer was
// lost) Flutterwave cannot be asked about this refund by anything of ours,
// so the error says so and the refund stays pending (never NotFound:
// nothing proves Flutterwave did not make it). A status not known here
// is an error too: the refund stays pending, and the error, logged at each
// check, says which word came, for a person to decide.
func (c *Client) RefundStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if _, err := strconv.ParseInt(ref.ProviderRef, 10, 64); err != nil {
		return gateway.Status{}, &gateway.Error{Message: "Flutterwave's id of this refund is unknown (the answer to its request was lost), " +
			"and Flutterwave can only be asked about a refund by its id: find it in Flutterwave's dashboard"}
	}
	var a refundAnswer
	code, err := c.call(ctx, http.MethodGet, "/refunds/"+url.PathEscape(ref.ProviderRef), nil, &a)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code >= 300 || a.Status != "success" || a.Data == nil:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Flutterwave answered refund %s's read with %s", ref.ProviderRef, refusal(code, a.Message))}
	case a.Data.ID != 0 && strconv.FormatInt(a.Data.ID, 10) != ref.ProviderRef:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Flutterwave answered refund %d when asked about %s", a.Data.ID, ref.ProviderRef)}
	}
	a.Data.ID, _ = strconv.ParseInt(ref.ProviderRef, 10, 64)
	st, known := refundStatus(*a.Data)
	if !known {
		return gateway.Status{}, &gateway.Error{Message: "Flutterwave refund " + ref.ProviderRef + " has status " + strconv.Quote(a.Data.Status) +
			", not known here: it stays pending until a person checks it in Flutterwave's dashboard"}
	}
	return st, nil
}

// IdempotentRefund: Flutterwave v3 takes no idempotency key nor reference
// of ours on a refund, so a refund sent again is a second refund. A refund
// whose answer was lost is never sent again.
func (c *Client) IdempotentRefund() bool { return false }
