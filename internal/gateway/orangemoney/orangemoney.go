// Package orangemoney is the connector to Orange Money Web Payment ("OM
// WebPay", developer.orange.com), for collections only: a web payment
// created for the merchant's wallet, paid by the customer on Orange's own
// payment page (their Orange Money number and a one-time code from the
// USSD menu), its status read and its notification; and a simulator of
// that part of the API. Facts from developer.orange.com (the OAuth
// technical guide and the error-handling guide; OM WebPay Dev's "Getting
// started", as a stored copy shows it), public SDKs and integrations of
// the API; testdata/SOURCES.md says which fact comes from where, and which
// remain unconfirmed.
//
// Every call carries a bearer token the OAuth endpoint gives for the app's
// client id and secret; the token is kept until shortly before it expires.
// A collection is a redirect, as Wave's: the web payment's payment_url is
// the page where the customer pays. OM takes an order_id of ours (unique
// per merchant, at most 30 characters: the first 30 letters and digits of
// our reference) but is asked about a payment by its pay_token, order_id
// and amount together; our Ref carries no amount, so the ProviderRef handed
// to Collection.Created (and answered by every status) is the pay_token
// and the amount in whole units, "pay_token|amount" (see providerRef): the
// service stores it opaque and gives it back in Ref.ProviderRef. OM takes
// no idempotency key: a web payment sent twice is two payment pages, so
// this is not a gateway.IdempotentCollector.
//
// The notification OM POSTs to notif_url carries neither our order_id nor
// the pay_token, only {status, notif_token, txnid}: the connector gives OM
// the gateway's callback address with our reference in its query
// (ref=...), which the service hands to CallbackReference under
// gateway.CallbackQueryHeader. The notif_token is not checked (the
// connector keeps no state): the notification is only a signal, which a
// status read confirms.
//
// It imports the domain and the gateway package.
package orangemoney

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// LiveURL is the API's host, for the sandbox and every country alike (the
// country is in the path).
const LiveURL = "https://api.orange.com"

// The API's paths: the token's, and the web payment's and status's under
// /orange-money-webpay/{country}/v1.
const (
	tokenPath   = "/oauth/v3/token"
	webpayPath  = "/orange-money-webpay/%s/v1/webpayment"
	statusPath  = "/orange-money-webpay/%s/v1/transactionstatus"
	refParam    = "ref" // the query parameter of notif_url carrying our reference
	providerSep = "|"   // between the pay_token and the amount in a ProviderRef
)

// Sandbox is the country path segment of the sandbox (OM WebPay Dev), the
// default; a live merchant uses their country's.
const Sandbox = "dev"

// SandboxCurrency is the sandbox's only currency, "OUV" (Orange's test
// unit), whatever the collection's.
const SandboxCurrency = "OUV"

// Countries maps the country path segments seen in use to the currency OM
// collects there. A country not listed here is used as given, with the
// collection's own currency (testdata/SOURCES.md: the list is not
// confirmed).
var Countries = map[string]cauri.Currency{
	"ci": "XOF", "sn": "XOF", "ml": "XOF", "bf": "XOF",
	"cm": "XAF", "gn": "GNF", "mg": "MGA",
}

// Limits of the web payment's fields (integrations of OM WebPay: order_id
// and reference at most 30 characters).
const (
	orderIDMax   = 30
	referenceMax = 30
)

// Client is an Orange Developer app subscribed to OM WebPay, and the
// merchant wallet (its merchant key) it collects to, in one country.
type Client struct {
	BaseURL string // LiveURL, or a simulator's
	// TokenURL is the OAuth endpoint; BaseURL + /oauth/v3/token when empty
	// (so that a simulator serves both).
	TokenURL     string
	Country      string // the path's country: credential "country", optional; Sandbox when empty
	ClientID     string // the app's client id: credential "client_id"
	ClientSecret string // its client secret: credential "client_secret"
	MerchantKey  string // the wallet's merchant key: credential "merchant_key"
	// MerchantName is the web payment's reference, the name the customer
	// sees on Orange's page: credential "merchant_name", optional.
	MerchantName string
	HTTP         *http.Client
	Now          func() time.Time // the tokens' clock; time.Now when nil

	tokens gateway.Tokens
}

var _ gateway.Connector = (*Client)(nil)

// TokenMargin is how long before its expiry a token is renewed.
const TokenMargin = gateway.TokenMargin

