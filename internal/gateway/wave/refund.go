package wave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
)

var _ gateway.Refunder = (*Client)(nil)

// Wave's refund is POST /v1/checkout/sessions/{id}/refund, by the checkout
// session's id (cos-...; a transaction id, T..., is 404), with no body:
// the whole payment goes back, there is no amount. It answers 200 with an
// empty body once the payment is refunded (synchronous); asked again for
// a session already refunded, it answers 200 again without refunding
// twice. A refusal is {"code", "message"}: checkout-refund-failed (400 or
// 409: the sources differ) when the session was not paid or the wallet's
// balance is short, 404 checkout-session-not-found, 401/403 for the key.
// There is no refund webhook and no endpoint to read a refund.
//
// Sources: Wave's endpoint list at docs.wave.com/checkout (its refund
// section could not be read); the behaviour as implemented by several
// open-source Wave integrations (client libraries in TypeScript and PHP, a
// Wave simulator), which agree.
//
// So a refund's status is the same call made again (RefundStatus), and a
// refund sent twice is refunded once (IdempotentRefund). The risk: if Wave
// answered a second call for a refunded session otherwise than the
// sources say (checkout-refund-failed rather than 200), a refund Wave made
// would be read as refused; and a status read of a refund Wave never
// received makes it (it was admitted and is pending: that is what was
// asked). docs/refunds.md says so.

// refundPath is the refund route of a checkout session.
func refundPath(sessionID string) string {
	return "/v1/checkout/sessions/" + url.PathEscape(sessionID) + "/refund"
}

// Refund implements gateway.Refunder: the payment's checkout session (its
// id when the attempt kept it, else found by our reference) is refunded
// whole; the refund service refuses a part before calling (WholeRefundsOnly).
// The Status's ProviderRef is the session's id, which RefundStatus asks
// with. A session that cannot be found is an error that says the refund
// was not sent.
func (c *Client) Refund(ctx context.Context, r gateway.Refund) (gateway.Status, error) {
	id, err := c.checkoutSession(ctx, r.Collection)
	if err != nil {
		e := &gateway.Error{NotSent: true, Message: err.Error() + ": the refund was not sent"}
		if ge := gateway.ErrorOf(err); ge != nil {
			e.Transient, e.Message = ge.Transient, ge.Message+": the refund was not sent"
		}
		return gateway.Status{}, e
	}
	return c.refund(ctx, id, true)
}

// RefundStatus implements gateway.Refunder with the refund's call made
// again (Wave has no refund to read; a refunded session answers 200
// without a second refund), by the session's id the refund kept, or the
// refunded collection's.
func (c *Client) RefundStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	id := ref.ProviderRef
	if !strings.HasPrefix(id, "cos-") {
		if ref.Collection == nil {
			return gateway.Status{}, &gateway.Error{Message: "Wave's checkout session of this refund is unknown: Wave can only be asked about a refund by its payment's session"}
		}
		var err error
		if id, err = c.checkoutSession(ctx, *ref.Collection); err != nil {
			return gateway.Status{}, err
		}
	}
	return c.refund(ctx, id, false)
}

// IdempotentRefund: a refunded checkout session is never refunded again.
func (c *Client) IdempotentRefund() bool { return true }

// WholeRefundsOnly: Wave's refund takes no amount.
func (c *Client) WholeRefundsOnly() bool { return true }

// checkoutSession is the id of the refunded payment's checkout session:
// the attempt's ProviderRef when it is one (cos-...; once paid, the
// attempt keeps the transaction's id instead), else the session found by
// our reference (the paid one when the search finds several).
func (c *Client) checkoutSession(ctx context.Context, col gateway.Ref) (string, error) {
	if strings.HasPrefix(col.ProviderRef, "cos-") {
		return col.ProviderRef, nil
	}
	sessions, err := search[session](ctx, c, "/v1/checkout/sessions/search", col.Reference)
	if err != nil {
		return "", err
	}
	var mine []session
	for _, s := range sessions {
		if deref(s.ClientReference) == col.Reference && s.ID != "" {
			mine = append(mine, s)
		}
	}
	if len(mine) == 1 {
		return mine[0].ID, nil
	}
	for _, s := range mine {
		if s.PaymentStatus == "succeeded" {
			return s.ID, nil
		}
	}
	if len(mine) == 0 {
		return "", errors.New("Wave knows no checkout session of payment " + col.Reference)
	}
	return "", fmt.Errorf("Wave has %d checkout sessions of payment %s and none paid", len(mine), col.Reference)
}

// refund calls the refund route of session id and reads its answer: 2xx
// refunded; 401/403 an error (the key: nothing moved); 429 an error (not
// made: not sent when first, transient when a status read); any other 4xx
// a refusal, in Wave's words; 5xx, a cut answer or none, a transient error
// (gateway.Send).
func (c *Client) refund(ctx context.Context, id string, first bool) (gateway.Status, error) {
	code, raw, err := c.send(ctx, http.MethodPost, refundPath(id), nil)
	if err != nil {
		return gateway.Status{}, err
	}
	var e waveError
	json.Unmarshal(raw, &e) // read defensively: any shape, or none
	switch {
	case code >= 200 && code < 300:
		return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}, nil
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Wave refused the gateway's credentials (%s)", refusal(code, raw))}
	case code == http.StatusTooManyRequests:
		return gateway.Status{}, &gateway.Error{Transient: !first, Answered: !first,
			Message: "Wave answered 429 (too many requests): the refund of checkout session " + id + " was not made"}
	}
	reason := e.words()
	if reason == "" {
		reason = refusal(code, raw)
	}
	if !first {
		// A status read is the refund asked again. The sources differ on
		// what Wave answers for a session it refunded already (200 again,
		// or checkout-refund-failed): a refusal now cannot say the first
		// call refunded nothing. Ending it failed could let the money be
		// sent back a second time (a refund by payout): it stays pending,
		// its checks logged and counted, until Wave answers 200 or a
		// person looks at Wave's dashboard.
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true,
			Message: fmt.Sprintf("Wave refused the refund of checkout session %s when asked again (%s): it may have refunded it before; see Wave's dashboard", id, reason)}
	}
	return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: reason}, nil
}
