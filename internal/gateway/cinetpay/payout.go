package cinetpay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Payouts go through CinetPay's transfer API v1 (docs.cinetpay.com,
// api/1.0-en/transfert: utilisation, etapes, notification, statuts,
// annexe): form-urlencoded requests on another host, a token from
// /auth/login (apikey and the transfer password) valid 5 minutes and
// passed in the query, the recipient added as a contact, then the money
// sent to the contact with our reference as client_transaction_id.

// TransferURL is the transfer API's address when Client.TransferBaseURL is empty.
const TransferURL = "https://client.cinetpay.com/v1"

// tokenFresh is how long a token is used: CinetPay's last 5 minutes; a
// minute is left for clock skew and slow calls.
const tokenFresh = 4 * time.Minute

var _ gateway.Payer = (*Client)(nil)

// text is a JSON string or number read as text: the transfer API writes
// codes (0, "701") and amounts either way.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = text(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*t = text(n)
	return nil
}

// transferAnswer is the transfer API's envelope; data's shape depends on the call.
type transferAnswer struct {
	Code        text            `json:"code"`
	Message     string          `json:"message"`
	Description string          `json:"description"`
	Data        json.RawMessage `json:"data"`
}

func (a transferAnswer) words() string {
	return strings.TrimSpace(string(a.Code) + " " + a.Message + ": " + a.Description)
}

// transferItem is one contact or transfer in an answer's data.
type transferItem struct {
	Prefix              text `json:"prefix"`
	Phone               text `json:"phone"`
	Amount              text `json:"amount"`
	ClientTransactionID text `json:"client_transaction_id"`
	TransactionID       text `json:"transaction_id"`
	Lot                 text `json:"lot"`
	Code                text `json:"code"`
	Status              text `json:"status"`
	TreatmentStatus     text `json:"treatment_status"`
	SendingStatus       text `json:"sending_status"`
	Comment             text `json:"comment"`
}

// items reads data as [[item…]] (contacts, sends), [item…] (checks) or
// one item, whichever it is.
func items(raw json.RawMessage) []transferItem {
	var nested [][]transferItem
	if json.Unmarshal(raw, &nested) == nil {
		var all []transferItem
		for _, n := range nested {
			all = append(all, n...)
		}
		return all
	}
	var flat []transferItem
	if json.Unmarshal(raw, &flat) == nil {
		return flat
	}
	var one transferItem
	if json.Unmarshal(raw, &one) == nil && one != (transferItem{}) {
		return []transferItem{one}
	}
	return nil
}

// contactRequest is one contact of POST /transfer/contact.
type contactRequest struct {
	Prefix  string `json:"prefix"`
	Phone   string `json:"phone"`
	Name    string `json:"name"`    // the family name
	Surname string `json:"surname"` // the first name(s)
	Email   string `json:"email"`
}

// sendRequest is one transfer of POST /transfer/money/send/contact.
type sendRequest struct {
	Prefix              string `json:"prefix"`
	Phone               string `json:"phone"`
	Amount              string `json:"amount"` // major units
	ClientTransactionID string `json:"client_transaction_id"`
	NotifyURL           string `json:"notify_url"`
	PaymentMethod       string `json:"payment_method,omitempty"`
}

// splitPhone splits an E.164 number into CinetPay's prefix (the calling
// code) and the national number.
func splitPhone(phone, country string) (prefix, national string, err error) {
	digits := strings.TrimPrefix(phone, "+")
	code := phonenumbers.GetCountryCodeForRegion(strings.ToUpper(country))
	if code == 0 {
		if n, perr := phonenumbers.Parse(phone, ""); perr == nil {
			code = int(n.GetCountryCode())
		}
	}
	prefix = strconv.Itoa(code)
	if code == 0 || !strings.HasPrefix(digits, prefix) || len(digits) <= len(prefix) || strings.Trim(digits, "0123456789") != "" {
		return "", "", fmt.Errorf("%s is not a number of %s", phone, country)
	}
	return prefix, digits[len(prefix):], nil
}

