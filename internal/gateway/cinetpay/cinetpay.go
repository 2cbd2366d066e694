// Package cinetpay is the connector to CinetPay's checkout API v2 (a
// payment link to CinetPay's own page, its status check, and the signed
// notification) and to its transfer API v1 (payouts to Mobile Money:
// token login, contacts, sending, its check and notification), and a
// simulator of those parts of its API. Facts from docs.cinetpay.com
// (api/1.0-en/checkout: initialisation, tableau of codes, verification,
// notification, hmac; api/1.0-en/transfert: utilisation, etapes,
// notification, statuts, annexe) and CinetPay's own material, cited per
// fixture in testdata/SOURCES.md.
//
// CinetPay collects on its own page (the "guichet"): a payment started
// here answers the page's address, where the customer confirms (Mobile
// Money, with the number locked to the one given) or pays by card.
// Payouts (payout.go) go to another host with another credential, the
// transfer password; a transfer names its operator (payment_method) only
// for Wave, the number deciding the others.
//
// Accounts on CinetPay's newer API v1 (api.cinetpay.co, an api_key and
// api_password instead of apikey, site_id and secret key) collect through
// V1Client (v1.go, NewV1) and its simulator V1Simulator; their payouts
// are not connected.
//
// What CinetPay cannot take is refused before anything is sent (a
// gateway.Error with NotSent, so the service may try another gateway):
// a currency other than XOF, XAF, CDF, GNF and USD, an amount that is not
// a whole multiple of 5 in major units, less than 100 XOF or XAF
// (codes.go); and a card payment without the card holder's details
// CinetPay needs to offer a card (customer_name, customer_surname,
// customer_email, customer_phone_number, customer_address, customer_city,
// customer_country, customer_state, customer_zip_code): the hosted page
// asks the card holder for them (Provider.CardBilling; the country is the
// phone number's), and a collection without them is refused rather than
// sent with an address made up.
//
// A check is read by the payment's status when CinetPay gives one
// (ACCEPTED, REFUSED, WAITING_FOR_CUSTOMER), else by the code of
// CinetPay's table; every code of the table has an outcome (codes.go).
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

	"github.com/nyaruka/phonenumbers"

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
	transferToken string     // the last transfer token
	tokenAt       time.Time  // when it was asked for
	login         sync.Mutex // held while logging in: concurrent calls share one login
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
	CustomerName    string      `json:"customer_name,omitempty"`    // the family name
	CustomerSurname string      `json:"customer_surname,omitempty"` // the first name(s)
	CustomerEmail   string      `json:"customer_email,omitempty"`
	CustomerPhone   string      `json:"customer_phone_number,omitempty"`
	LockPhoneNumber bool        `json:"lock_phone_number,omitempty"`
	// The card holder's address: with the fields above, what CinetPay
	// needs to offer a card (checkout/initialisation).
	CustomerAddress string `json:"customer_address,omitempty"`
	CustomerCity    string `json:"customer_city,omitempty"`
	CustomerCountry string `json:"customer_country,omitempty"` // ISO 3166-1 alpha-2
	CustomerState   string `json:"customer_state,omitempty"`
	CustomerZipCode string `json:"customer_zip_code,omitempty"`
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
	Status        string `json:"status"` // ACCEPTED, REFUSED, or a waiting state (WAITING_FOR_CUSTOMER)
	PaymentMethod string `json:"payment_method"`
	OperatorID    string `json:"operator_id"`
}

// descriptionOK drops the characters CinetPay asks not to send (#/$_&).
var descriptionOK = strings.NewReplacer("#", " ", "/", " ", "$", " ", "_", " ", "&", " ")

// splitName splits a customer's name as CinetPay's fields want it: the
// last word is the family name (customer_name), the others the first
// names (customer_surname), as in CinetPay's own example ("Dje Bi",
// "Jean-Marc"). One word is the family name alone.
func splitName(name string) (family, first string) {
	words := strings.Fields(name)
	if len(words) == 0 {
		return "", ""
	}
	return words[len(words)-1], strings.Join(words[:len(words)-1], " ")
}

