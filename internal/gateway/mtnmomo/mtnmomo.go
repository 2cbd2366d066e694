// Package mtnmomo is the connector to MTN's MoMo Open API (the Collection
// product's request to pay, and the Disbursement product's transfer in
// payout.go: a push to the customer's phone, who approves it with their
// PIN; the Disbursement product's refund of a request to pay in refund.go;
// an account holder's name before a payout in names.go), and a
// simulator of that part of the API. Facts from
// momodeveloper.mtn.com (the Partner Gateway API reference of Collection
// and Disbursement, the guides on API users and keys, callbacks and common
// error codes, the community's product updates) and MTN's own SDKs;
// testdata/SOURCES.md says which fact comes from where, and which remain
// unconfirmed.
//
// Every call carries the product's subscription key
// (Ocp-Apim-Subscription-Key) and a bearer token the product's token
// endpoint gives for the API user and key; the token is kept until shortly
// before it expires. MTN takes OUR reference as the transaction's id
// (X-Reference-Id, a UUID): a request sent again under it is refused as a
// duplicate (409), never paid twice, and its status is read by it. Its
// callbacks are unsigned: only a signal, which a status read confirms.
//
// It imports the domain and the gateway package.
package mtnmomo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// The API's hosts. Some countries have a proxy of their own (Rwanda's
// proxy.momoapi.mtn.co.rw): the gateway's base URL says so.
const (
	SandboxURL = "https://sandbox.momodeveloper.mtn.com"
	LiveURL    = "https://proxy.momoapi.mtn.com"
)

// Sandbox is the sandbox's X-Target-Environment, the default; live
// accounts use their country's (mtnghana, mtnuganda, ...).
const Sandbox = "sandbox"

// Environments lists the X-Target-Environment values MTN's Open API
// serves: the sandbox and one per country.
var Environments = []string{Sandbox, "mtnivorycoast", "mtncameroon", "mtnbenin", "mtncongo", "mtnghana", "mtnuganda",
	"mtnzambia", "mtnrwanda", "mtnguineaconakry", "mtnliberia", "mtnswaziland", "mtnsouthafrica"}

// Client is an MTN MoMo partner account in one country (one target
// environment), with its API user and the subscription keys of the
// products it subscribed to.
type Client struct {
	BaseURL         string // LiveURL, SandboxURL, a country's proxy, or a simulator's
	Environment     string // X-Target-Environment: credential "target_environment"; Sandbox when empty
	CollectionKey   string // the Collection product's subscription key: credential "collection_key"
	DisbursementKey string // the Disbursement product's: credential "disbursement_key", optional; payouts need it
	APIUser         string // the API user (a UUID): credential "api_user"
	APIKey          string // its API key: credential "api_key"
	HTTP            *http.Client
	Now             func() time.Time // the tokens' clock; time.Now when nil

	tokens gateway.Tokens // by product
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
)

// TokenMargin is how long before its expiry a token is renewed.
const TokenMargin = gateway.TokenMargin

// product is one of MTN's API products: its path, its subscription key,
// the credential that holds the key, and what it does (for messages).
type product struct {
	name, key, credential, does string
}

func (c *Client) collection() product {
	return product{"collection", c.CollectionKey, "collection_key", "collections"}
}

// party is an account holder: partyIdType MSISDN, the number in E.164
// without the "+".
type party struct {
	PartyIDType string `json:"partyIdType"`
	PartyID     string `json:"partyId"`
}

// requestToPay is POST /collection/v1_0/requesttopay: the amount as a
// string in major units, our reference as externalId, the payer's number,
// and the notes each side's history shows.
type requestToPay struct {
	Amount       string `json:"amount"`
	Currency     string `json:"currency"`
	ExternalID   string `json:"externalId"`
	Payer        party  `json:"payer"`
	PayerMessage string `json:"payerMessage"`
	PayeeNote    string `json:"payeeNote"`
}

