// Package paystack is the connector to Paystack's mobile money charges
// (POST /charge, GET /transaction/verify/{reference}, signed webhooks) and
// a simulator of that part of its API. Facts from paystack.com/docs and
// Paystack's own code samples (PaystackOSS/doc-code-snippets).
//
// It imports the domain and the gateway package.
package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a Paystack account.
type Client struct {
	BaseURL   string // https://api.paystack.co, or a simulator's
	SecretKey string // sk_test_... or sk_live_...: the bearer, and the webhooks' signing key
	HTTP      *http.Client
}

var _ gateway.Connector = (*Client)(nil)

type chargeRequest struct {
	Amount      int64       `json:"amount"` // subunits: our minor units as they are
	Email       string      `json:"email"`
	Currency    string      `json:"currency"`
	Reference   string      `json:"reference"`
	MobileMoney mobileMoney `json:"mobile_money"`
}

type mobileMoney struct {
	Phone    string `json:"phone"`
	Provider string `json:"provider"`
}

// answer is Paystack's envelope.
type answer struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
	Data    struct {
		Reference       string `json:"reference"`
		Status          string `json:"status"`
		DisplayText     string `json:"display_text"`
		GatewayResponse string `json:"gateway_response"`
		ID              int64  `json:"id"`
	} `json:"data"`
}

// NoEmail is the address sent when a session has no customer e-mail:
// Paystack requires one, and .invalid (RFC 6761) can never receive mail.
func NoEmail(reference string) string { return "customer-" + reference + "@cauri.invalid" }

func encodeCharge(c gateway.Collection) chargeRequest {
	email := c.Email
	if email == "" {
		email = NoEmail(c.Reference)
	}
	return chargeRequest{Amount: c.Amount, Email: email, Currency: string(c.Currency), Reference: c.Reference,
		MobileMoney: mobileMoney{Phone: strings.TrimPrefix(c.Phone, "+"), Provider: c.Operator}}
}

// Collect implements gateway.Connector.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, http.MethodPost, "/charge", encodeCharge(col), &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if !a.Status || code == http.StatusBadRequest {
		return gateway.Status{Outcome: gateway.Failed, Reason: a.Message}, nil
	}
	return chargeStatus(a), nil
}

func chargeStatus(a answer) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending}
	if a.Data.ID != 0 {
		st.ProviderRef = fmt.Sprint(a.Data.ID)
	}
	switch a.Data.Status {
	case "success":
		st.Outcome = gateway.Succeeded
	case "failed", "abandoned", "reversed":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSpace(a.Data.Status+": "+a.Data.GatewayResponse)
	}
	return st
}

// CollectionStatus implements gateway.Connector.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	reference := ref.Reference
	var a answer
	code, err := c.call(ctx, http.MethodGet, "/transaction/verify/"+url.PathEscape(reference), nil, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if code == http.StatusBadRequest || code == http.StatusNotFound || !a.Status {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	return chargeStatus(a), nil
}

// CallbackReference implements gateway.Connector: it checks the webhook's
// x-paystack-signature (hex HMAC-SHA512 of the raw body under the secret
// key) before reading the reference.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	mac := hmac.New(sha512.New, []byte(c.SecretKey))
	mac.Write(body)
	got, err := hex.DecodeString(h.Get("X-Paystack-Signature"))
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return "", errors.New("Paystack webhook with a missing or wrong signature")
	}
	var ev struct {
		Data struct {
			Reference string `json:"reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Data.Reference == "" {
		return "", errors.New("Paystack webhook without a reference")
	}
	return ev.Data.Reference, nil
}

// call sends one request to Paystack with the gateway's secret key.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	return gateway.Call(ctx, c.HTTP, "Paystack", method, gateway.URL(c.BaseURL, path),
		http.Header{"Authorization": {"Bearer " + c.SecretKey}}, in, out)
}
