// Package wave is the connector to Wave's Business API (Senegal, Côte
// d'Ivoire and the other Wave countries: a wallet of its own, no operator
// to choose): collections through the Checkout API (a checkout session and
// Wave's own launch page), payouts to a Wave account through the Payout
// API (payout.go), whole refunds of a paid checkout session (refund.go),
// status by Wave's id or by our reference, and the signed
// webhooks; and a simulator of that part of its API. Facts from
// docs.wave.com (checkout, payout, webhook, business: endpoints, base URL,
// bearer API keys bound to one wallet, authentication error codes, webhook
// security strategies) and, where the stored copies of those pages stop,
// from public integrations and a webhook Wave sent (testdata/SOURCES.md
// says which fact comes from where, and which remain unconfirmed).
//
// A collection is a redirect: the session's wave_launch_url is the page
// (or the app) where the customer pays; its id is handed to
// Collection.Created before the address is shown, and status reads use it,
// or our reference (client_reference) through the search when it is not
// known. Payouts carry our reference as their idempotency-key: one sent
// again is never paid twice.
//
// It imports the domain and the gateway package.
package wave

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
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

// Client is a Wave business wallet: its API key is bound to that wallet,
// hence to one country and currency.
type Client struct {
	BaseURL       string // https://api.wave.com, or a simulator's
	APIKey        string // wave_sn_prod_...: credential "api_key"
	WebhookSecret string // the webhooks' signing secret: credential "webhook_secret", optional
	HTTP          *http.Client
	Now           func() time.Time // the webhooks' timestamp check; time.Now when nil
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
)

// SignatureTolerance is how far from now a webhook's timestamp may be.
const SignatureTolerance = 5 * time.Minute

// checkoutRequest is POST /v1/checkout/sessions: the amount as a string in
// major units, where the customer goes back to, and our reference.
type checkoutRequest struct {
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	SuccessURL      string `json:"success_url"`
	ErrorURL        string `json:"error_url"`
	ClientReference string `json:"client_reference"`
}

// session is a checkout session as Wave's answers and webhooks carry it.
type session struct {
	ID               string          `json:"id"`
	Amount           string          `json:"amount"`
	Currency         string          `json:"currency"`
	CheckoutStatus   string          `json:"checkout_status"` // open, complete, expired
	PaymentStatus    string          `json:"payment_status"`  // processing, cancelled, succeeded
	ClientReference  *string         `json:"client_reference"`
	TransactionID    *string         `json:"transaction_id"`
	WaveLaunchURL    string          `json:"wave_launch_url"`
	LastPaymentError json.RawMessage `json:"last_payment_error"`
}

// searchAnswer is a search by client_reference: the matches under "result".
type searchAnswer[T any] struct {
	Result []T `json:"result"`
}

// waveError is Wave's refusal: its code and message at the top, or under
// "error" on some answers, or as error_code and error_message on others.
type waveError struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message"`
	Error        *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// words is a refusal in Wave's words: "code: message".
func (e waveError) words() string {
	code, msg := e.Code, e.Message
	if code == "" && msg == "" {
		code, msg = e.ErrorCode, e.ErrorMessage
	}
	if code == "" && msg == "" && e.Error != nil {
		code, msg = e.Error.Code, e.Error.Message
	}
	return strings.Trim(code+": "+msg, ": ")
}

// refusal is an answer's status and Wave's words for a refusal.
func refusal(code int, raw json.RawMessage) string {
	var e waveError
	json.Unmarshal(raw, &e)
	w := e.words()
	if w == "" {
		w = "refused"
	}
	return fmt.Sprintf("%d %s", code, w)
}

func encodeCheckout(col gateway.Collection) checkoutRequest {
	return checkoutRequest{Amount: cauri.FormatAmount(col.Amount, col.Currency), Currency: string(col.Currency),
		SuccessURL: col.ReturnURL, ErrorURL: col.ReturnURL, ClientReference: col.Reference}
}

