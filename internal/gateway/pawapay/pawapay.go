// Package pawapay is the connector to pawaPay's Merchant API v2 (deposits,
// payouts and refunds) and a simulator of the part of it the connector uses. Facts
// from docs.pawapay.io (v2 guides to deposits and payouts, API reference:
// initiate deposit and payout, check their status, callbacks, active
// configuration, failure codes); testdata/SOURCES.md cites each.
//
// Besides the PIN prompt most providers use, pawaPay has two other ways a
// customer authorises a deposit, both handled here: a code the customer
// gets before paying (authType PREAUTH, Orange Burkina Faso), sent as
// preAuthorisationCode; and a page of the provider's the customer must go
// to (Wave Senegal and Côte d'Ivoire), whose authorizationUrl becomes the
// Status's RedirectURL. The account's active configuration (GET
// /v2/active-conf, cached per account) says which provider uses which, the
// decimals each takes and its limits; an amount it cannot take is not sent.
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
	"time"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a pawaPay account.
type Client struct {
	BaseURL string // https://api.pawapay.io, the sandbox's, or a simulator's
	Token   string // the API token, sent as a bearer
	HTTP    *http.Client
	// ConfTTL is how long the account's active configuration is used
	// before it is read again (0: 15 minutes).
	ConfTTL time.Duration
	// AuthURLWait bounds how long Collect waits, after pawaPay accepted a
	// deposit authorised on the provider's page, for the page's address
	// (0: 3 seconds; negative: not at all, CollectionStatus gives it).
	AuthURLWait time.Duration
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
	_ gateway.Refunder  = (*Client)(nil)
)