func encodePayment(c *Client, col gateway.Collection, amount string) paymentRequest {
	desc := strings.TrimSpace(descriptionOK.Replace(col.Description))
	if desc == "" {
		desc = "Payment " + col.Reference
	}
	family, first := splitName(col.Name)
	r := paymentRequest{APIKey: c.APIKey, SiteID: c.SiteID, TransactionID: col.Reference,
		Amount: json.Number(amount), Currency: string(col.Currency), Description: desc,
		NotifyURL: col.NotifyURL, ReturnURL: col.ReturnURL, Channels: "MOBILE_MONEY", Metadata: col.Reference,
		CustomerName: family, CustomerSurname: first, CustomerEmail: strings.TrimSpace(col.Email)}
	if col.Card {
		r.Channels, r.CustomerPhone = "CREDIT_CARD", col.Phone
		r.CustomerCountry = phoneCountry(col.Phone, col.Country)
		b := col.Billing
		r.CustomerAddress, r.CustomerCity = strings.TrimSpace(b.Address), strings.TrimSpace(b.City)
		r.CustomerState, r.CustomerZipCode = strings.TrimSpace(b.State), strings.TrimSpace(b.ZipCode)
	} else {
		r.CustomerPhone, r.LockPhoneNumber = col.Phone, true
	}
	return r
}

// phoneCountry is the ISO country of the customer: the collection's, else
// the phone number's region.
func phoneCountry(phone, country string) string {
	if country != "" {
		return strings.ToUpper(country)
	}
	if n, err := phonenumbers.Parse(phone, ""); err == nil {
		return phonenumbers.GetRegionCodeForNumber(n)
	}
	return ""
}

// cardFields lists the card holder's details CinetPay needs for a card
// payment (checkout/initialisation: "to display the credit card payment
// option") that r lacks: a card payment without them is refused here,
// before anything is sent, rather than sent with details made up.
func cardFields(r paymentRequest) []string {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"customer_name", r.CustomerName}, {"customer_surname", r.CustomerSurname}, {"customer_email", r.CustomerEmail},
		{"customer_phone_number", r.CustomerPhone}, {"customer_address", r.CustomerAddress}, {"customer_city", r.CustomerCity},
		{"customer_country", r.CustomerCountry}, {"customer_state", r.CustomerState}, {"customer_zip_code", r.CustomerZipCode},
	} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	return missing
}

// Collect implements gateway.Connector: it asks for a payment link; the
// payment waits on CinetPay's page (Status.RedirectURL). An amount or a
// card payment CinetPay cannot take is refused before anything is sent
// (gateway.Error with NotSent), so that another gateway may take it.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	amount, err := checkAmount(col.Amount, col.Currency)
	if err != nil {
		return gateway.Status{}, err
	}
	req := encodePayment(c, col, amount)
	if col.Card {
		if missing := cardFields(req); len(missing) > 0 {
			return gateway.Status{}, &gateway.Error{NotSent: true, Message: "CinetPay card payments need the card holder's " +
				strings.Join(missing, ", ") + ", which the payment does not have"}
		}
	}
	var a answer
	if _, err := c.call(ctx, "/v2/payment", req, &a); err != nil {
		return gateway.Status{}, err
	}
	if lastingCodes[a.Code] {
		return gateway.Status{}, &gateway.Error{Message: "CinetPay refused the gateway's account (" + words(a) + ")"}
	}
	var d linkData
	if a.Code != "201" || json.Unmarshal(a.Data, &d) != nil || d.PaymentURL == "" {
		return gateway.Status{Outcome: gateway.Failed, Reason: words(a)}, nil
	}
	return gateway.Status{Outcome: gateway.Pending, RedirectURL: d.PaymentURL}, nil
}

// CollectionStatus implements gateway.Connector: the payment's status
// (data.status) decides when CinetPay gives one, else the answer's code
// (codes.go). A code it does not know is an error (no conclusion), never a
// failure: the next check will tell.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, "/v2/payment/check", checkRequest{APIKey: c.APIKey, SiteID: c.SiteID, TransactionID: ref.Reference}, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	var d checkData
	json.Unmarshal(a.Data, &d) // data is absent, [] or not an object on some answers: no status then
	return checkOutcome(code, a, d)
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