// webPayment is POST /orange-money-webpay/{country}/v1/webpayment: the
// amount in whole units (a JSON number), our order id, where the customer
// goes back to, where OM notifies.
type webPayment struct {
	MerchantKey string `json:"merchant_key"`
	Currency    string `json:"currency"`
	OrderID     string `json:"order_id"`
	Amount      int64  `json:"amount"`
	ReturnURL   string `json:"return_url"`
	CancelURL   string `json:"cancel_url"`
	NotifURL    string `json:"notif_url"`
	Lang        string `json:"lang"`
	Reference   string `json:"reference,omitempty"`
}

// statusRequest is POST /orange-money-webpay/{country}/v1/transactionstatus.
type statusRequest struct {
	OrderID  string `json:"order_id"`
	Amount   int64  `json:"amount"`
	PayToken string `json:"pay_token"`
}

// created is OM's answer to a web payment: 201 {status: 201, message:
// "OK", pay_token, payment_url, notif_token}.
type created struct {
	Status     text   `json:"status"`
	Message    string `json:"message"`
	PayToken   string `json:"pay_token"`
	PaymentURL string `json:"payment_url"`
	NotifToken string `json:"notif_token"`
}

// transaction is a status read's answer: {status, order_id, txnid}; the
// txnid (Orange Money's transaction id, once paid) is not used.
type transaction struct {
	Status  string `json:"status"` // INITIATED, PENDING, EXPIRED, SUCCESS, FAILED
	OrderID string `json:"order_id"`
	TxnID   string `json:"txnid"`
}

// notification is what OM POSTs to notif_url: {status, notif_token,
// txnid}; order_id is read too, should OM send it.
type notification struct {
	Status     string `json:"status"`
	NotifToken string `json:"notif_token"`
	TxnID      string `json:"txnid"`
	OrderID    string `json:"order_id"`
}

// text is a JSON string, or a number taken as its text.
type text = gateway.Text

// omError is a refusal: Orange's API gateway answers {code, message,
// description}; OM WebPay's own refusals have been seen with the same
// fields, or {error, error_description} from the OAuth endpoint.
type omError struct {
	Code             text `json:"code"`
	Message          text `json:"message"`
	Description      text `json:"description"`
	Error            text `json:"error"`
	ErrorDescription text `json:"error_description"`
}

func errorOf(raw []byte) omError {
	var e omError
	json.Unmarshal(raw, &e)
	return e
}

// words is a refusal in Orange's words: "code: message (description)", ""
// when it has none.
func (e omError) words() string {
	code, msg, desc := string(e.Code), string(e.Message), string(e.Description)
	if code == "" && msg == "" {
		code, desc = string(e.Error), string(e.ErrorDescription)
	}
	w := strings.Trim(code+": "+msg, ": ")
	if desc != "" && desc != msg {
		w = strings.TrimSpace(w + " (" + desc + ")")
	}
	return truncate(w, 200)
}

// refusal is an answer's HTTP status and Orange's words.
func refusal(code int, raw []byte) string {
	if w := errorOf(raw).words(); w != "" {
		return fmt.Sprintf("%d %s", code, w)
	}
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n]))
	}
	return s
}

// country is the path's country segment, Sandbox by default.
func (c *Client) country() string {
	if s := strings.ToLower(strings.TrimSpace(c.Country)); s != "" {
		return s
	}
	return Sandbox
}