// depositRequest is POST /v2/deposits.
type depositRequest struct {
	DepositID            string `json:"depositId"`
	Amount               string `json:"amount"`
	Currency             string `json:"currency"`
	Payer                payer  `json:"payer"`
	PreAuthorisationCode string `json:"preAuthorisationCode,omitempty"`
	CustomerMessage      string `json:"customerMessage,omitempty"`
	// Where the provider's page sends the customer back, for providers
	// authorised there (Wave).
	SuccessfulURL string `json:"successfulUrl,omitempty"`
	FailedURL     string `json:"failedUrl,omitempty"`
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

// initAnswer is the answer to an initiation (and pawaPay's technical
// refusals, which carry only failureReason).
type initAnswer struct {
	Status           string         `json:"status"`   // ACCEPTED, DUPLICATE_IGNORED, REJECTED
	NextStep         string         `json:"nextStep"` // FINAL_STATUS, GET_AUTH_URL, REDIRECT_TO_AUTH_URL
	AuthorizationURL string         `json:"authorizationUrl"`
	FailureReason    *failureReason `json:"failureReason"`
}

// deposit is a deposit, a payout or a refund as GET /v2/deposits/{id}
// (payouts/{id}, refunds/{id}) and the callbacks show it.
type deposit struct {
	DepositID             string         `json:"depositId,omitempty"`
	PayoutID              string         `json:"payoutId,omitempty"`
	RefundID              string         `json:"refundId,omitempty"`
	Status                string         `json:"status"`
	NextStep              string         `json:"nextStep,omitempty"`
	AuthorizationURL      string         `json:"authorizationUrl,omitempty"`
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

// refundRequest is POST /v2/refunds (API reference, initiate refund):
// refundId is ours, depositId the refunded deposit's (ours too: the
// attempt's reference). amount and currency are always sent: the refunds
// guide refunds the rest without them, but its Postman collection's
// MISSING_PARAMETER example names 'amount' as required; with them the
// request is valid under both readings (testdata/SOURCES.md, "Refunds").
type refundRequest struct {
	RefundID  string `json:"refundId"`
	DepositID string `json:"depositId"`
	Amount    string `json:"amount"`
	Currency  string `json:"currency"`
}

// Payment statuses of a deposit or payout once pawaPay accepted it. Only
// COMPLETED and FAILED are final; the others wait (the reconciler reads
// again): ACCEPTED and PROCESSING while the provider works (PROCESSING
// also while the customer is on the provider's page), ENQUEUED a payout
// held while its provider is down, IN_RECONCILIATION while pawaPay
// settles an unclear outcome. SUBMITTED is v1's name for PROCESSING,
// still shown by the sandbox test numbers' table.
const (
	statusCompleted = "COMPLETED"
	statusFailed    = "FAILED"
)

// redirectProviders are the providers pawaPay's deposits guide says are
// authorised on the provider's page ("used by Wave in both Senegal and
// Ivory Coast"), for when active-conf cannot be read.
var redirectProviders = map[string]bool{"WAVE_SEN": true, "WAVE_CIV": true}

// preauthProvider reports whether providers.json says provider needs a
// code at initiation, for when active-conf cannot be read.
func preauthProvider(provider string) bool {
	p, ok := gateway.Lookup("pawapay")
	return ok && p.Preauth[provider] != nil
}

// authFlow is how a provider's deposits are authorised: by active-conf's
// authType when it gives one, else by what the docs say of the provider.
func authFlow(o opConf, found bool, provider string) (preauth, redirect bool) {
	if found && o.AuthType != "" {
		return o.AuthType == authPreauth, o.AuthType != authPreauth && o.AuthType != authProvider
	}
	return preauthProvider(provider), redirectProviders[provider]
}

// encodeDeposit builds the initiation body of a collection for a provider
// configured as o (found: active-conf has it), or refuses to send it.
func encodeDeposit(c gateway.Collection, o opConf, found bool) (depositRequest, error) {
	amount, err := amountFor(o, c.Operator, c.Amount, c.Currency)
	if err != nil {
		return depositRequest{}, err
	}
	req := depositRequest{
		DepositID: c.Reference,
		Amount:    amount,
		Currency:  string(c.Currency),
		Payer: payer{Type: "MMO", AccountDetails: accountDetails{
			PhoneNumber: strings.TrimPrefix(c.Phone, "+"), // digits with the country code
			Provider:    c.Operator,
		}},
		CustomerMessage: customerMessage(c.Description),
	}
	preauth, redirect := authFlow(o, found, c.Operator)
	if preauth {
		code := strings.Join(strings.Fields(c.Code), "")
		if code == "" {
			return depositRequest{}, &gateway.Error{NotSent: true, Message: fmt.Sprintf(
				"pawaPay's %s needs the code the customer gets before paying (preAuthorisationCode); none was given", c.Operator)}
		}
		req.PreAuthorisationCode = code
	}
	if redirect && c.ReturnURL != "" {
		// The return page reads the outcome from the service either way.
		req.SuccessfulURL, req.FailedURL = c.ReturnURL, c.ReturnURL
	}
	return req, nil
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

// configured reads the account's configuration of an operation, or
// refuses one the account does not have: pawaPay would only reject it.
func (c *Client) configured(ctx context.Context, provider string, cur cauri.Currency, op string) (opConf, bool, error) {
	conf := c.activeConf(ctx)
	o, found, listed := conf.lookup(provider, cur, op)
	if conf != nil && !listed {
		return opConf{}, false, &gateway.Error{NotSent: true, Message: fmt.Sprintf(
			"pawaPay's active configuration of this account has no provider %s", provider)}
	}
	return o, found, nil
}

// Collect implements gateway.Connector.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	o, found, err := c.configured(ctx, col.Operator, col.Currency, opDeposit)
	if err != nil {
		return gateway.Status{}, err
	}
	req, err := encodeDeposit(col, o, found)
	if err != nil {
		return gateway.Status{}, err
	}
	st, ans, err := c.initiate(ctx, "/v2/deposits", req, false)
	// A deposit authorised on the provider's page is answered GET_AUTH_URL;
	// sent again (DUPLICATE_IGNORED) it has no nextStep: read it too.
	_, redirect := authFlow(o, found, col.Operator)
	if err != nil || st.Outcome != gateway.Pending || st.RedirectURL != "" || ans.NextStep != "GET_AUTH_URL" && !redirect {
		return st, err
	}
	return c.awaitAuthURL(ctx, col.Reference, st), nil
}

// awaitAuthURL reads a deposit pawaPay accepted with nextStep GET_AUTH_URL
// until its authorizationUrl is there (the guide: "usually very fast, but
// ... polling should be implemented"), for at most AuthURLWait. The
// deposit is accepted whatever happens: a failed read leaves it pending,
// and CollectionStatus gives the address later.
func (c *Client) awaitAuthURL(ctx context.Context, ref string, st gateway.Status) gateway.Status {
	wait := c.AuthURLWait
	if wait == 0 {
		wait = 3 * time.Second
	}
	if wait < 0 {
		return st
	}
	deadline := time.Now().Add(wait)
	for delay := 100 * time.Millisecond; ; delay *= 2 {
		got, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref})
		if err == nil && (got.RedirectURL != "" || got.Outcome == gateway.Succeeded || got.Outcome == gateway.Failed) {
			return got
		}
		if time.Now().Add(delay).After(deadline) {
			return st
		}
		select {
		case <-ctx.Done():
			return st
		case <-time.After(delay):
		}
	}
}

