// Package fedapay is the connector to FedaPay's API v1 (a transaction, its
// token, then either the push to the customer's phone without a redirect,
// posted to /v1/{mode} as FedaPay's SDKs post it, or FedaPay's own page for
// cards; payouts to Mobile Money, created then started; status by
// FedaPay's id; signed webhooks), and a simulator of that part of its API.
// Facts from FedaPay's Node, PHP and Ruby SDKs and docs.fedapay.com
// (collects management, payouts management, API reference: transactions,
// send payment to user, payouts; webhooks); where they disagree, the SDKs
// (testdata/SOURCES.md).
//
// FedaPay cannot be asked about a payment or a payout by our reference:
// its own id is handed to Collection.Created or Payout.Created (and
// stored) as soon as the object exists, before the push, the page or the
// payout's start can move money, and status reads use it. FedaPay takes no
// idempotency key: a payout sent twice is paid twice.
//
// It imports the domain and the gateway package.
package fedapay

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a FedaPay account.
type Client struct {
	BaseURL       string // https://api.fedapay.com/v1, or a simulator's
	SecretKey     string // sk_sandbox_... or sk_live_...
	WebhookSecret string // wh_...: signs the webhooks
	HTTP          *http.Client
	Now           func() time.Time // the webhooks' timestamp check; time.Now when nil
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
)

// SignatureTolerance is how old a webhook's timestamp may be (FedaPay's SDKs).
const SignatureTolerance = 300 * time.Second

type phoneNumber struct {
	Number  string `json:"number"`
	Country string `json:"country"`
}

type customer struct {
	Firstname   string       `json:"firstname,omitempty"`
	Lastname    string       `json:"lastname,omitempty"`
	Email       string       `json:"email,omitempty"`
	PhoneNumber *phoneNumber `json:"phone_number,omitempty"`
}

type transactionRequest struct {
	Description    string            `json:"description"`
	Amount         json.Number       `json:"amount"` // whole units
	Currency       map[string]string `json:"currency"`
	CallbackURL    string            `json:"callback_url,omitempty"`
	Customer       *customer         `json:"customer,omitempty"`
	CustomMetadata map[string]string `json:"custom_metadata"`
}

// transaction is FedaPay's transaction, as its answers carry it.
type transaction struct {
	ID             int64             `json:"id"`
	Reference      string            `json:"reference"`
	Status         string            `json:"status"`
	LastErrorCode  string            `json:"last_error_code"`
	CustomMetadata map[string]string `json:"custom_metadata"`
}

// envelope is the answer naming the object by its class: {"v1/transaction": {...}},
// {"v1/payout": {...}}, {"v1/payouts": [...]}; or an error's message.
type envelope struct {
	Transaction *transaction `json:"v1/transaction"`
	Payout      *payout      `json:"v1/payout"`
	Payouts     []payout     `json:"v1/payouts"`
	Message     string       `json:"message"`
}

type tokenAnswer struct {
	Token   string `json:"token"`
	URL     string `json:"url"`
	Message string `json:"message"`
}

// metadataKey names our reference in a transaction's or a payout's custom_metadata.
const metadataKey = "cauri_reference"

func encodeTransaction(col gateway.Collection) transactionRequest {
	desc := col.Description
	if desc == "" {
		desc = "Payment " + col.Reference
	}
	r := transactionRequest{Description: desc, Amount: json.Number(cauri.FormatAmount(col.Amount, col.Currency)),
		Currency: map[string]string{"iso": string(col.Currency)}, CallbackURL: col.ReturnURL,
		CustomMetadata: map[string]string{metadataKey: col.Reference}}
	phone := col.Phone
	if col.Card {
		phone = ""
	}
	r.Customer = newCustomer(col.Name, col.Email, phone, col.Country)
	return r
}

// newCustomer is the customer FedaPay creates along with a transaction or
// a payout: the name split at its first space, and the phone when there is
// one; nil when there is nothing to say.
func newCustomer(name, email, phone, country string) *customer {
	c := &customer{Email: email}
	c.Firstname, c.Lastname, _ = strings.Cut(strings.TrimSpace(name), " ")
	if phone != "" {
		c.PhoneNumber = &phoneNumber{Number: phone, Country: strings.ToLower(country)}
	}
	if *c == (customer{}) {
		return nil
	}
	return c
}

// Collect implements gateway.Connector: create the transaction, record its
// id, get its token, then push the payment to the phone (Mobile Money) or
// answer FedaPay's page (cards).
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	if !col.Card && (col.Operator == "" || col.Phone == "") {
		return gateway.Status{}, &gateway.Error{NotSent: true, Message: "FedaPay Mobile Money needs an operator's mode and a phone number; nothing sent"}
	}
	var created envelope
	code, err := c.call(ctx, http.MethodPost, "/transactions", encodeTransaction(col), &created)
	if err != nil {
		return gateway.Status{}, err
	}
	if code >= 300 || created.Transaction == nil || created.Transaction.ID == 0 {
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, created.Message)}, nil
	}
	id := strconv.FormatInt(created.Transaction.ID, 10)
	if col.Created != nil {
		if err := col.Created(id); err != nil {
			return gateway.Status{}, &gateway.Error{Message: "FedaPay transaction " + id + " not recorded, not sent: " + err.Error()}
		}
	}
	var tok tokenAnswer
	if code, err = c.call(ctx, http.MethodPost, "/transactions/"+id+"/token", nil, &tok); err != nil {
		return gateway.Status{}, err
	}
	if code >= 300 || tok.Token == "" {
		return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: refusal(code, tok.Message)}, nil
	}
	if col.Card {
		return gateway.Status{Outcome: gateway.Pending, ProviderRef: id, RedirectURL: tok.URL}, nil
	}
	var sent struct {
		Message string `json:"message"`
	}
	if code, err = c.call(ctx, http.MethodPost, sendPath(col.Operator), encodeSend(col, tok.Token), &sent); err != nil {
		return gateway.Status{}, err
	}
	if code >= 300 {
		return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: refusal(code, sent.Message)}, nil
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: id}, nil
}

