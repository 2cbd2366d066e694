package fedapay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// payoutRequest is POST /payouts: the amount in whole units, the
// operator's mode and the recipient as a customer with a phone number.
type payoutRequest struct {
	Amount         json.Number       `json:"amount"`
	Currency       map[string]string `json:"currency"`
	Mode           string            `json:"mode"`
	Description    string            `json:"description,omitempty"`
	Customer       *customer         `json:"customer"`
	CustomMetadata map[string]string `json:"custom_metadata"`
}

// startRequest is PUT /payouts/start: each payout by id, without a
// scheduled_at, is sent now (FedaPay's SDKs: Payout.sendNow).
type startRequest struct {
	Payouts []startItem `json:"payouts"`
}

type startItem struct {
	ID int64 `json:"id"`
}

// payout is FedaPay's payout, as its answers and webhooks carry it.
type payout struct {
	ID               int64             `json:"id"`
	Reference        string            `json:"reference"`
	Status           string            `json:"status"`
	LastErrorCode    text              `json:"last_error_code"`
	LastErrorMessage text              `json:"last_error_message"`
	CustomMetadata   map[string]string `json:"custom_metadata"`
}

// text is a field FedaPay documents as a string but its SDKs as a number
// (a payout's last_error_code): either is read, null is "".
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*t = ""
	case string:
		*t = text(v)
	default:
		*t = text(b)
	}
	return nil
}

func encodePayout(p gateway.Payout) payoutRequest {
	return payoutRequest{Amount: json.Number(cauri.FormatAmount(p.Amount, p.Currency)),
		Currency: map[string]string{"iso": string(p.Currency)}, Mode: p.Operator, Description: p.Description,
		Customer:       newCustomer(p.RecipientName, "", p.Phone, p.Country),
		CustomMetadata: map[string]string{metadataKey: p.Reference}}
}

// Payout implements gateway.Payer: create the payout (it waits, pending),
// record its id, then start it now. A refusal of either step is a failed
// payout; FedaPay's words for a balance too low make it LowBalance.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	var created envelope
	code, err := c.call(ctx, http.MethodPost, "/payouts", encodePayout(p), &created)
	if err != nil {
		return gateway.Status{}, err
	}
	if code >= 300 || created.Payout == nil || created.Payout.ID == 0 {
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, created.Message), LowBalance: lowBalance(created.Message)}, nil
	}
	id := created.Payout.ID
	ref := strconv.FormatInt(id, 10)
	if p.Created != nil {
		if err := p.Created(ref); err != nil {
			return gateway.Status{}, &gateway.Error{Message: "FedaPay payout " + ref + " not recorded, not started: " + err.Error()}
		}
	}
	var answer json.RawMessage
	if code, err = c.call(ctx, http.MethodPut, "/payouts/start", startRequest{Payouts: []startItem{{ID: id}}}, &answer); err != nil {
		return gateway.Status{}, err
	}
	if code >= 300 {
		var e envelope
		json.Unmarshal(answer, &e)
		return gateway.Status{Outcome: gateway.Failed, ProviderRef: ref, Reason: refusal(code, e.Message), LowBalance: lowBalance(e.Message)}, nil
	}
	if po := startedPayout(answer, id); po != nil {
		if st, known := payoutStatus(*po, ref); known {
			return st, nil
		}
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: ref}, nil
}

// startedPayout finds payout id in the start's answer: {"v1/payouts": [...]}
// as FedaPay's SDKs read it, or the bare list of the API reference.
func startedPayout(answer json.RawMessage, id int64) *payout {
	var e envelope
	if json.Unmarshal(answer, &e) != nil && json.Unmarshal(answer, &e.Payouts) != nil {
		return nil
	}
	for i := range e.Payouts {
		if e.Payouts[i].ID == id {
			return &e.Payouts[i]
		}
	}
	return nil
}

// payoutStatus reads a payout's status: sent is paid, failed is final,
// the others wait (pending before its start, scheduled, started, and
// processing). known is false for a status FedaPay does not document.
func payoutStatus(po payout, ref string) (st gateway.Status, known bool) {
	st = gateway.Status{Outcome: gateway.Pending, ProviderRef: ref}
	switch po.Status {
	case "sent":
		st.Outcome = gateway.Succeeded
	case "failed":
		var why []string
		for _, s := range []string{po.Status, string(po.LastErrorCode), string(po.LastErrorMessage)} {
			if s != "" {
				why = append(why, s)
			}
		}
		st.Outcome, st.Reason = gateway.Failed, strings.Join(why, ": ")
		st.LowBalance = lowBalance(string(po.LastErrorCode), string(po.LastErrorMessage))
	case "pending", "scheduled", "started", "processing":
	default:
		return st, false
	}
	return st, true
}

// lowBalance reports FedaPay's words, English or French, for a balance too
// low to pay: the recipient needs no funds, so for a payout it can only be
// the merchant's balance.
func lowBalance(words ...string) bool {
	for _, w := range words {
		w = strings.ToLower(w)
		if strings.Contains(w, "insufficient") || strings.Contains(w, "insuffisant") || strings.Contains(w, "not enough") {
			return true
		}
	}
	return false
}

// PayoutStatus implements gateway.Payer, by FedaPay's id. Without one,
// FedaPay never created the payout as far as we know, and a payout created
// but never started moves no money (the id is stored before the start):
// not found. With one, a 404 proves nothing and is an error. A payout
// whose custom_metadata names another reference is not this one; one
// without it is trusted by its id, which we stored.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if ref.ProviderRef == "" {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	var e envelope
	code, err := c.call(ctx, http.MethodGet, "/payouts/"+url.PathEscape(ref.ProviderRef), nil, &e)
	if err != nil {
		return gateway.Status{}, err
	}
	if code >= 300 || e.Payout == nil {
		return gateway.Status{}, &gateway.Error{Message: "FedaPay answered " + refusal(code, e.Message)}
	}
	if r := e.Payout.CustomMetadata[metadataKey]; r != "" && r != ref.Reference {
		return gateway.Status{}, &gateway.Error{Message: "FedaPay payout " + ref.ProviderRef + " is not transfer " + ref.Reference}
	}
	st, known := payoutStatus(*e.Payout, ref.ProviderRef)
	if !known {
		return gateway.Status{}, &gateway.Error{Message: "FedaPay payout status " + e.Payout.Status + " is unknown"}
	}
	return st, nil
}

// IdempotentPayout implements gateway.Payer: FedaPay takes no idempotency
// key, and a payout created again is another payout.
func (c *Client) IdempotentPayout() bool { return false }