// Payout implements gateway.Payer.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	o, _, err := c.configured(ctx, p.Operator, p.Currency, opPayout)
	if err != nil {
		return gateway.Status{}, err
	}
	amount, err := amountFor(o, p.Operator, p.Amount, p.Currency)
	if err != nil {
		return gateway.Status{}, err
	}
	st, _, err := c.initiate(ctx, "/v2/payouts", payoutRequest{
		PayoutID: p.Reference, Amount: amount, Currency: string(p.Currency),
		Recipient:       payer{Type: "MMO", AccountDetails: accountDetails{PhoneNumber: strings.TrimPrefix(p.Phone, "+"), Provider: p.Operator}},
		CustomerMessage: customerMessage(p.Description),
	}, true)
	return st, err
}

// initiate starts a deposit or a payout. A 400 is pawaPay refusing the
// request (MISSING_PARAMETER, INVALID_PARAMETER...): nothing started.
func (c *Client) initiate(ctx context.Context, path string, body any, payout bool) (gateway.Status, initAnswer, error) {
	var ans initAnswer
	code, err := c.call(ctx, http.MethodPost, path, body, &ans)
	if err != nil {
		return gateway.Status{}, ans, err
	}
	if code == http.StatusBadRequest {
		return failed(ans.FailureReason, payout), ans, nil
	}
	switch ans.Status {
	case "ACCEPTED", "DUPLICATE_IGNORED": // a duplicate is our retry of an accepted payment
		return gateway.Status{Outcome: gateway.Pending, RedirectURL: ans.AuthorizationURL}, ans, nil
	case "REJECTED":
		return failed(ans.FailureReason, payout), ans, nil
	}
	return gateway.Status{}, ans, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("pawaPay answered an unknown status %q", ans.Status)}
}

// failed is a refused or failed payment. Only a payout's
// PAWAPAY_WALLET_OUT_OF_FUNDS is the merchant's balance; a deposit's
// INSUFFICIENT_BALANCE is the customer's.
func failed(f *failureReason, payout bool) gateway.Status {
	reason := f.String()
	if reason == "" {
		reason = "pawaPay refused it without a reason"
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: reason, LowBalance: payout && f != nil && f.FailureCode == "PAWAPAY_WALLET_OUT_OF_FUNDS"}
}

// Refund implements gateway.Refunder: POST /v2/refunds, answered like a
// deposit's initiation (ACCEPTED, DUPLICATE_IGNORED: pending; REJECTED:
// failed, with its failureReason; a 400: refused, nothing started). The
// amount takes the decimals the deposit's provider takes (active-conf's
// decimalsInAmount, "when doing refunds" too, the refunds guide says); the
// deposit's limits do not apply to its refund.
func (c *Client) Refund(ctx context.Context, r gateway.Refund) (gateway.Status, error) {
	o, _, _ := c.activeConf(ctx).lookup(r.Operator, r.Currency, opDeposit)
	amount, err := amountFor(opConf{DecimalsInAmount: o.DecimalsInAmount}, r.Operator, r.Amount, r.Currency)
	if err != nil {
		return gateway.Status{}, err
	}
	st, _, err := c.initiate(ctx, "/v2/refunds", refundRequest{RefundID: r.Reference, DepositID: r.Collection.Reference,
		Amount: amount, Currency: string(r.Currency)}, false)
	return st, err
}

// RefundStatus implements gateway.Refunder: GET /v2/refunds/{refundId}.
// COMPLETED and FAILED are final; ACCEPTED, ENQUEUED, PROCESSING and
// IN_RECONCILIATION wait; NOT_FOUND: pawaPay never received it (safe to
// send again with the same refundId).
func (c *Client) RefundStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, "/v2/refunds/"+url.PathEscape(ref.Reference), false)
}

