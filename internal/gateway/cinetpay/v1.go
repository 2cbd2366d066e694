package cinetpay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// CinetPay's API v1 (the one its current SDKs speak: cinetpay-js,
// cinetpay-python, cinetpay-laravel-sdk, cinetpay-go; the browser SDKs
// cinetpay-seamless and cinetpay_flutter open its page) is a server API
// on api.cinetpay.co (sandbox api.cinetpay.net): a JWT from POST
// /v1/oauth/login with the account's api_key (sk_live_… or sk_test_…) and
// api_password, then POST /v1/payment (a payment_token and the page's
// payment_url) and GET /v1/payment/{merchant_transaction_id} (its
// status). It has no site_id. Sources in testdata/SOURCES.md: the
// cinetpay/cinetpay-seamless README ("API directe") and source, the
// cinetpay/cinetpay-flutter README, the cinetpay-js and cinetpay-python
// READMEs.
//
// V1Client collects through it. Its transfers are not connected: their
// paths and fields are in none of CinetPay's material stored here.

// V1 hosts: the live one, and the sandbox one for sk_test_ keys.
const (
	V1LiveURL    = "https://api.cinetpay.co"
	V1SandboxURL = "https://api.cinetpay.net"
)

// v1TokenLife is how long a v1 token is used when the login does not say:
// cinetpay-python keeps its JWT 23 hours.
const v1TokenLife = 23 * 3600

// V1Client is a CinetPay account on the API v1.
type V1Client struct {
	BaseURL     string // V1LiveURL, V1SandboxURL or a simulator's
	APIKey      string // the account's api_key (sk_live_… or sk_test_…)
	APIPassword string // its api_password
	HTTP        *http.Client
	Now         func() time.Time // the token's clock; time.Now when nil

	tokens gateway.Tokens
}

var _ gateway.Connector = (*V1Client)(nil)

// NewV1 returns the connector of a CinetPay account on the API v1. With
// no baseURL, the host follows the key as CinetPay's SDKs do: the sandbox
// for an sk_test_ key, else the live one.
func NewV1(baseURL, apiKey, apiPassword string, hc *http.Client) *V1Client {
	if baseURL == "" {
		baseURL = V1LiveURL
		if strings.HasPrefix(apiKey, "sk_test_") {
			baseURL = V1SandboxURL
		}
	}
	return &V1Client{BaseURL: baseURL, APIKey: apiKey, APIPassword: apiPassword, HTTP: hc}
}

type v1Login struct {
	APIKey      string `json:"api_key"`
	APIPassword string `json:"api_password"`
}

// v1Answer is what the API v1 answers: the login's access_token, the
// payment's token and page, a status; each read at the top or under data.
type v1Answer struct {
	Code                  gateway.Text `json:"code"`
	Status                string       `json:"status"`
	Message               string       `json:"message"`
	Description           string       `json:"description"`
	AccessToken           string       `json:"access_token"`
	ExpiresIn             gateway.Text `json:"expires_in"`
	PaymentToken          string       `json:"payment_token"`
	PaymentURL            string       `json:"payment_url"`
	MerchantTransactionID string       `json:"merchant_transaction_id"`
	TransactionID         string       `json:"transaction_id"`
	Data                  v1Data       `json:"data"`
}

// v1Data is an answer's data when it is an object; anything else (a
// list, null) is left out.
type v1Data struct{ *v1Answer }

func (d *v1Data) UnmarshalJSON(b []byte) error {
	var a v1Answer
	if json.Unmarshal(b, &a) == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		d.v1Answer = &a
	}
	return nil
}

// field returns f of a, else of a.data.
func (a *v1Answer) field(f func(*v1Answer) string) string {
	if v := f(a); v != "" || a.Data.v1Answer == nil {
		return v
	}
	return f(a.Data.v1Answer)
}

func (a *v1Answer) words() string {
	s := strings.TrimSpace(string(a.Code) + " " + a.field(func(a *v1Answer) string { return a.Status }) + " " + a.Message)
	if d := a.field(func(a *v1Answer) string { return a.Description }); d != "" {
		s += ": " + d
	}
	return s
}

