// Package flutterwave is the connector to Flutterwave v3 mobile money
// charges in the countries where the customer confirms a push on the phone
// (Uganda, Rwanda, Zambia, Tanzania, Kenya's M-Pesa), to its v3 transfers
// to mobile money wallets (payouts: Uganda, Rwanda, Zambia, Tanzania), and
// a simulator of that part of its API. Facts from developer.flutterwave.com
// (direct charge guides, verify by reference, webhooks; transfers: create a
// transfer, get a transfer, get all transfers, mobile money transfers).
//
// It imports the domain and the gateway package.
package flutterwave

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Client is a Flutterwave account.
type Client struct {
	BaseURL    string // https://api.flutterwave.com/v3, or a simulator's
	SecretKey  string // FLWSECK_TEST-... or FLWSECK-...
	SecretHash string // the dashboard's webhook "secret hash"
	HTTP       *http.Client
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
)

// chargeTypes is Flutterwave's charge type per country.
var chargeTypes = map[string]string{
	"UG": "mobile_money_uganda", "RW": "mobile_money_rwanda", "ZM": "mobile_money_zambia",
	"TZ": "mobile_money_tanzania", "KE": "mpesa",
}

type chargeRequest struct {
	TxRef       string      `json:"tx_ref"`
	Amount      json.Number `json:"amount"` // major units
	Currency    string      `json:"currency"`
	Email       string      `json:"email"`
	PhoneNumber string      `json:"phone_number"`
	Network     string      `json:"network,omitempty"`
}

type answer struct {
	Status  string `json:"status"` // success | error
	Message string `json:"message"`
	Data    *struct {
		ID            int64  `json:"id"`
		TxRef         string `json:"tx_ref"`
		Status        string `json:"status"` // pending | successful | failed
		ProcessorResp string `json:"processor_response"`
	} `json:"data"`
}

func encodeCharge(c gateway.Collection) chargeRequest {
	email := c.Email
	if email == "" {
		email = "customer-" + c.Reference + "@cauri.invalid" // required; .invalid never receives mail
	}
	r := chargeRequest{TxRef: c.Reference, Amount: json.Number(cauri.FormatAmount(c.Amount, c.Currency)), Currency: string(c.Currency),
		Email: email, PhoneNumber: strings.TrimPrefix(c.Phone, "+")}
	if c.Operator != "MPESA" {
		r.Network = c.Operator
	}
	return r
}

// Collect implements gateway.Connector.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	typ := chargeTypes[col.Country]
	if typ == "" {
		return gateway.Status{}, &gateway.Error{Message: "Flutterwave charges in " + col.Country + " are not connected"}
	}
	var a answer
	code, err := c.call(ctx, http.MethodPost, "/charges?type="+typ, encodeCharge(col), &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if code >= 400 || a.Status != "success" {
		return gateway.Status{Outcome: gateway.Failed, Reason: a.Message}, nil
	}
	return status(a), nil
}

func status(a answer) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending}
	if a.Data == nil {
		return st
	}
	if a.Data.ID != 0 {
		st.ProviderRef = fmt.Sprint(a.Data.ID)
	}
	switch a.Data.Status {
	case "successful":
		st.Outcome = gateway.Succeeded
	case "failed":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSpace("failed: "+a.Data.ProcessorResp)
	}
	return st
}