// IdempotentRefund: a refund sent again with the same refundId is ignored
// (DUPLICATE_IGNORED), never refunded twice.
func (c *Client) IdempotentRefund() bool { return true }

// IdempotentPayout: a payout sent again with the same payoutId is ignored
// (DUPLICATE_IGNORED), never paid twice.
func (c *Client) IdempotentPayout() bool { return true }

// IdempotentCollect: a deposit sent again with the same depositId is
// ignored (DUPLICATE_IGNORED), never paid twice.
func (c *Client) IdempotentCollect() bool { return true }

// CollectionStatus implements gateway.Connector.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, "/v2/deposits/"+url.PathEscape(ref.Reference), false)
}

// PayoutStatus implements gateway.Payer.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, "/v2/payouts/"+url.PathEscape(ref.Reference), true)
}

func (c *Client) status(ctx context.Context, path string, payout bool) (gateway.Status, error) {
	var ans struct {
		Status string  `json:"status"` // FOUND, NOT_FOUND
		Data   deposit `json:"data"`
	}
	code, err := c.call(ctx, http.MethodGet, path, nil, &ans)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code != http.StatusOK:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("pawaPay answered %d to a status check", code)}
	case ans.Status == "NOT_FOUND":
		return gateway.Status{Outcome: gateway.NotFound}, nil
	case ans.Status != "FOUND":
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("pawaPay answered a status check with %q", ans.Status)}
	}
	return paymentStatus(ans.Data, payout), nil
}

// paymentStatus reads a deposit's or payout's status. Every status but
// COMPLETED and FAILED (and REJECTED, a payment never accepted) waits,
// known or not: an unknown one is a state pawaPay added, and the payment
// still concludes when pawaPay says COMPLETED or FAILED.
func paymentStatus(d deposit, payout bool) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending, ProviderRef: d.ProviderTransactionID}
	switch d.Status {
	case statusCompleted:
		st.Outcome = gateway.Succeeded
	case statusFailed, "REJECTED":
		f := failed(d.FailureReason, payout)
		st.Outcome, st.Reason, st.LowBalance = f.Outcome, f.Reason, f.LowBalance
	default:
		st.RedirectURL = d.AuthorizationURL // nextStep REDIRECT_TO_AUTH_URL: the customer goes there
	}
	return st
}

// CallbackReference implements gateway.Connector. pawaPay calls back
// when a payment (a deposit, a payout, a refund) is final and, for a deposit authorised on the provider's
// page, when its authorizationUrl is ready (status PROCESSING). Callbacks
// are unsigned unless the account turns signing on, so they are treated as
// signals: the service re-reads the payment before believing them.
func (c *Client) CallbackReference(_ http.Header, body []byte) (string, error) {
	var d deposit
	if err := json.Unmarshal(body, &d); err != nil || d.DepositID == "" && d.PayoutID == "" && d.RefundID == "" {
		return "", errors.New("pawaPay callback without a depositId, payoutId or refundId")
	}
	return d.DepositID + d.PayoutID + d.RefundID, nil
}

func (c *Client) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + c.Token}}
}

// call sends one request to pawaPay with the gateway's token and decodes
// its JSON answer into out, returning the HTTP status. No answer, a 5xx
// (pawaPay's UNKNOWN_ERROR: the payment may have started) or an unreadable
// answer is transient; 401 and 403 (pawaPay's NO_AUTHENTICATION,
// AUTHENTICATION_ERROR, AUTHORISATION_ERROR, HTTP_SIGNATURE_ERROR,
// DEPOSITS_NOT_ALLOWED, PAYOUTS_NOT_ALLOWED) and any other 4xx but 400
// are lasting errors; a 400 is the caller's to read.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	code, raw, err := gateway.Send(ctx, c.HTTP, "pawaPay", method, gateway.URL(c.BaseURL, path), c.header(), in)
	if err != nil {
		return code, err
	}
	if code >= 400 && code != http.StatusBadRequest {
		var ans struct {
			FailureReason *failureReason `json:"failureReason"`
		}
		msg := fmt.Sprintf("pawaPay answered %d", code)
		if json.Unmarshal(raw, &ans) == nil && ans.FailureReason != nil {
			msg += " " + ans.FailureReason.String()
		}
		return code, &gateway.Error{Message: msg}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return code, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("pawaPay answered %d with unreadable JSON", code)}
	}
	return code, nil
}