// v1PaymentRequest is POST /v1/payment's body.
type v1PaymentRequest struct {
	Currency              string `json:"currency"`
	MerchantTransactionID string `json:"merchant_transaction_id"`
	Amount                int64  `json:"amount"` // major units
	Lang                  string `json:"lang"`
	Designation           string `json:"designation"`
	ClientEmail           string `json:"client_email,omitempty"`
	ClientFirstName       string `json:"client_first_name,omitempty"`
	ClientLastName        string `json:"client_last_name,omitempty"`
	ClientPhoneNumber     string `json:"client_phone_number,omitempty"`
	SuccessURL            string `json:"success_url"`
	FailedURL             string `json:"failed_url"`
	NotifyURL             string `json:"notify_url"`
	Channel               string `json:"channel"`
	DirectPay             bool   `json:"direct_pay"`
}

// v1RefParam carries our reference in the notify_url given: the v1
// notification's body is not documented.
const v1RefParam = "cauri_ref"

// withRef adds our reference to the notification address.
func withRef(notify, ref string) string {
	u, err := url.Parse(notify)
	if err != nil || notify == "" {
		return notify
	}
	q := u.Query()
	q.Set(v1RefParam, ref)
	u.RawQuery = q.Encode()
	return u.String()
}

func encodeV1Payment(col gateway.Collection, amount int64) v1PaymentRequest {
	desc := strings.TrimSpace(col.Description)
	if desc == "" {
		desc = "Payment " + col.Reference
	}
	last, first := splitName(col.Name)
	if first == "" {
		first = last
	}
	return v1PaymentRequest{Currency: string(col.Currency), MerchantTransactionID: col.Reference, Amount: amount, Lang: "fr",
		Designation: desc, ClientEmail: strings.TrimSpace(col.Email), ClientFirstName: first, ClientLastName: last,
		ClientPhoneNumber: col.Phone, SuccessURL: col.ReturnURL, FailedURL: col.ReturnURL,
		NotifyURL: withRef(col.NotifyURL, col.Reference), Channel: "PUSH"}
}

// Collect implements gateway.Connector: POST /v1/payment; the payment
// waits on CinetPay's page (Status.RedirectURL). The amount rules of the
// checkout API v2 are applied (refused before sending): CinetPay's
// material states none for the v1 and its examples keep to them.
func (c *V1Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	major, err := checkAmount(col.Amount, col.Currency)
	if err != nil {
		return gateway.Status{}, err
	}
	amount, _ := strconv.ParseInt(major, 10, 64)
	code, a, err := c.send(ctx, http.MethodPost, "/v1/payment", encodeV1Payment(col, amount))
	if err != nil {
		return gateway.Status{}, err
	}
	page := a.field(func(a *v1Answer) string { return a.PaymentURL })
	if code/100 != 2 || page == "" {
		if code/100 == 2 && a.field(func(a *v1Answer) string { return a.PaymentToken }) != "" {
			// Created, but no page to send the customer to: the check tells.
			return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "CinetPay created the payment without a payment_url"}
		}
		return gateway.Status{Outcome: gateway.Failed, Reason: fmt.Sprintf("%d %s", code, a.words())}, nil
	}
	return gateway.Status{Outcome: gateway.Pending, RedirectURL: page}, nil
}

// The API v1's payment statuses and their codes (the cinetpay-seamless
// README's table and src/checkout.ts).
var (
	v1Succeeded = map[string]bool{"SUCCESS": true, "100": true}
	v1Waiting   = map[string]bool{"INITIATED": true, "PENDING": true, "2001": true, "2002": true}
	// EXPIRED (2003) is final: the payment was not made and can no longer be.
	v1Failed = map[string]bool{"FAILED": true, "INSUFFICIENT_BALANCE": true, "EXPIRED": true, "2003": true, "2005": true, "2010": true}
)

// CollectionStatus implements gateway.Connector: GET
// /v1/payment/{merchant_transaction_id}. The status decides, else the
// code; an HTTP 404 is not found; anything else concludes nothing.
func (c *V1Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	code, a, err := c.send(ctx, http.MethodGet, "/v1/payment/"+url.PathEscape(ref.Reference), nil)
	if err != nil {
		return gateway.Status{}, err
	}
	status := strings.ToUpper(a.field(func(a *v1Answer) string { return a.Status }))
	id := a.field(func(a *v1Answer) string { return a.TransactionID })
	for _, k := range []string{status, string(a.Code)} {
		switch {
		case k == "":
		case v1Succeeded[k]:
			return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}, nil
		case v1Failed[k]:
			return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: a.words()}, nil
		case v1Waiting[k]:
			return gateway.Status{Outcome: gateway.Pending, ProviderRef: id}, nil
		}
	}
	if code == http.StatusNotFound {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("CinetPay answered %d %s", code, a.words())}
}