// OrderID is the web payment's order_id for our reference: its first 30
// ASCII letters and digits (a UUID's first 30 hex digits), "" when it has
// none. The same reference always gives the same order_id: status reads
// rebuild it.
func OrderID(reference string) string {
	var b strings.Builder
	for _, r := range reference {
		if b.Len() == orderIDMax {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wholeUnits is an amount in minor units of currency as OM takes it, whole
// units; ok is false when it has a fractional part or is not positive.
func wholeUnits(amount int64, currency cauri.Currency) (whole int64, ok bool) {
	unit := int64(1)
	for range currency.Exponent() {
		unit *= 10
	}
	return amount / unit, amount > 0 && amount%unit == 0
}

// providerRef is the ProviderRef of a web payment: its pay_token and its
// amount in whole units, which a status read needs and our Ref does not
// carry ("pay_token|amount").
func providerRef(payToken string, whole int64) string {
	return payToken + providerSep + strconv.FormatInt(whole, 10)
}

// parseProviderRef reads a ProviderRef made by providerRef; ok is false
// when it is not one.
func parseProviderRef(ref string) (payToken string, whole int64, ok bool) {
	i := strings.LastIndex(ref, providerSep)
	if i <= 0 {
		return "", 0, false
	}
	whole, err := strconv.ParseInt(ref[i+1:], 10, 64)
	if err != nil || whole <= 0 {
		return "", 0, false
	}
	return ref[:i], whole, true
}

// webURL reports whether s is an absolute http(s) address.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// notifURL is the gateway's callback address with our reference in its
// query (ref=...), the only way the notification can name the payment.
func notifURL(notify, reference string) string {
	u, err := url.Parse(strings.TrimSpace(notify))
	if err != nil {
		return notify
	}
	q := u.Query()
	q.Set(refParam, reference)
	u.RawQuery = q.Encode()
	return u.String()
}

// currency is the currency OM is asked for: OUV in the sandbox; else the
// country's, which the collection's must be. ok is false when it is not.
func (c *Client) currency(col cauri.Currency) (string, bool) {
	country := c.country()
	if country == Sandbox {
		return SandboxCurrency, true
	}
	if want, known := Countries[country]; known && want != col {
		return string(want), false
	}
	return string(col), true
}

// invalid is a collection refused before anything is sent: not one OM
// WebPay can make (a card, a currency the country does not collect, a
// fractional amount), or without the addresses OM requires. It answers the
// failed Status and true, or false when all is well.
func (c *Client) invalid(col gateway.Collection) (gateway.Status, bool) {
	why := ""
	_, amountOK := wholeUnits(col.Amount, col.Currency)
	want, currencyOK := c.currency(col.Currency)
	switch {
	case col.Card:
		why = "it takes no cards (Orange Money wallets only)"
	case col.Amount <= 0:
		why = "the amount is not positive"
	case !amountOK:
		why = "Orange Money takes whole units; the amount " + cauri.FormatAmount(col.Amount, col.Currency) + " " + string(col.Currency) + " has a fractional part"
	case !currencyOK:
		why = "Orange Money collects " + want + " in " + strings.ToUpper(c.country()) + ", not " + string(col.Currency)
	case OrderID(col.Reference) == "":
		why = "the reference has no letters or digits for an order_id"
	case strings.TrimSpace(col.NotifyURL) == "":
		why = "OM WebPay requires a notification address (notif_url), and the collection has none"
	case !webURL(col.NotifyURL):
		why = "the notification address is not an absolute http(s) URL"
	case !webURL(col.ReturnURL):
		why = "OM WebPay requires an absolute http(s) return address (return_url, cancel_url)"
	default:
		return gateway.Status{}, false
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to Orange Money: " + why}, true
}

// encodeWebPayment is the web payment of a valid collection.
func (c *Client) encodeWebPayment(col gateway.Collection) webPayment {
	whole, _ := wholeUnits(col.Amount, col.Currency)
	currency, _ := c.currency(col.Currency)
	back := strings.TrimSpace(col.ReturnURL)
	return webPayment{MerchantKey: c.MerchantKey, Currency: currency, OrderID: OrderID(col.Reference), Amount: whole,
		ReturnURL: back, CancelURL: back, NotifURL: notifURL(col.NotifyURL, col.Reference), Lang: "fr",
		Reference: truncate(strings.TrimSpace(c.MerchantName), referenceMax)}
}

// Collect implements gateway.Connector: it creates the web payment, records
// "pay_token|amount" through col.Created, and answers Orange's payment page
// (RedirectURL), pending until the customer pays there. Orange sends the
// customer back to ReturnURL whether they paid or cancelled (return_url and
// cancel_url alike). A refusal (a 4xx with Orange's words, or a 2xx
// without a pay_token or a payment_url) is a failed collection; a 5xx or
// no answer concludes nothing (transient).
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	if st, bad := c.invalid(col); bad {
		return st, nil
	}
	if err := c.configured(); err != nil {
		return gateway.Status{}, err
	}
	wp := c.encodeWebPayment(col)
	code, raw, err := c.api(ctx, fmt.Sprintf(webpayPath, url.PathEscape(c.country())), wp)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		// No such endpoint here (a country OM does not serve, a wrong
		// address): the gateway's configuration, not the payment.
		return gateway.Status{}, &gateway.Error{Message: "Orange Money answered the web payment " + refusal(code, raw) + " (check the gateway's address and country)"}
	case code >= 400:
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, raw)}, nil
	case code >= 300:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("Orange Money answered the web payment %d", code)}
	}
	var a created
	if err := json.Unmarshal(raw, &a); err != nil {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Orange Money answered the web payment with unreadable JSON"}
	}
	token, page := strings.TrimSpace(a.PayToken), strings.TrimSpace(a.PaymentURL)
	if token == "" || !webURL(page) {
		why := strings.Trim(string(a.Status)+": "+a.Message, ": ")
		if why == "" {
			why = "no pay_token or payment_url"
		}
		return gateway.Status{Outcome: gateway.Failed, Reason: truncate(fmt.Sprintf("%d %s", code, why), 200)}, nil
	}
	ref := providerRef(token, wp.Amount)
	if col.Created != nil {
		if err := col.Created(ref); err != nil {
			// The page was never shown: nothing can be paid on it.
			return gateway.Status{}, &gateway.Error{Message: "Orange Money web payment " + token + " not recorded, not shown: " + err.Error()}
		}
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: ref, RedirectURL: page}, nil
}