// result is a request to pay or a transfer as its status read and its
// callback show it. MTN's documented examples write some of its strings as
// numbers, hence text.
type result struct {
	Amount                 text    `json:"amount"`
	Currency               string  `json:"currency"`
	FinancialTransactionID text    `json:"financialTransactionId"`
	ExternalID             text    `json:"externalId"`
	ReferenceID            text    `json:"referenceId"` // in some callbacks
	Status                 string  `json:"status"`      // PENDING, SUCCESSFUL, FAILED
	Reason                 *reason `json:"reason"`
}

// text is a JSON string, or a number taken as its text.
type text = gateway.Text

// reason is why a transaction failed: a code (NOT_ENOUGH_FUNDS, ...) as a
// plain string in today's answers, or an object {code, message} in the
// API reference.
type reason struct {
	code, message string
}

func (r *reason) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		r.code = s
		return nil
	}
	var o struct{ Code, Message text }
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	r.code, r.message = string(o.Code), string(o.Message)
	return nil
}

// words is the reason as "code: message".
func (r *reason) words() string {
	if r == nil {
		return ""
	}
	return truncate(strings.Trim(r.code+": "+r.message, ": "), 200)
}

// mtnError is MTN's refusal: {code, message} from the API, {error} from
// the token endpoint, {statusCode, message} from the API gateway itself
// (a subscription key refused).
type mtnError struct {
	Code    text `json:"code"`
	Message text `json:"message"`
	Error   text `json:"error"`
}

func errorOf(raw []byte) mtnError {
	var e mtnError
	json.Unmarshal(raw, &e)
	return e
}

// words is a refusal in MTN's words: "code: message", "" when it has none.
func (e mtnError) words() string {
	code := e.Code
	if code == "" {
		code = e.Error
	}
	return truncate(strings.Trim(string(code)+": "+string(e.Message), ": "), 200)
}

// refusal is an answer's HTTP status and MTN's words.
func refusal(code int, raw []byte) string {
	if w := errorOf(raw).words(); w != "" {
		return fmt.Sprintf("%d %s", code, w)
	}
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

// Reasons of failure the connector reads.
const (
	notEnoughFunds = "NOT_ENOUGH_FUNDS"
	notFound       = "RESOURCE_NOT_FOUND"
)

// isCode reports whether an answer's code is want, in any case, with
// spaces or underscores (MTN's tables write "RESOURCE NOT FOUND").
func isCode(code text, want string) bool {
	return strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(string(code)), " ", "_"), want)
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// isUUID reports whether s is a UUID, as MTN wants an X-Reference-Id.
func isUUID(s string) bool { return uuidRE.MatchString(s) }

// msisdn is an E.164 number as MTN's partyId wants it, digits only; ok is
// false when phone is not such a number.
func msisdn(phone string) (digits string, ok bool) {
	digits = strings.TrimPrefix(strings.TrimSpace(phone), "+")
	return digits, len(digits) >= 7 && len(digits) <= 15 && strings.Trim(digits, "0123456789") == "" && digits[0] != '0'
}

// noteMax is how long a payerMessage or payeeNote may be here; MTN
// documents no limit (testdata/SOURCES.md).
const noteMax = 160

// note is a description fit for a payerMessage or payeeNote (printable, one
// line, at most noteMax letters), or our reference when there is none.
func note(description, reference string) string {
	var b strings.Builder
	for _, r := range description {
		if unicode.IsSpace(r) {
			r = ' '
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		}
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if s == "" {
		return reference
	}
	return truncate(s, noteMax)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n]))
	}
	return s
}