// CallbackReference implements gateway.Connector. The v1 notification's
// body is not documented: our reference comes back in the query of the
// notify_url given (cauri_ref), which the service passes under
// gateway.CallbackQueryHeader; without it, a merchant_transaction_id in a
// JSON or form body is taken. It is only a signal: CollectionStatus
// confirms it.
func (c *V1Client) CallbackReference(h http.Header, body []byte) (string, error) {
	if q, err := url.ParseQuery(h.Get(gateway.CallbackQueryHeader)); err == nil {
		if ref := strings.TrimSpace(q.Get(v1RefParam)); ref != "" {
			return ref, nil
		}
	}
	var a v1Answer
	if json.Unmarshal(body, &a) == nil {
		if ref := strings.TrimSpace(a.field(func(a *v1Answer) string { return a.MerchantTransactionID })); ref != "" {
			return ref, nil
		}
	}
	if form, err := url.ParseQuery(string(body)); err == nil {
		if ref := strings.TrimSpace(form.Get("merchant_transaction_id")); ref != "" {
			return ref, nil
		}
	}
	return "", errors.New("CinetPay notification without our reference")
}

// send makes one call with the account's token (logging in when there is
// none, and again once when CinetPay answers 401), returning the HTTP
// status and the decoded answer.
func (c *V1Client) send(ctx context.Context, method, path string, in any) (int, v1Answer, error) {
	if c.APIKey == "" || c.APIPassword == "" {
		return 0, v1Answer{}, &gateway.Error{NotSent: true, Message: "CinetPay's API v1 needs the credentials api_key and api_password"}
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	var a v1Answer
	code, raw, err := c.tokens.Call(ctx, "", now(), gateway.TokenCall{
		Name:  "CinetPay",
		Fetch: c.login,
		Send: func(ctx context.Context, token string) (int, []byte, error) {
			return gateway.Send(ctx, c.HTTP, "CinetPay", method, gateway.URL(c.BaseURL, path), http.Header{"Authorization": {"Bearer " + token}}, in)
		},
		Refused: func(code int, _ []byte) bool { return code == http.StatusUnauthorized },
		Words:   func(raw []byte) string { var a v1Answer; json.Unmarshal(raw, &a); return a.words() },
		Refusal: func(code int, raw []byte) string {
			var a v1Answer
			json.Unmarshal(raw, &a)
			return fmt.Sprintf("%d %s", code, a.words())
		},
	})
	if err != nil {
		return code, a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil && code != http.StatusNotFound {
		return code, a, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("CinetPay answered %d with unreadable JSON", code)}
	}
	return code, a, nil
}

// login asks for a token: POST /v1/oauth/login answers code 200 and an
// access_token.
func (c *V1Client) login(ctx context.Context) (string, int64, error) {
	code, raw, err := gateway.Send(ctx, c.HTTP, "CinetPay", http.MethodPost, gateway.URL(c.BaseURL, "/v1/oauth/login"), nil,
		v1Login{APIKey: c.APIKey, APIPassword: c.APIPassword})
	if err != nil {
		return "", 0, err
	}
	var a v1Answer
	if json.Unmarshal(raw, &a) != nil {
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("CinetPay's login answered %d with unreadable JSON", code)}
	}
	token := a.field(func(a *v1Answer) string { return a.AccessToken })
	if token == "" || code/100 != 2 {
		if code/100 == 4 {
			return "", 0, &gateway.Error{Message: fmt.Sprintf("CinetPay refused the gateway's api_key and api_password (%d %s)", code, a.words())}
		}
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("CinetPay gave no token: %d %s", code, a.words())}
	}
	life, err := strconv.ParseInt(a.field(func(a *v1Answer) string { return string(a.ExpiresIn) }), 10, 64)
	if err != nil || life <= 0 {
		life = v1TokenLife
	}
	return token, life, nil
}