// sendRequest is the push to the customer's phone without a redirect:
// the transaction's token, and the number to push to (the API reference's
// phone_number; the SDKs pass it among their free params).
type sendRequest struct {
	Token       string       `json:"token"`
	PhoneNumber *phoneNumber `json:"phone_number,omitempty"`
}

func encodeSend(col gateway.Collection, token string) sendRequest {
	return sendRequest{Token: token, PhoneNumber: &phoneNumber{Number: col.Phone, Country: strings.ToLower(col.Country)}}
}

// sendPath is where the push is posted: /v1/{mode}, straight under the
// API version, as all three official SDKs post it (fedapay-node
// src/Transaction.ts, fedapay-php lib/Transaction.php, fedapay-ruby
// lib/fedapay/transaction.rb: sendNowWithToken's url = '/' + mode). The
// API reference page says /transactions/{mode}; the SDKs are what
// FedaPay's own clients send, so they win (testdata/SOURCES.md).
func sendPath(mode string) string { return "/" + url.PathEscape(mode) }

func refusal(code int, message string) string {
	if message == "" {
		message = "refused"
	}
	return fmt.Sprintf("%d %s", code, message)
}

// paid are the statuses of a transaction whose money was collected
// (FedaPay's SDKs: wasPaid).
var paid = map[string]bool{"approved": true, "transferred": true, "refunded": true,
	"approved_partially_refunded": true, "transferred_partially_refunded": true}

// CollectionStatus implements gateway.Connector, by FedaPay's id. Without
// one, FedaPay never created the transaction as far as we know, and
// nothing was pushed nor shown: not found. With one, FedaPay created it
// (we store the id before the push or the page), so an answer that it does
// not exist (404) proves nothing about the push and is an error, never
// "not found".
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if ref.ProviderRef == "" {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	var e envelope
	code, err := c.call(ctx, http.MethodGet, "/transactions/"+url.PathEscape(ref.ProviderRef), nil, &e)
	if err != nil {
		return gateway.Status{}, err
	}
	t := e.Transaction
	if code >= 300 || t == nil {
		return gateway.Status{}, &gateway.Error{Message: "FedaPay answered " + refusal(code, e.Message)}
	}
	if t.CustomMetadata[metadataKey] != ref.Reference {
		return gateway.Status{}, &gateway.Error{Message: "FedaPay transaction " + ref.ProviderRef + " is not payment " + ref.Reference}
	}
	st := gateway.Status{ProviderRef: ref.ProviderRef}
	switch {
	case paid[t.Status]:
		st.Outcome = gateway.Succeeded
	case t.Status == "pending":
		st.Outcome = gateway.Pending
	case t.Status == "declined", t.Status == "canceled", t.Status == "expired":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix(t.Status+": "+t.LastErrorCode, ": ")
	default:
		return gateway.Status{}, &gateway.Error{Message: "FedaPay transaction status " + t.Status + " is unknown"}
	}
	return st, nil
}

// Sign is a webhook's X-FEDAPAY-SIGNATURE at time t: t=<unix>,s=<hex
// HMAC-SHA256 under the webhook secret of "<unix>.<body>">.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",s=" + hex.EncodeToString(mac.Sum(nil))
}

// CallbackReference implements gateway.Connector, for collections and
// payouts alike: the signature must match and be at most
// SignatureTolerance old; the event's entity (the transaction or the
// payout) carries our reference in its custom_metadata.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(h.Get("X-Fedapay-Signature"), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "s":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if c.WebhookSecret == "" || err != nil || len(sigs) == 0 {
		return "", errors.New("FedaPay webhook without a usable signature (or no webhook secret on the gateway)")
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if age := now().Sub(time.Unix(unix, 0)); age > SignatureTolerance || age < -SignatureTolerance {
		return "", errors.New("FedaPay webhook signed too long ago")
	}
	mac := hmac.New(sha256.New, []byte(c.WebhookSecret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	ok := false
	for _, s := range sigs {
		ok = ok || hmac.Equal(s, mac.Sum(nil))
	}
	if !ok {
		return "", errors.New("FedaPay webhook with a wrong signature")
	}
	var ev struct {
		Entity struct {
			CustomMetadata map[string]string `json:"custom_metadata"`
		} `json:"entity"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Entity.CustomMetadata[metadataKey] == "" {
		return "", errors.New("FedaPay webhook about no Cauri payment or payout")
	}
	return ev.Entity.CustomMetadata[metadataKey], nil
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	return gateway.Call(ctx, c.HTTP, "FedaPay", method, gateway.URL(c.BaseURL, path),
		http.Header{"Authorization": {"Bearer " + c.SecretKey}}, in, out)
}