// invalid is a collection or payout refused before anything is sent: its
// reference is not a UUID, its amount not positive, or its number not one.
// It answers the failed Status and true, or false when all is well.
func invalid(reference string, amount int64, phone string) (gateway.Status, bool) {
	why := ""
	_, phoneOK := msisdn(phone)
	switch {
	case !isUUID(reference):
		why = "the reference is not a UUID, which MTN needs as X-Reference-Id"
	case amount <= 0:
		why = "the amount is not positive"
	case !phoneOK:
		why = "the phone number is not in E.164 format"
	default:
		return gateway.Status{}, false
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to MTN MoMo: " + why}, true
}

func encodeRequestToPay(col gateway.Collection) requestToPay {
	partyID, _ := msisdn(col.Phone)
	n := note(col.Description, col.Reference)
	return requestToPay{Amount: cauri.FormatAmount(col.Amount, col.Currency), Currency: string(col.Currency), ExternalID: col.Reference,
		Payer: party{PartyIDType: "MSISDN", PartyID: partyID}, PayerMessage: n, PayeeNote: n}
}

// referenceHeader is the initiation's X-Reference-Id (our reference) and,
// when there is one, the X-Callback-Url MTN calls once it is over.
func referenceHeader(reference, notifyURL string) http.Header {
	h := http.Header{"X-Reference-Id": {reference}}
	if notifyURL != "" {
		h.Set("X-Callback-Url", notifyURL)
	}
	return h
}

// Collect implements gateway.Connector: a request to pay under our
// reference, which MTN pushes to the payer's phone. A refusal is a failed
// collection.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	if col.Card {
		return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to MTN MoMo: it takes no cards"}, nil
	}
	if st, bad := invalid(col.Reference, col.Amount, col.Phone); bad {
		return st, nil
	}
	return c.initiate(ctx, c.collection(), "/collection/v1_0/requesttopay", referenceHeader(col.Reference, col.NotifyURL),
		encodeRequestToPay(col), false)
}

// IdempotentCollect: a request to pay sent again under the same
// X-Reference-Id is refused as a duplicate (409), never paid twice.
func (c *Client) IdempotentCollect() bool { return true }

// initiate starts a request to pay or a transfer. MTN answers 202 with no
// body once it has queued it; 409 when it already has one under our
// reference (ours, sent before: it goes on). Any other refusal (4xx) is a
// failure, for want of the merchant's funds (LowBalance) when a payout
// says NOT_ENOUGH_FUNDS. Another answer concludes nothing: the status
// decides.
func (c *Client) initiate(ctx context.Context, p product, path string, h http.Header, body any, payout bool) (gateway.Status, error) {
	code, raw, err := c.api(ctx, p, http.MethodPost, path, h, body)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusAccepted, code == http.StatusConflict:
		return gateway.Status{Outcome: gateway.Pending}, nil
	case code < 400:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("MTN MoMo answered %d, not 202", code)}
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, raw),
		LowBalance: payout && isCode(errorOf(raw).Code, notEnoughFunds)}, nil
}

// CollectionStatus implements gateway.Connector: the request to pay read
// by our reference.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, c.collection(), "/collection/v1_0/requesttopay/", ref.Reference, false)
}

// status reads a request to pay or a transfer by our reference. MTN
// answers 404 RESOURCE_NOT_FOUND for one it never received; a reference
// that is no UUID was never sent. Any other refusal concludes nothing.
func (c *Client) status(ctx context.Context, p product, path, reference string, payout bool) (gateway.Status, error) {
	if !isUUID(reference) {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	code, raw, err := c.api(ctx, p, http.MethodGet, path+url.PathEscape(reference), nil, nil)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusNotFound && isCode(errorOf(raw).Code, notFound):
		return gateway.Status{Outcome: gateway.NotFound}, nil
	case code != http.StatusOK:
		return gateway.Status{}, &gateway.Error{Message: "MTN MoMo answered the status read " + refusal(code, raw)}
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "MTN MoMo answered an unreadable status"}
	}
	return resultStatus(r, payout)
}

// resultStatus reads a transaction's status: SUCCESSFUL is done (its
// financialTransactionId is the operator's id), FAILED failed (for want of
// the merchant's funds when a payout says NOT_ENOUGH_FUNDS), PENDING waits.
// Any other status is an error, never a conclusion.
func resultStatus(r result, payout bool) (gateway.Status, error) {
	st := gateway.Status{Outcome: gateway.Pending, ProviderRef: string(r.FinancialTransactionID)}
	switch strings.ToUpper(r.Status) {
	case "SUCCESSFUL":
		st.Outcome = gateway.Succeeded
	case "FAILED":
		st.Outcome, st.Reason = gateway.Failed, r.Reason.words()
		if st.Reason == "" {
			st.Reason = "FAILED"
		}
		st.LowBalance = payout && r.Reason != nil && isCode(text(r.Reason.code), notEnoughFunds)
	case "PENDING":
	default:
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("MTN MoMo answered an unknown status %q", truncate(r.Status, 40))}
	}
	return st, nil
}

