package wave

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// payoutRequest is POST /v1/payout: the amount the recipient receives, as
// a string in major units, the recipient's Wave number (E.164), and our
// reference. Wave's fee is taken from the wallet on top.
type payoutRequest struct {
	Currency        string `json:"currency"`
	ReceiveAmount   string `json:"receive_amount"`
	Mobile          string `json:"mobile"`
	Name            string `json:"name,omitempty"`
	ClientReference string `json:"client_reference"`
	PaymentReason   string `json:"payment_reason,omitempty"`
}

// payout is Wave's payout, as its answers carry it.
type payout struct {
	ID              string          `json:"id"`
	Status          string          `json:"status"` // processing, succeeded, failed, reversed
	ClientReference *string         `json:"client_reference"`
	PayoutError     json.RawMessage `json:"payout_error"`
}

func encodePayout(p gateway.Payout) payoutRequest {
	return payoutRequest{Currency: string(p.Currency), ReceiveAmount: cauri.FormatAmount(p.Amount, p.Currency), Mobile: p.Phone,
		Name: strings.TrimSpace(p.RecipientName), ClientReference: p.Reference, PaymentReason: strings.TrimSpace(p.Description)}
}

// Payout implements gateway.Payer: one call, under the idempotency-key of
// our reference, creates the payout, which may already be paid when Wave
// answers. A refusal is a failed payout (LowBalance when the wallet lacks
// the funds); a conflict on the idempotency key, an answer without an id
// or an id that could not be recorded conclude nothing: the status, read
// by our reference, decides.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	var raw json.RawMessage
	code, err := c.call(ctx, http.MethodPost, "/v1/payout", encodePayout(p), &raw, http.Header{"Idempotency-Key": {p.Reference}})
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusConflict:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true,
			Message: "Wave answered " + refusal(code, raw) + ": a payout under this idempotency key may exist"}
	case code >= 300:
		var e waveError
		json.Unmarshal(raw, &e)
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, raw), LowBalance: lowBalance(e.words())}, nil
	}
	var po payout
	if json.Unmarshal(raw, &po) != nil || po.ID == "" {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Wave answered a payout without an id"}
	}
	if p.Created != nil {
		if err := p.Created(po.ID); err != nil {
			return gateway.Status{}, &gateway.Error{Transient: true, Answered: true,
				Message: "Wave payout " + po.ID + " created, its id not recorded: " + err.Error()}
		}
	}
	if st, known := payoutStatus(po); known {
		return st, nil
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: po.ID}, nil
}

// payoutStatus reads a payout: succeeded is paid; failed and reversed
// (paid, then taken back) are final failures; processing waits. known is
// false for a status Wave does not document.
func payoutStatus(po payout) (st gateway.Status, known bool) {
	st = gateway.Status{Outcome: gateway.Pending, ProviderRef: po.ID}
	switch po.Status {
	case "succeeded":
		st.Outcome = gateway.Succeeded
	case "failed", "reversed":
		why := payoutError(po.PayoutError)
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix(po.Status+": "+why, ": ")
		st.LowBalance = lowBalance(why)
	case "processing":
	default:
		return st, false
	}
	return st, true
}

// payoutError is a payout's payout_error in a few words: its code and
// message, under either the names error_code and error_message or code
// and message.
func payoutError(raw json.RawMessage) string {
	var e struct {
		ErrorCode    string `json:"error_code"`
		ErrorMessage string `json:"error_message"`
		Code         string `json:"code"`
		Message      string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	return strings.Trim(e.ErrorCode+e.Code+": "+e.ErrorMessage+e.Message, ": ")
}

// lowBalance reports Wave's words for a wallet without the funds to pay
// (insufficient-funds): the recipient needs none, so for a payout it can
// only be the merchant's wallet.
func lowBalance(words string) bool {
	return strings.Contains(strings.ToLower(words), "insufficient")
}

// PayoutStatus implements gateway.Payer: by Wave's id when known, else by
// our reference (the search); an id Wave does not know is looked for by
// our reference too. None found is not found.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var payouts []payout
	if ref.ProviderRef != "" {
		po, found, err := get[payout](ctx, c, "/v1/payout/"+url.PathEscape(ref.ProviderRef))
		if err != nil {
			return gateway.Status{}, err
		}
		if found {
			payouts = []payout{po}
		}
	}
	if payouts == nil {
		var err error
		if payouts, err = search[payout](ctx, c, "/v1/payouts/search", ref.Reference); err != nil {
			return gateway.Status{}, err
		}
	}
	var best *gateway.Status
	for _, po := range payouts {
		if r := deref(po.ClientReference); r != "" && r != ref.Reference {
			return gateway.Status{}, &gateway.Error{Message: "Wave payout " + po.ID + " is not transfer " + ref.Reference}
		}
		st, known := payoutStatus(po)
		if !known {
			return gateway.Status{}, &gateway.Error{Message: "Wave payout status " + po.Status + " is unknown"}
		}
		if best == nil || rank[st.Outcome] > rank[best.Outcome] {
			best = &st
		}
	}
	if best == nil {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	return *best, nil
}

// IdempotentPayout implements gateway.Payer: every payout carries our
// reference as its idempotency-key, and Wave never pays one key twice.
func (c *Client) IdempotentPayout() bool { return true }