// encodeContact names the recipient: the last word is the family name,
// the others the first names; without a name, the number stands for it.
func encodeContact(prefix, national, name string) contactRequest {
	words := strings.Fields(name)
	switch len(words) {
	case 0:
		return contactRequest{Prefix: prefix, Phone: national, Name: national, Surname: national}
	case 1:
		return contactRequest{Prefix: prefix, Phone: national, Name: words[0], Surname: words[0]}
	}
	last := len(words) - 1
	return contactRequest{Prefix: prefix, Phone: national, Name: words[last], Surname: strings.Join(words[:last], " ")}
}

// encodeSend writes one transfer. CinetPay's documented transfer names no
// operator (prefix, phone, amount, notify_url): the number decides it.
// payment_method is sent only for a wallet the number cannot tell, Wave
// (WAVECI, WAVESN), which runs on any SIM; the spelling of the other
// operators' codes in the transfer API (TmoneyTG in the checkout's table,
// TMONEYTG in integrations) is thus never at stake.
func encodeSend(prefix, national string, p gateway.Payout) sendRequest {
	r := sendRequest{Prefix: prefix, Phone: national, Amount: cauri.FormatAmount(p.Amount, p.Currency),
		ClientTransactionID: p.Reference, NotifyURL: p.NotifyURL}
	if strings.HasPrefix(strings.ToUpper(p.Operator), "WAVE") {
		r.PaymentMethod = p.Operator
	}
	return r
}

// Answer codes of the transfer API (docs.cinetpay.com, transfert/annexe).
var (
	// tokenRefused: log in again and retry, once.
	tokenRefused = map[string]bool{"705": true, "706": true, "707": true}
	// lasting: the gateway's credentials or account, not the transfer (a
	// token refused even after a new login among them).
	lasting = map[string]bool{"701": true, "703": true, "705": true, "706": true, "707": true, "708": true}
	// refusedTransfer: CinetPay refused this transfer; nothing was sent.
	refusedTransfer = map[string]bool{"-1": true, "602": true, "704": true, "716": true, "717": true, "718": true, "719": true,
		"720": true, "721": true, "724": true, "725": true, "801": true, "802": true, "804": true}
)

// Payout implements gateway.Payer: it adds the recipient to the account's
// contacts (already one is fine, 726) and sends the money to it. Errors
// before the send are NotSent: no transfer was asked for.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	prefix, national, err := splitPhone(p.Phone, p.Country)
	if err != nil {
		return gateway.Status{}, &gateway.Error{NotSent: true, Message: "CinetPay: " + err.Error()}
	}
	a, err := c.transferPost(ctx, "/transfer/contact", []contactRequest{encodeContact(prefix, national, p.RecipientName)})
	if err != nil {
		return gateway.Status{}, notSent(err)
	}
	if a.Code != "0" {
		st, err := refusal(a.Code, a.words())
		return st, notSent(err)
	}
	for _, it := range items(a.Data) {
		if it.Code != "" && it.Code != "0" && it.Code != "726" {
			st, err := refusal(it.Code, strings.TrimSpace(string(it.Code)+" "+string(it.Status)))
			return st, notSent(err)
		}
	}
	a, err = c.transferPost(ctx, "/transfer/money/send/contact", []sendRequest{encodeSend(prefix, national, p)})
	if err != nil {
		return gateway.Status{}, err
	}
	code, why := a.Code, a.words()
	var it transferItem
	if its := items(a.Data); len(its) > 0 {
		it = its[0]
		if code == "0" && it.Code != "" && it.Code != "0" {
			code, why = it.Code, strings.TrimSpace(string(it.Code)+" "+string(it.Status)+" "+string(it.Comment))
		}
	}
	switch code {
	case "0": // accepted: waiting (NEW) unless already final
		if it.TreatmentStatus == "VAL" || it.TreatmentStatus == "REJ" {
			return treatment(it)
		}
		return gateway.Status{Outcome: gateway.Pending, ProviderRef: string(it.TransactionID)}, nil
	case "805": // CLIENT_TRANSACTION_ID_EXIST: CinetPay has this transfer already (our retry)
		return gateway.Status{Outcome: gateway.Pending}, nil
	}
	return refusal(code, why)
}