// CallbackReference implements gateway.Connector, for requests to pay and
// transfers alike: MTN calls the X-Callback-Url (PUT or POST) with the
// transaction as its status read shows it, unsigned; its externalId (or
// referenceId, when given) is our reference. It is only a signal, which a
// status read confirms.
func (c *Client) CallbackReference(_ http.Header, body []byte) (string, error) {
	var r result
	if err := json.Unmarshal(body, &r); err != nil {
		return "", errors.New("MTN MoMo callback is not a transaction")
	}
	ref := strings.TrimSpace(string(r.ReferenceID))
	if ref == "" {
		ref = strings.TrimSpace(string(r.ExternalID))
	}
	if ref == "" {
		return "", errors.New("MTN MoMo callback without an externalId or referenceId")
	}
	return ref, nil
}

// environment is the X-Target-Environment calls carry.
func (c *Client) environment() string {
	if e := strings.TrimSpace(c.Environment); e != "" {
		return e
	}
	return Sandbox
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// api sends one request to a product's API with its subscription key, the
// target environment and a token (extra adds the request's own headers),
// through gateway.Tokens.Call: a refused token (401) is renewed once; MTN
// refuses it before doing anything.
func (c *Client) api(ctx context.Context, p product, method, path string, extra http.Header, in any) (int, []byte, error) {
	if strings.TrimSpace(p.key) == "" {
		return 0, nil, &gateway.Error{Message: fmt.Sprintf("MTN MoMo %s need the %s subscription key (credential %q)", p.does, p.name, p.credential)}
	}
	return c.tokens.Call(ctx, p.name, c.now(), gateway.TokenCall{
		Name:    "MTN MoMo",
		Fetch:   func(ctx context.Context) (string, int64, error) { return c.newToken(ctx, p) },
		Refused: func(code int, _ []byte) bool { return code == http.StatusUnauthorized },
		Refusal: refusal,
		Words:   func(raw []byte) string { return errorOf(raw).words() },
		Send: func(ctx context.Context, tok string) (int, []byte, error) {
			h := http.Header{"Authorization": {"Bearer " + tok}, "Ocp-Apim-Subscription-Key": {p.key}, "X-Target-Environment": {c.environment()}}
			for k, v := range extra {
				h[k] = v
			}
			return c.send(ctx, method, path, h, in)
		},
	})
}

// newToken is POST /{product}/token/ with the API user and key (Basic) and
// the product's subscription key: {access_token, token_type, expires_in}.
func (c *Client) newToken(ctx context.Context, p product) (string, int64, error) {
	basic := base64.StdEncoding.EncodeToString([]byte(c.APIUser + ":" + c.APIKey))
	code, raw, err := c.send(ctx, http.MethodPost, "/"+p.name+"/token/",
		http.Header{"Authorization": {"Basic " + basic}, "Ocp-Apim-Subscription-Key": {p.key}}, nil)
	switch {
	case err != nil:
		return "", 0, err
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "", 0, &gateway.Error{Message: "MTN MoMo refused the gateway's API user, key or " + p.name + " subscription key (" + refusal(code, raw) + ")"}
	case code != http.StatusOK:
		return "", 0, &gateway.Error{Message: "MTN MoMo answered the token request " + refusal(code, raw)}
	}
	var a struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if json.Unmarshal(raw, &a) != nil || a.AccessToken == "" {
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: "MTN MoMo gave no " + p.name + " token"}
	}
	return a.AccessToken, a.ExpiresIn, nil
}

// send makes one request and answers its status and body (gateway.Send:
// MTN answers 202 with none, some refusals are not JSON, and a 401 may only
// mean the token expired).
func (c *Client) send(ctx context.Context, method, path string, header http.Header, in any) (int, []byte, error) {
	u := gateway.URL(c.BaseURL, path)
	if parsed, err := url.Parse(u); err != nil || parsed.Host == "" {
		return 0, nil, &gateway.Error{Message: "MTN MoMo address: no host in " + truncate(c.BaseURL, 100)}
	}
	return gateway.Send(ctx, c.HTTP, "MTN MoMo", method, u, header, in)
}
