// Package pawapay is the connector to pawaPay's Merchant API v2 (deposits
// and payouts) and a simulator of the part of it the connector uses. Facts
// from docs.pawapay.io (v2 API reference: initiate deposit and payout,
// check their status, callbacks, failure codes).
//
// It imports the domain and the gateway package.
package pawapay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a pawaPay account.
type Client struct {
	BaseURL string // https://api.pawapay.io, the sandbox's, or a simulator's
	Token   string // the API token, sent as a bearer
	HTTP    *http.Client
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
)

// depositRequest is POST /v2/deposits.
type depositRequest struct {
	DepositID       string `json:"depositId"`
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	Payer           payer  `json:"payer"`
	CustomerMessage string `json:"customerMessage,omitempty"`
}

type payer struct {
	Type           string         `json:"type"`
	AccountDetails accountDetails `json:"accountDetails"`
}

type accountDetails struct {
	PhoneNumber string `json:"phoneNumber"`
	Provider    string `json:"provider"`
}

type failureReason struct {
	FailureCode    string `json:"failureCode"`
	FailureMessage string `json:"failureMessage"`
}

func (f *failureReason) String() string {
	if f == nil {
		return ""
	}
	return strings.TrimSpace(f.FailureCode + ": " + f.FailureMessage)
}

// depositAnswer is the answer to an initiation.
type depositAnswer struct {
	DepositID     string         `json:"depositId"`
	Status        string         `json:"status"` // ACCEPTED, DUPLICATE_IGNORED, REJECTED
	FailureReason *failureReason `json:"failureReason"`
}

// deposit is a deposit or a payout as GET /v2/deposits/{id} (payouts/{id})
// and the callbacks show it.
type deposit struct {
	DepositID             string         `json:"depositId,omitempty"`
	PayoutID              string         `json:"payoutId,omitempty"`
	Status                string         `json:"status"` // ACCEPTED, ENQUEUED, PROCESSING, IN_RECONCILIATION, COMPLETED, FAILED
	ProviderTransactionID string         `json:"providerTransactionId,omitempty"`
	FailureReason         *failureReason `json:"failureReason,omitempty"`
}

// payoutRequest is POST /v2/payouts.
type payoutRequest struct {
	PayoutID        string `json:"payoutId"`
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	Recipient       payer  `json:"recipient"`
	CustomerMessage string `json:"customerMessage,omitempty"`
}

// lowBalance are the failure codes of a payout the merchant's wallet could
// not fund.
var lowBalance = map[string]bool{"INSUFFICIENT_BALANCE": true, "PAWAPAY_WALLET_OUT_OF_FUNDS": true}

// encodeDeposit builds the initiation body of a collection.
func encodeDeposit(c gateway.Collection) depositRequest {
	return depositRequest{
		DepositID: c.Reference,
		Amount:    cauri.FormatAmount(c.Amount, c.Currency),
		Currency:  string(c.Currency),
		Payer: payer{Type: "MMO", AccountDetails: accountDetails{
			PhoneNumber: strings.TrimPrefix(c.Phone, "+"), // digits with the country code
			Provider:    c.Operator,
		}},
		CustomerMessage: customerMessage(c.Description),
	}
}

// customerMessage fits a description into pawaPay's 4 to 22 letters,
// digits and spaces, or leaves it out.
func customerMessage(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ') {
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	if len(out) > 22 {
		out = strings.TrimSpace(out[:22])
	}
	if len(out) < 4 {
		return ""
	}
	return out
}

// Collect implements gateway.Connector.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	return c.initiate(ctx, "/v2/deposits", encodeDeposit(col))
}

// Payout implements gateway.Payer.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	return c.initiate(ctx, "/v2/payouts", payoutRequest{
		PayoutID: p.Reference, Amount: cauri.FormatAmount(p.Amount, p.Currency), Currency: string(p.Currency),
		Recipient:       payer{Type: "MMO", AccountDetails: accountDetails{PhoneNumber: strings.TrimPrefix(p.Phone, "+"), Provider: p.Operator}},
		CustomerMessage: customerMessage(p.Description),
	})
}

// initiate starts a deposit or a payout.
func (c *Client) initiate(ctx context.Context, path string, body any) (gateway.Status, error) {
	var ans depositAnswer
	if _, err := c.call(ctx, http.MethodPost, path, body, &ans); err != nil {
		return gateway.Status{}, err
	}
	switch ans.Status {
	case "ACCEPTED", "DUPLICATE_IGNORED": // a duplicate is our retry of an accepted payment
		return gateway.Status{Outcome: gateway.Pending}, nil
	case "REJECTED":
		return failed(ans.FailureReason), nil
	}
	return gateway.Status{}, &gateway.Error{Transient: true, Message: fmt.Sprintf("pawaPay answered an unknown status %q", ans.Status)}
}

func failed(f *failureReason) gateway.Status {
	return gateway.Status{Outcome: gateway.Failed, Reason: f.String(), LowBalance: f != nil && lowBalance[f.FailureCode]}
}

// IdempotentPayout: a payout sent again with the same payoutId is ignored
// (DUPLICATE_IGNORED), never paid twice.
func (c *Client) IdempotentPayout() bool { return true }

// IdempotentCollect: a deposit sent again with the same depositId is
// ignored (DUPLICATE_IGNORED), never paid twice.
func (c *Client) IdempotentCollect() bool { return true }

// CollectionStatus implements gateway.Connector.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, "/v2/deposits/"+url.PathEscape(ref.Reference))
}

// PayoutStatus implements gateway.Payer.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, "/v2/payouts/"+url.PathEscape(ref.Reference))
}

func (c *Client) status(ctx context.Context, path string) (gateway.Status, error) {
	var ans struct {
		Status string  `json:"status"` // FOUND, NOT_FOUND
		Data   deposit `json:"data"`
	}
	if _, err := c.call(ctx, http.MethodGet, path, nil, &ans); err != nil {
		return gateway.Status{}, err
	}
	if ans.Status == "NOT_FOUND" {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	return depositStatus(ans.Data), nil
}

func depositStatus(d deposit) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending, ProviderRef: d.ProviderTransactionID}
	switch d.Status {
	case "COMPLETED":
		st.Outcome = gateway.Succeeded
	case "FAILED":
		f := failed(d.FailureReason)
		st.Outcome, st.Reason, st.LowBalance = f.Outcome, f.Reason, f.LowBalance
	}
	return st
}

// CallbackReference implements gateway.Connector. pawaPay's callbacks are
// unsigned unless the account turns signing on, so they are treated as
// signals: the service re-reads the deposit before believing them.
func (c *Client) CallbackReference(_ http.Header, body []byte) (string, error) {
	var d deposit
	if err := json.Unmarshal(body, &d); err != nil || d.DepositID == "" && d.PayoutID == "" {
		return "", errors.New("pawaPay callback without a depositId or payoutId")
	}
	return d.DepositID + d.PayoutID, nil
}

// call sends one request to pawaPay with the gateway's token. Besides the
// shared classification, a 4xx other than 400 is a lasting error.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	code, err := gateway.Call(ctx, c.HTTP, "pawaPay", method, gateway.URL(c.BaseURL, path),
		http.Header{"Authorization": {"Bearer " + c.Token}}, in, out)
	if err == nil && code >= 400 && code != http.StatusBadRequest {
		return code, &gateway.Error{Message: fmt.Sprintf("pawaPay answered %d", code)}
	}
	return code, err
}