// refusal reads a code that is not a success: a refused transfer is a
// Failed status; refused credentials a lasting error; anything else says
// nothing of the outcome (a transient error, to be settled by a check).
func refusal(code text, why string) (gateway.Status, error) {
	switch {
	case refusedTransfer[string(code)]:
		return gateway.Status{Outcome: gateway.Failed, Reason: why, LowBalance: code == "602"}, nil
	case lasting[string(code)]:
		return gateway.Status{}, &gateway.Error{Message: "CinetPay refused the gateway's transfer credentials (" + why + ")"}
	}
	return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "CinetPay answered an unknown code " + why}
}

// notSent marks an error met before the transfer was sent.
func notSent(err error) error {
	if e := gateway.ErrorOf(err); e != nil {
		marked := *e
		marked.NotSent = true
		return &marked
	}
	return err
}

// IdempotentPayout: a transfer sent again with the same
// client_transaction_id is refused with 805 CLIENT_TRANSACTION_ID_EXIST,
// never paid twice, and Payout reads that refusal as the pending transfer
// it is.
func (c *Client) IdempotentPayout() bool { return true }

// PayoutStatus implements gateway.Payer: GET /transfer/check/money by our
// reference. 723 NOT_FOUND, or no transfer in data, is not found; a code
// or a treatment_status it does not know is an error that concludes nothing.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	a, err := c.transferGet(ctx, "/transfer/check/money", url.Values{"client_transaction_id": {ref.Reference}})
	if err != nil {
		return gateway.Status{}, err
	}
	its := items(a.Data)
	switch {
	case a.Code == "723" || a.Code == "0" && len(its) == 0:
		return gateway.Status{Outcome: gateway.NotFound}, nil
	case lasting[string(a.Code)]:
		return gateway.Status{}, &gateway.Error{Message: "CinetPay refused the gateway's transfer credentials (" + a.words() + ")"}
	case a.Code != "0":
		return gateway.Status{}, &gateway.Error{Message: "CinetPay answered an unknown code " + a.words()}
	}
	for _, o := range its {
		if string(o.ClientTransactionID) == ref.Reference {
			return treatment(o)
		}
	}
	// An answer about other transfers says nothing about this one.
	return gateway.Status{}, &gateway.Error{Message: "CinetPay's check named no transfer " + ref.Reference}
}

// treatment reads a transfer's treatment_status (transfert/statuts):
// NEW, REC and NOS wait; VAL and REJ are final.
func treatment(it transferItem) (gateway.Status, error) {
	st := gateway.Status{ProviderRef: string(it.TransactionID)}
	switch it.TreatmentStatus {
	case "VAL":
		st.Outcome = gateway.Succeeded
	case "REJ":
		st.Outcome = gateway.Failed
		st.Reason = strings.TrimSpace("REJ " + string(it.SendingStatus) + ": " + string(it.Comment))
	case "NEW", "REC", "NOS":
		st.Outcome = gateway.Pending
	default:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("CinetPay answered an unknown treatment_status %q", it.TreatmentStatus)}
	}
	return st, nil
}

// transferPost posts data (JSON, in the form's data field) with a token.
func (c *Client) transferPost(ctx context.Context, path string, data any) (transferAnswer, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return transferAnswer{}, err
	}
	return c.withToken(ctx, func(token string) (transferAnswer, error) {
		return c.transferCall(ctx, http.MethodPost, path, url.Values{"token": {token}, "lang": {"en"}}, url.Values{"data": {string(b)}})
	})
}