// CollectionStatus implements gateway.Connector: the transaction status, by
// the pay_token and amount of ref.ProviderRef ("pay_token|amount") and the
// order_id rebuilt from ref.Reference. Without a ProviderRef, OM never
// accepted a web payment as far as we know (it refused it, or never
// answered): there is no payment page, nothing to ask about, nothing that
// can be paid: not found.
//
// SUCCESS is collected; FAILED and EXPIRED are final failures; INITIATED
// (the page not yet used) and PENDING wait. Any other status, a refusal or
// an answer about another order concludes nothing: an error. The
// ProviderRef answered is always ref's, so that later reads still work.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	pr := strings.TrimSpace(ref.ProviderRef)
	if pr == "" {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	token, whole, ok := parseProviderRef(pr)
	if !ok {
		return gateway.Status{}, &gateway.Error{Message: "Orange Money payment " + truncate(pr, 60) + " has no amount in its id (pay_token|amount)"}
	}
	if err := c.configured(); err != nil {
		return gateway.Status{}, err
	}
	orderID := OrderID(ref.Reference)
	code, raw, err := c.api(ctx, fmt.Sprintf(statusPath, url.PathEscape(c.country())), statusRequest{OrderID: orderID, Amount: whole, PayToken: token})
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code >= 300:
		return gateway.Status{}, &gateway.Error{Message: "Orange Money answered the status read " + refusal(code, raw)}
	}
	var a transaction
	if err := json.Unmarshal(raw, &a); err != nil {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Orange Money answered an unreadable status"}
	}
	if o := strings.TrimSpace(a.OrderID); o != "" && o != orderID {
		return gateway.Status{}, &gateway.Error{Message: "Orange Money answered about order " + truncate(o, 60) + ", not " + orderID}
	}
	return transactionStatus(a, pr)
}

// transactionStatus reads a status of the web payment whose ProviderRef is
// ref.
func transactionStatus(a transaction, ref string) (gateway.Status, error) {
	st := gateway.Status{ProviderRef: ref}
	switch s := strings.ToUpper(strings.TrimSpace(a.Status)); s {
	case "SUCCESS":
		st.Outcome = gateway.Succeeded
	case "FAILED":
		st.Outcome, st.Reason = gateway.Failed, "failed"
	case "EXPIRED":
		st.Outcome, st.Reason = gateway.Failed, "expired"
	case "INITIATED", "PENDING":
		st.Outcome = gateway.Pending
	case "":
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Orange Money answered a status without a status"}
	default:
		return gateway.Status{}, &gateway.Error{Message: "Orange Money status " + truncate(s, 40) + " is unknown"}
	}
	return st, nil
}

// CallbackReference implements gateway.Connector. OM's notification
// ({status, notif_token, txnid}) names no payment: our reference comes back
// in the query of the notif_url the connector gave (ref=...), which the
// service passes under gateway.CallbackQueryHeader. Without it, a body's
// order_id is taken, should OM send one (it is our reference only when
// that is 30 letters and digits at most). The notif_token is not checked:
// the notification is only a signal, which a status read confirms.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return "", errors.New("Orange Money notification is not JSON")
	}
	if q := h.Get(gateway.CallbackQueryHeader); q != "" {
		if v, err := url.ParseQuery(q); err == nil {
			if ref := strings.TrimSpace(v.Get(refParam)); ref != "" {
				return ref, nil
			}
		}
	}
	if ref := strings.TrimSpace(n.OrderID); ref != "" {
		return ref, nil
	}
	return "", errors.New("Orange Money notification without our reference (no ref in its address, no order_id)")
}

