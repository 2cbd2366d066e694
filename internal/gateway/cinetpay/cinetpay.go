// Package cinetpay is the connector to CinetPay's checkout API v2 (a
// payment link to CinetPay's own page, its status check, and the signed
// notification) and to its transfer API v1 (payouts to Mobile Money:
// token login, contacts, sending, its check and notification), and a
// simulator of those parts of its API. Facts from docs.cinetpay.com
// (api/1.0-en/checkout: initialisation, tableau of codes, hmac;
// api/1.0-en/transfert: utilisation, etapes, notification, statuts,
// annexe) and CinetPay's own SDKs.
//
// CinetPay collects on its own page (the "guichet"): a payment started
// here answers the page's address, where the customer confirms (Mobile
// Money, with the number locked to the one given) or pays by card.
// Payouts (payout.go) go to another host with another credential, the
// transfer password.
//
// It imports the domain and the gateway package.
package cinetpay

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a CinetPay account (one "site").
type Client struct {
	BaseURL   string // https://api-checkout.cinetpay.com, or a simulator's
	APIKey    string
	SiteID    string
	SecretKey string // signs the notifications (x-token); not the apikey
	HTTP      *http.Client

	// TransferBaseURL is the transfer API's address: TransferURL when
	// empty, or a simulator's (its /v1).
	TransferBaseURL string
	// TransferPassword is the transfer API's password, set in CinetPay's
	// back office; payouts need it.
	TransferPassword string
	// Now is the clock of the transfer token's age (time.Now when nil).
	Now func() time.Time

	mu            sync.Mutex
	transferToken string    // the last transfer token
	tokenAt       time.Time // when it was asked for
}

var _ gateway.Connector = (*Client)(nil)

type paymentRequest struct {
	APIKey          string      `json:"apikey"`
	SiteID          string      `json:"site_id"`
	TransactionID   string      `json:"transaction_id"`
	Amount          json.Number `json:"amount"` // major units, an integer
	Currency        string      `json:"currency"`
	Description     string      `json:"description"`
	NotifyURL       string      `json:"notify_url"`
	ReturnURL       string      `json:"return_url"`
	Channels        string      `json:"channels"` // MOBILE_MONEY or CREDIT_CARD
	Metadata        string      `json:"metadata,omitempty"`
	CustomerName    string      `json:"customer_name,omitempty"`
	CustomerEmail   string      `json:"customer_email,omitempty"`
	CustomerPhone   string      `json:"customer_phone_number,omitempty"`
	LockPhoneNumber bool        `json:"lock_phone_number,omitempty"`
}

type checkRequest struct {
	APIKey        string `json:"apikey"`
	SiteID        string `json:"site_id"`
	TransactionID string `json:"transaction_id"`
}

// answer is CinetPay's envelope; data's shape depends on the call.
type answer struct {
	Code        string          `json:"code"`
	Message     string          `json:"message"`
	Description string          `json:"description"`
	Data        json.RawMessage `json:"data"`
}

type linkData struct {
	PaymentToken string `json:"payment_token"`
	PaymentURL   string `json:"payment_url"`
}

type checkData struct {
	Status        string `json:"status"` // ACCEPTED, REFUSED, or a waiting state
	PaymentMethod string `json:"payment_method"`
	OperatorID    string `json:"operator_id"`
}

// descriptionOK drops the characters CinetPay asks not to send (#/$_&).
var descriptionOK = strings.NewReplacer("#", " ", "/", " ", "$", " ", "_", " ", "&", " ")

func encodePayment(c *Client, col gateway.Collection) paymentRequest {
	desc := strings.TrimSpace(descriptionOK.Replace(col.Description))
	if desc == "" {
		desc = "Payment " + col.Reference
	}
	r := paymentRequest{APIKey: c.APIKey, SiteID: c.SiteID, TransactionID: col.Reference,
		Amount: json.Number(cauri.FormatAmount(col.Amount, col.Currency)), Currency: string(col.Currency), Description: desc,
		NotifyURL: col.NotifyURL, ReturnURL: col.ReturnURL, Channels: "MOBILE_MONEY", Metadata: col.Reference,
		CustomerName: col.Name, CustomerEmail: col.Email}
	if col.Card {
		r.Channels = "CREDIT_CARD"
	} else {
		r.CustomerPhone, r.LockPhoneNumber = col.Phone, true
	}
	return r
}