// transferGet reads path with a token and query.
func (c *Client) transferGet(ctx context.Context, path string, query url.Values) (transferAnswer, error) {
	return c.withToken(ctx, func(token string) (transferAnswer, error) {
		q := url.Values{"token": {token}, "lang": {"en"}}
		for k, v := range query {
			q[k] = v
		}
		return c.transferCall(ctx, http.MethodGet, path, q, nil)
	})
}

// withToken runs call with the cached token, or a new one; when CinetPay
// says the token expired or is invalid, it logs in again and retries once.
func (c *Client) withToken(ctx context.Context, call func(token string) (transferAnswer, error)) (transferAnswer, error) {
	for again := false; ; again = true {
		token, err := c.token(ctx, again)
		if err != nil {
			return transferAnswer{}, err
		}
		a, err := call(token)
		if err != nil || again || !tokenRefused[string(a.Code)] {
			return a, err
		}
	}
}

// token returns a token less than tokenFresh old, logging in when there
// is none (or renew says the one held was refused).
func (c *Client) token(ctx context.Context, renew bool) (string, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.mu.Lock()
	token, at := c.transferToken, c.tokenAt
	c.mu.Unlock()
	if token != "" && !renew && now().Sub(at) < tokenFresh {
		return token, nil
	}
	// One login at a time: a call that waited for another's login takes
	// the token it got (fresh, and not the one this call saw refused).
	c.login.Lock()
	defer c.login.Unlock()
	c.mu.Lock()
	got, gotAt := c.transferToken, c.tokenAt
	c.mu.Unlock()
	if got != "" && (got != token || !renew) && now().Sub(gotAt) < tokenFresh {
		return got, nil
	}
	at = now()
	a, err := c.transferCall(ctx, http.MethodPost, "/auth/login", url.Values{"lang": {"en"}},
		url.Values{"apikey": {c.APIKey}, "password": {c.TransferPassword}})
	if err != nil {
		return "", err
	}
	var d struct {
		Token string `json:"token"`
	}
	if a.Code != "0" || json.Unmarshal(a.Data, &d) != nil || d.Token == "" {
		if lasting[string(a.Code)] {
			return "", &gateway.Error{Message: "CinetPay refused the gateway's transfer credentials (" + a.words() + ")"}
		}
		return "", &gateway.Error{Transient: true, Answered: true, Message: "CinetPay gave no transfer token: " + a.words()}
	}
	c.mu.Lock()
	c.transferToken, c.tokenAt = d.Token, at
	c.mu.Unlock()
	return d.Token, nil
}

// transferCall sends one request to the transfer API, the form (if any)
// url-encoded, and decodes its JSON answer. Failures are classified as
// gateway.Call does: no answer, a 5xx or an unreadable answer is
// transient; refused credentials (401, 403) are not.
func (c *Client) transferCall(ctx context.Context, method, path string, query, form url.Values) (transferAnswer, error) {
	base := c.TransferBaseURL
	if base == "" {
		base = TransferURL
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, gateway.URL(base, path)+"?"+query.Encode(), body)
	if err != nil {
		return transferAnswer{}, &gateway.Error{Message: "CinetPay transfer address: " + gateway.Describe(err)}
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	res, err := hc.Do(req)
	if err != nil {
		var op *net.OpError
		notSent := errors.As(err, &op) && op.Op == "dial"
		return transferAnswer{}, &gateway.Error{Transient: true, NotSent: notSent, Message: "CinetPay did not answer: " + gateway.Describe(err)}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	switch {
	case err != nil:
		return transferAnswer{}, &gateway.Error{Transient: true, Message: "CinetPay answer cut: " + err.Error()}
	case res.StatusCode >= 500:
		return transferAnswer{}, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("CinetPay answered %d", res.StatusCode)}
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return transferAnswer{}, &gateway.Error{Message: fmt.Sprintf("CinetPay refused the gateway's credentials (%d)", res.StatusCode)}
	}
	var a transferAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return transferAnswer{}, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("CinetPay answered %d with unreadable JSON", res.StatusCode)}
	}
	return a, nil
}