// CollectionStatus implements gateway.Connector (verify by reference).
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	reference := ref.Reference
	var a answer
	code, err := c.call(ctx, http.MethodGet, "/transactions/verify_by_reference?tx_ref="+url.QueryEscape(reference), nil, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if code == http.StatusBadRequest || code == http.StatusNotFound || a.Status != "success" {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	return status(a), nil
}

// CallbackReference implements gateway.Connector: the webhook's verif-hash
// header must equal the account's secret hash. A charge's webhook names it
// by data.tx_ref, a transfer's (transfer.completed) by data.reference, or
// by transfer.reference in the older "event.type": "Transfer" shape.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	got := h.Get("Verif-Hash")
	if c.SecretHash == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.SecretHash)) != 1 {
		return "", errors.New("Flutterwave webhook with a missing or wrong verif-hash")
	}
	var ev struct {
		Data struct {
			TxRef     string `json:"tx_ref"`
			Reference string `json:"reference"`
		} `json:"data"`
		Transfer struct {
			Reference string `json:"reference"`
		} `json:"transfer"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return "", errors.New("Flutterwave webhook that is not JSON")
	}
	for _, ref := range []string{ev.Data.TxRef, ev.Data.Reference, ev.Transfer.Reference} {
		if ref != "" {
			return ref, nil
		}
	}
	return "", errors.New("Flutterwave webhook without a tx_ref or a transfer reference")
}

// transferBanks is Flutterwave's account_bank (the mobile money network)
// of a transfer, per country and operator code (providers.json). MPS is
// Flutterwave's own mobile money route, documented for Zambia and Rwanda.
// Kenya's M-Pesa transfers need the sender's name, country and number in
// meta, which a Payout does not carry: they are not connected.
var transferBanks = map[string]map[string]string{
	"UG": {"MTN": "MTN", "AIRTEL": "AIRTEL"},
	"RW": {"MTN": "MTN", "AIRTEL": "MPS"},
	"ZM": {"MTN": "MPS"},
	"TZ": {"VODACOM": "VODACOM", "AIRTEL": "AIRTEL", "TIGO": "TIGO", "HALOPESA": "HALOPESA"},
}

// transferRequest is POST /transfers to a mobile money wallet.
type transferRequest struct {
	AccountBank     string      `json:"account_bank"`
	AccountNumber   string      `json:"account_number"` // the wallet's number with its country code
	Amount          json.Number `json:"amount"`         // major units
	Currency        string      `json:"currency"`
	Narration       string      `json:"narration,omitempty"`
	Reference       string      `json:"reference"`
	BeneficiaryName string      `json:"beneficiary_name"`
	CallbackURL     string      `json:"callback_url,omitempty"`
}

// transfer is a transfer as Flutterwave shows it (create, get, list).
type transfer struct {
	ID              int64  `json:"id"`
	Reference       string `json:"reference"`
	Status          string `json:"status"` // NEW, PENDING, SUCCESSFUL, FAILED
	CompleteMessage string `json:"complete_message"`
}

type transferAnswer struct {
	Status  string    `json:"status"` // success | error
	Message string    `json:"message"`
	Data    *transfer `json:"data"`
}

func encodeTransfer(p gateway.Payout) (transferRequest, error) {
	bank := transferBanks[p.Country][p.Operator]
	if bank == "" {
		return transferRequest{}, &gateway.Error{Message: "Flutterwave transfers to " + p.Operator + " in " + p.Country + " are not connected"}
	}
	return transferRequest{AccountBank: bank, AccountNumber: strings.TrimPrefix(p.Phone, "+"),
		Amount: json.Number(cauri.FormatAmount(p.Amount, p.Currency)), Currency: string(p.Currency), Narration: p.Description,
		Reference: p.Reference, BeneficiaryName: p.RecipientName, CallbackURL: p.NotifyURL}, nil
}

// Payout implements gateway.Payer. Flutterwave is asked by our reference,
// so Payout.Created is not used; the transfer's id comes back as the
// Status's ProviderRef.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	req, err := encodeTransfer(p)
	if err != nil {
		return gateway.Status{}, err
	}
	var a transferAnswer
	code, err := c.call(ctx, http.MethodPost, "/transfers", req, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if code < 400 && a.Status == "success" {
		if a.Data == nil {
			return gateway.Status{Outcome: gateway.Pending}, nil
		}
		return transferStatus(*a.Data), nil
	}
	if strings.Contains(strings.ToLower(a.Message), "already exists") {
		// "Payout with this ref already exists": this reference was sent
		// before, and that transfer's state is the answer.
		st, err := c.transferByReference(ctx, p.Reference)
		if err == nil && st.Outcome == gateway.NotFound {
			return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "Flutterwave has a transfer with this reference but does not list it"}
		}
		return st, err
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: a.Message, LowBalance: lowBalance(a.Message)}, nil
}

// IdempotentPayout: Flutterwave refuses a reference it has seen ("Payout
// with this ref already exists"), and Payout then answers with that
// transfer; but its documentation does not promise the refusal, so a
// payout whose answer was lost is checked before being sent again.
func (c *Client) IdempotentPayout() bool { return false }

// PayoutStatus implements gateway.Payer: GET /transfers/{id} when the
// transfer's id is known (and names our reference), else the transfers
// listed with our reference.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if ref.ProviderRef != "" {
		var a transferAnswer
		code, err := c.call(ctx, http.MethodGet, "/transfers/"+url.PathEscape(ref.ProviderRef), nil, &a)
		if err != nil {
			return gateway.Status{}, err
		}
		if code < 400 && a.Status == "success" && a.Data != nil && a.Data.Reference == ref.Reference {
			return transferStatus(*a.Data), nil
		}
	}
	return c.transferByReference(ctx, ref.Reference)
}

// transferByReference reads GET /transfers?reference=: NotFound when no
// transfer listed has our reference.
func (c *Client) transferByReference(ctx context.Context, reference string) (gateway.Status, error) {
	var a struct {
		Status  string     `json:"status"`
		Message string     `json:"message"`
		Data    []transfer `json:"data"`
	}
	code, err := c.call(ctx, http.MethodGet, "/transfers?reference="+url.QueryEscape(reference), nil, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if code >= 400 || a.Status != "success" {
		return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Flutterwave did not list its transfers (%d): %s", code, a.Message)}
	}
	for _, t := range a.Data {
		if t.Reference == reference {
			return transferStatus(t), nil
		}
	}
	return gateway.Status{Outcome: gateway.NotFound}, nil
}

func transferStatus(t transfer) gateway.Status {
	st := gateway.Status{Outcome: gateway.Pending}
	if t.ID != 0 {
		st.ProviderRef = fmt.Sprint(t.ID)
	}
	switch strings.ToUpper(t.Status) {
	case "SUCCESSFUL":
		st.Outcome = gateway.Succeeded
	case "FAILED":
		st.Outcome, st.Reason, st.LowBalance = gateway.Failed, t.CompleteMessage, lowBalance(t.CompleteMessage)
		if st.Reason == "" {
			st.Reason = "failed"
		}
	}
	return st
}

// lowBalance reports Flutterwave's words for a transfer the merchant's
// balance could not fund ("DISBURSE FAILED: Insufficient funds in customer
// wallet").
func lowBalance(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "insufficient") && (strings.Contains(m, "fund") || strings.Contains(m, "balance"))
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	return gateway.Call(ctx, c.HTTP, "Flutterwave", method, gateway.URL(c.BaseURL, path),
		http.Header{"Authorization": {"Bearer " + c.SecretKey}}, in, out)
}