// configured refuses, before anything is sent, a client without the
// credentials every request needs.
func (c *Client) configured() error {
	for _, f := range []struct{ value, credential string }{
		{c.ClientID, "client_id"}, {c.ClientSecret, "client_secret"}, {c.MerchantKey, "merchant_key"},
	} {
		if strings.TrimSpace(f.value) == "" {
			return &gateway.Error{NotSent: true, Message: fmt.Sprintf("Orange Money needs the credential %q", f.credential)}
		}
	}
	return nil
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// tokenRefused reports whether an answer refuses the bearer token: a 401
// (Orange's codes 40 missing, 41 invalid, 42 expired credentials), which
// Orange's gateway answers before the API does anything.
func tokenRefused(code int) bool { return code == http.StatusUnauthorized }

// api POSTs one request to OM WebPay with a token (gateway.Tokens.Call: a
// refused token, a 401, is renewed once).
func (c *Client) api(ctx context.Context, path string, in any) (int, []byte, error) {
	return c.tokens.Call(ctx, "", c.now(), gateway.TokenCall{
		Name: "Orange Money", Fetch: c.newToken, Refusal: refusal,
		Refused: func(code int, _ []byte) bool { return tokenRefused(code) },
		Words:   func(raw []byte) string { return errorOf(raw).words() },
		Send:    func(ctx context.Context, tok string) (int, []byte, error) { return c.send(ctx, path, tok, in) },
	})
}

// send makes one JSON request with the bearer token (gateway.Send: OM's
// refusals must be read).
func (c *Client) send(ctx context.Context, path, token string, in any) (int, []byte, error) {
	u := gateway.URL(c.BaseURL, path)
	if parsed, err := url.Parse(u); err != nil || parsed.Host == "" {
		return 0, nil, &gateway.Error{Message: "Orange Money address: no host in " + truncate(c.BaseURL, 100)}
	}
	h := http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/json"}}
	return gateway.Send(ctx, c.HTTP, "Orange Money", http.MethodPost, u, h, in)
}

// tokenURL is the OAuth endpoint: TokenURL, or BaseURL's.
func (c *Client) tokenURL() string {
	if s := strings.TrimSpace(c.TokenURL); s != "" {
		return s
	}
	return gateway.URL(c.BaseURL, tokenPath)
}

// newToken is POST /oauth/v3/token with the client id and secret (Basic)
// and the form grant_type=client_credentials: {token_type, access_token,
// expires_in}.
func (c *Client) newToken(ctx context.Context) (string, int64, error) {
	u := c.tokenURL()
	if parsed, err := url.Parse(u); err != nil || parsed.Host == "" {
		return "", 0, &gateway.Error{Message: "Orange Money token address: no host in " + truncate(u, 100)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	if err != nil {
		return "", 0, &gateway.Error{Message: "Orange Money token address: " + err.Error()}
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.ClientID+":"+c.ClientSecret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	res, err := hc.Do(req)
	if err != nil {
		return "", 0, &gateway.Error{Transient: true, Message: "Orange Money did not answer the token request: " + gateway.Describe(err)}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	code := res.StatusCode
	switch {
	case err != nil:
		return "", 0, &gateway.Error{Transient: true, Message: "Orange Money token answer cut: " + err.Error()}
	case code == http.StatusTooManyRequests || code >= 500:
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: "Orange Money answered the token request " + refusal(code, raw)}
	case code >= 400:
		return "", 0, &gateway.Error{Message: "Orange Money refused the gateway's client id or secret (" + refusal(code, raw) + ")"}
	case code != http.StatusOK:
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: "Orange Money answered the token request " + refusal(code, raw)}
	}
	var a struct {
		TokenType   string `json:"token_type"`
		AccessToken string `json:"access_token"`
		ExpiresIn   text   `json:"expires_in"`
	}
	if json.Unmarshal(raw, &a) != nil || strings.TrimSpace(a.AccessToken) == "" {
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: "Orange Money gave no token"}
	}
	secs, _ := strconv.ParseInt(string(a.ExpiresIn), 10, 64)
	return a.AccessToken, secs, nil
}