// Collect implements gateway.Connector: it creates the checkout session,
// records its id, and answers its launch page. Wave needs neither an
// operator nor the customer's number (it is its own wallet); a refusal is
// a failed collection.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	var raw json.RawMessage
	code, err := c.call(ctx, http.MethodPost, "/v1/checkout/sessions", encodeCheckout(col), &raw)
	if err != nil {
		return gateway.Status{}, err
	}
	var s session
	if code >= 300 || json.Unmarshal(raw, &s) != nil || s.ID == "" || s.WaveLaunchURL == "" {
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, raw)}, nil
	}
	if col.Created != nil {
		if err := col.Created(s.ID); err != nil {
			return gateway.Status{}, &gateway.Error{Message: "Wave checkout session " + s.ID + " not recorded, not shown: " + err.Error()}
		}
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: s.ID, RedirectURL: s.WaveLaunchURL}, nil
}

// CollectionStatus implements gateway.Connector: by Wave's id when known,
// else by our reference (the search); an id Wave does not know is looked
// for by our reference too (the id stored may be the transaction's, once
// paid). None found is not found.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var sessions []session
	if ref.ProviderRef != "" {
		s, found, err := get[session](ctx, c, "/v1/checkout/sessions/"+url.PathEscape(ref.ProviderRef))
		if err != nil {
			return gateway.Status{}, err
		}
		if found {
			sessions = []session{s}
		}
	}
	if sessions == nil {
		var err error
		if sessions, err = search[session](ctx, c, "/v1/checkout/sessions/search", ref.Reference); err != nil {
			return gateway.Status{}, err
		}
	}
	var best *gateway.Status
	for _, s := range sessions {
		if r := deref(s.ClientReference); r != "" && r != ref.Reference {
			return gateway.Status{}, &gateway.Error{Message: "Wave checkout session " + s.ID + " is not payment " + ref.Reference}
		}
		st, known := sessionStatus(s)
		if !known {
			return gateway.Status{}, &gateway.Error{Message: "Wave checkout session status " + s.PaymentStatus + "/" + s.CheckoutStatus + " is unknown"}
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

// rank orders the outcomes of several sessions or payouts found for one
// reference: money collected or sent wins, then one still under way.
var rank = map[gateway.Outcome]int{gateway.Failed: 1, gateway.Pending: 2, gateway.Succeeded: 3}

// sessionStatus reads a session: a succeeded payment is collected (its
// transaction id is the one the customer sees in the app); a cancelled one
// failed, and so did an expired session without a payment; an open one
// waits, even after a failed attempt (the customer may try again). known
// is false for a status Wave does not document.
func sessionStatus(s session) (st gateway.Status, known bool) {
	st = gateway.Status{Outcome: gateway.Pending, ProviderRef: s.ID}
	switch {
	case s.PaymentStatus == "succeeded":
		st.Outcome = gateway.Succeeded
		if t := deref(s.TransactionID); t != "" {
			st.ProviderRef = t
		}
	case s.PaymentStatus == "cancelled":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix("cancelled: "+lastError(s.LastPaymentError), ": ")
	case s.PaymentStatus != "processing":
		return st, false
	case s.CheckoutStatus == "expired":
		st.Outcome, st.Reason = gateway.Failed, "expired"
	case s.CheckoutStatus != "open" && s.CheckoutStatus != "complete":
		return st, false
	}
	return st, true
}

// lastError is a session's last_payment_error in a few words: its code
// and message when it is an object, the text when it is one.
func lastError(raw json.RawMessage) string {
	var e struct{ Code, Message string }
	if json.Unmarshal(raw, &e) == nil {
		return strings.Trim(e.Code+": "+e.Message, ": ")
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Sign is a webhook's Wave-Signature at unix time t: t=<t>,v1=<hex
// HMAC-SHA256 under the signing secret of "<t><body>">, with no separator
// between the timestamp and the body.
func Sign(secret string, t int64, body []byte) string {
	ts := strconv.FormatInt(t, 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write(body)
	return m.Sum(nil)
}

// CallbackReference implements gateway.Connector, for checkout sessions
// and any other event whose data carries our reference (client_reference).
// With a webhook secret on the gateway, the webhook must be signed with it
// (Wave-Signature, any of its v1 values matching, at most
// SignatureTolerance from now) or carry it as a bearer token (Wave's
// shared-secret strategy). Without one, it is accepted: it is only a
// signal, which a status read confirms.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	if c.WebhookSecret != "" {
		if err := c.verify(h, body); err != nil {
			return "", err
		}
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			ClientReference *string `json:"client_reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || deref(ev.Data.ClientReference) == "" {
		return "", errors.New("Wave webhook about no Cauri payment or payout")
	}
	return *ev.Data.ClientReference, nil
}

// verify checks a webhook's signature, or its shared secret.
func (c *Client) verify(h http.Header, body []byte) error {
	header := h.Get("Wave-Signature")
	if header == "" {
		bearer, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(bearer)), []byte(c.WebhookSecret)) == 1 {
			return nil
		}
		return errors.New("Wave webhook without a signature or the shared secret")
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("Wave webhook without a usable signature")
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if age := now().Sub(time.Unix(unix, 0)); age > SignatureTolerance || age < -SignatureTolerance {
		return errors.New("Wave webhook signed too long ago")
	}
	want := mac(c.WebhookSecret, ts, body)
	ok := false
	for _, s := range sigs {
		ok = hmac.Equal(s, want) || ok
	}
	if !ok {
		return errors.New("Wave webhook with a wrong signature")
	}
	return nil
}

// get reads one object by its path; found is false when Wave answers 404.
// Any other refusal concludes nothing: an error.
func get[T any](ctx context.Context, c *Client, path string) (obj T, found bool, err error) {
	var raw json.RawMessage
	code, err := c.call(ctx, http.MethodGet, path, nil, &raw)
	switch {
	case err != nil:
		return obj, false, err
	case code == http.StatusNotFound:
		return obj, false, nil
	case code >= 300:
		return obj, false, &gateway.Error{Message: "Wave answered " + refusal(code, raw)}
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return obj, false, &gateway.Error{Transient: true, Answered: true, Message: "Wave answered an unreadable object"}
	}
	return obj, true, nil
}

// search lists the objects carrying our reference as client_reference;
// none (or 404) is an empty list, never nil.
func search[T any](ctx context.Context, c *Client, path, reference string) ([]T, error) {
	var raw json.RawMessage
	code, err := c.call(ctx, http.MethodGet, path+"?client_reference="+url.QueryEscape(reference), nil, &raw)
	switch {
	case err != nil:
		return nil, err
	case code == http.StatusNotFound:
		return []T{}, nil
	case code >= 300:
		return nil, &gateway.Error{Message: "Wave answered " + refusal(code, raw)}
	}
	var a searchAnswer[T]
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, &gateway.Error{Transient: true, Answered: true, Message: "Wave answered an unreadable search"}
	}
	if a.Result == nil {
		a.Result = []T{}
	}
	return a.Result, nil
}

// call sends one request to Wave with the wallet's key (and the extra
// header, an idempotency key).
func (c *Client) call(ctx context.Context, method, path string, in, out any, extra ...http.Header) (int, error) {
	return gateway.Call(ctx, c.HTTP, "Wave", method, gateway.URL(c.BaseURL, path), c.header(extra), in, out)
}

// send is call for the answers call cannot read (a refund's empty 200):
// the status and the raw answer.
func (c *Client) send(ctx context.Context, method, path string, in any) (int, []byte, error) {
	return gateway.Send(ctx, c.HTTP, "Wave", method, gateway.URL(c.BaseURL, path), c.header(nil), in)
}

func (c *Client) header(extra []http.Header) http.Header {
	h := http.Header{"Authorization": {"Bearer " + c.APIKey}}
	for _, e := range extra {
		for k, v := range e {
			h[k] = v
		}
	}
	return h
}