// Collect implements gateway.Connector: it asks for a payment link; the
// payment waits on CinetPay's page (Status.RedirectURL).
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	var a answer
	if _, err := c.call(ctx, "/v2/payment", encodePayment(c, col), &a); err != nil {
		return gateway.Status{}, err
	}
	if a.Code == "609" {
		return gateway.Status{}, &gateway.Error{Message: "CinetPay refused the gateway's credentials (609 AUTH_NOT_FOUND)"}
	}
	var d linkData
	if a.Code != "201" || json.Unmarshal(a.Data, &d) != nil || d.PaymentURL == "" {
		return gateway.Status{Outcome: gateway.Failed, Reason: words(a)}, nil
	}
	return gateway.Status{Outcome: gateway.Pending, RedirectURL: d.PaymentURL}, nil
}

// Answer codes of a status check (docs.cinetpay.com, checkout/tableau).
var (
	waiting = map[string]bool{"201": true, "623": true, "662": true, "663": true}
	failed  = map[string]bool{"600": true, "602": true, "604": true, "606": true, "625": true, "627": true,
		"635": true, "636": true, "637": true, "641": true, "642": true, "804": true}
)

// CollectionStatus implements gateway.Connector. A code it does not know is
// an error (no conclusion), never a failure: the next check will tell.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, "/v2/payment/check", checkRequest{APIKey: c.APIKey, SiteID: c.SiteID, TransactionID: ref.Reference}, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	var d checkData
	json.Unmarshal(a.Data, &d) // data is absent or not an object on some answers
	switch {
	case a.Code == "00" && d.Status == "ACCEPTED":
		return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: d.OperatorID}, nil
	case failed[a.Code] || d.Status == "REFUSED":
		return gateway.Status{Outcome: gateway.Failed, Reason: words(a)}, nil
	case waiting[a.Code]:
		return gateway.Status{Outcome: gateway.Pending}, nil
	case code == http.StatusNotFound || strings.Contains(a.Message, "NOT_FOUND"):
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	return gateway.Status{}, &gateway.Error{Message: "CinetPay answered an unknown code " + a.Code + " " + a.Message}
}

func words(a answer) string {
	return strings.TrimSpace(a.Code + " " + a.Message + ": " + a.Description)
}

// notificationFields are signed in this order (docs.cinetpay.com, checkout/hmac).
var notificationFields = []string{"cpm_site_id", "cpm_trans_id", "cpm_trans_date", "cpm_amount", "cpm_currency", "signature",
	"payment_method", "cel_phone_num", "cpm_phone_prefixe", "cpm_language", "cpm_version", "cpm_payment_config",
	"cpm_page_action", "cpm_custom", "cpm_designation", "cpm_error_message"}

// Sign is a notification's x-token: hex HMAC-SHA256 under the secret key
// of its fields concatenated in the documented order.
func Sign(secret string, form url.Values) string {
	mac := hmac.New(sha256.New, []byte(secret))
	for _, f := range notificationFields {
		mac.Write([]byte(form.Get(f)))
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// CallbackReference implements gateway.Connector: a payment's
// notification is a form whose x-token must match; it names the payment
// in cpm_trans_id. A transfer's (transfert/notification) is a form with
// client_transaction_id and no cpm_ field; CinetPay does not sign it, so
// it is only a signal, which the service confirms with PayoutStatus.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "", errors.New("CinetPay notification is not a form")
	}
	if form.Has("client_transaction_id") && !form.Has("cpm_trans_id") && !form.Has("cpm_site_id") {
		if ref := form.Get("client_transaction_id"); ref != "" {
			return ref, nil
		}
		return "", errors.New("CinetPay transfer notification without client_transaction_id")
	}
	got, err := hex.DecodeString(h.Get("X-Token"))
	want, _ := hex.DecodeString(Sign(c.SecretKey, form))
	if err != nil || c.SecretKey == "" || !hmac.Equal(got, want) {
		return "", errors.New("CinetPay notification with a missing or wrong x-token")
	}
	if form.Get("cpm_site_id") != c.SiteID || form.Get("cpm_trans_id") == "" {
		return "", errors.New("CinetPay notification for another site or without cpm_trans_id")
	}
	return form.Get("cpm_trans_id"), nil
}

func (c *Client) call(ctx context.Context, path string, in, out any) (int, error) {
	return gateway.Call(ctx, c.HTTP, "CinetPay", http.MethodPost, gateway.URL(c.BaseURL, path), nil, in, out)
}
