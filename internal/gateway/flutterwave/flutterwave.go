// Package flutterwave is the connector to Flutterwave v3 mobile money
// charges (Uganda, Rwanda, Zambia and Ghana, where Flutterwave answers with
// its own authorization page the customer must go to; Tanzania, Kenya's
// M-Pesa and the francophone countries, where the customer confirms a push
// on the phone), to its v3 transfers to mobile money wallets (payouts:
// Uganda, Rwanda, Zambia, Tanzania), and a simulator of that part of its
// API. Facts from Flutterwave's SDKs (github.com/Flutterwave/Node-v3:
// services/, services/schema/create.js, documentation/;
// github.com/Flutterwave/PHP-v3: src/Service, src/EventHandlers, tests/)
// and developer.flutterwave.com (direct charge guides and references,
// verify by reference, webhooks, transfers); where they disagree, the
// Node SDK; testdata/SOURCES.md cites each.
//
// A charge is always read back by our tx_ref (verify by reference), so a
// charge answered with a redirect and no Flutterwave id is still followed.
// A transfer is never sent again unless Flutterwave's answer proves it did
// not receive it: without the transfer's id, "not found" is never
// concluded (see PayoutStatus).
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

// chargeTypes is Flutterwave's charge type per country (Node-v3
// services/mobile-money/*.js); francophone countries share
// mobile_money_franco with the country in the request (CM, SN, BF, CI:
// the francophone guide).
var chargeTypes = map[string]string{
	"UG": "mobile_money_uganda", "RW": "mobile_money_rwanda", "ZM": "mobile_money_zambia",
	"GH": "mobile_money_ghana", "TZ": "mobile_money_tanzania", "KE": "mpesa",
	"CM": "mobile_money_franco", "SN": "mobile_money_franco", "BF": "mobile_money_franco", "CI": "mobile_money_franco",
}

// The charge's network is the operator's code in providers.json, which is
// spelled as Node-v3 validates it (services/schema/create.js momoSchema:
// GHS MTN, AIRTELTIGO, VODAFONE; UGX and RWF MTN, AIRTEL; TZS HALOPESA,
// AIRTEL, TIGO, VODACOM; ZMW MTN, AIRTEL, ZAMTEL; XOF WAVE, MTN,
// ORANGEMONEY; XAF MTN, ORANGEMONEY), except Kenya's M-Pesa, which takes
// none.
var noNetwork = map[string]bool{"KE": true}

// orderIDCountries take an order_id: required for RWF by Node-v3's
// momoSchema, sent in its Zambia example. Our reference serves.
var orderIDCountries = map[string]bool{"RW": true, "ZM": true}

type chargeRequest struct {
	TxRef       string      `json:"tx_ref"`
	Amount      json.Number `json:"amount"` // major units
	Currency    string      `json:"currency"`
	Email       string      `json:"email"`
	PhoneNumber string      `json:"phone_number"`
	Network     string      `json:"network,omitempty"`
	Country     string      `json:"country,omitempty"`  // francophone charges only
	OrderID     string      `json:"order_id,omitempty"` // Rwanda, Zambia
	Fullname    string      `json:"fullname,omitempty"`
	RedirectURL string      `json:"redirect_url,omitempty"`
}

// charge is a charge as Flutterwave shows it (charge answer, verify).
type charge struct {
	ID            int64  `json:"id"`
	TxRef         string `json:"tx_ref"`
	Status        string `json:"status"`
	ProcessorResp string `json:"processor_response"`
}

// answer is a charge's or a verification's answer: data may be absent
// (a charge that needs the customer on Flutterwave's page answers only
// meta.authorization).
type answer struct {
	Status  string  `json:"status"` // success | error
	Message string  `json:"message"`
	Data    *charge `json:"data"`
	Meta    struct {
		Authorization struct {
			Mode     string `json:"mode"`     // redirect | callback | ...
			Redirect string `json:"redirect"` // the page, for mode redirect
		} `json:"authorization"`
	} `json:"meta"`
}

func encodeCharge(c gateway.Collection) chargeRequest {
	email := c.Email
	if email == "" {
		email = "customer-" + c.Reference + "@cauri.invalid" // required; .invalid never receives mail
	}
	r := chargeRequest{TxRef: c.Reference, Amount: json.Number(cauri.FormatAmount(c.Amount, c.Currency)), Currency: string(c.Currency),
		Email: email, PhoneNumber: strings.TrimPrefix(c.Phone, "+"), Network: c.Operator, Fullname: clip(strings.TrimSpace(c.Name), 100),
		RedirectURL: c.ReturnURL}
	if noNetwork[c.Country] {
		r.Network = ""
	}
	if chargeTypes[c.Country] == "mobile_money_franco" {
		r.Country = c.Country
	}
	if orderIDCountries[c.Country] {
		r.OrderID = c.Reference
	}
	return r
}

// clip cuts s to at most n runes: Node-v3's schemas cap fullname,
// narration and callback_url at 100.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Collect implements gateway.Connector. Where Flutterwave answers with its
// authorization page (meta.authorization.mode "redirect", in Uganda,
// Rwanda, Zambia and Ghana), the charge is pending and the customer must
// go to that page: the Status carries it as RedirectURL. Mode "callback"
// (francophone) or none (Tanzania, M-Pesa) is a push on the phone.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	typ := chargeTypes[col.Country]
	if typ == "" {
		return gateway.Status{}, &gateway.Error{NotSent: true, Message: "Flutterwave charges in " + col.Country + " are not connected"}
	}
	var a answer
	code, err := c.call(ctx, http.MethodPost, "/charges?type="+typ, encodeCharge(col), &a)
	if err != nil {
		return gateway.Status{}, err
	}
	if code >= 400 || a.Status != "success" {
		return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, a.Message)}, nil
	}
	st := gateway.Status{Outcome: gateway.Pending}
	if a.Data != nil {
		s, known := chargeStatus(*a.Data)
		if known {
			st = s
		} else if a.Data.ID != 0 {
			st.ProviderRef = fmt.Sprint(a.Data.ID)
		}
	}
	switch auth := a.Meta.Authorization; auth.Mode {
	case "", "callback": // a push confirmed on the phone, then the webhook
	case "redirect":
		if auth.Redirect == "" {
			return gateway.Status{}, &gateway.Error{Transient: true, Answered: true,
				Message: "Flutterwave asked for a redirect without its address"}
		}
		st.RedirectURL = auth.Redirect
	default:
		// pin, otp, ussd, avs_noauth... (PHP-v3 src/Util/AuthMode.php): a
		// step this connector does not take. The charge exists; its status
		// decides, so this is no refusal.
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true,
			Message: "Flutterwave asked for a " + auth.Mode + " authorization, which is not connected"}
	}
	return st, nil
}

func refusal(code int, message string) string {
	if message == "" {
		message = "refused"
	}
	return fmt.Sprintf("%d %s", code, message)
}

// chargeStatus reads a charge's status: successful is paid; failed,
// cancelled and error end it; pending waits. known is false for any other
// word, which concludes nothing.
func chargeStatus(d charge) (st gateway.Status, known bool) {
	st = gateway.Status{Outcome: gateway.Pending}
	if d.ID != 0 {
		st.ProviderRef = fmt.Sprint(d.ID)
	}
	switch strings.ToLower(d.Status) {
	case "successful":
		st.Outcome = gateway.Succeeded
	case "failed", "cancelled", "canceled", "error":
		st.Outcome, st.Reason = gateway.Failed, strings.TrimSuffix(strings.ToLower(d.Status)+": "+d.ProcessorResp, ": ")
	case "pending":
	default:
		return st, false
	}
	return st, true
}

// CollectionStatus implements gateway.Connector by our tx_ref (GET
// /transactions/verify_by_reference?tx_ref=, Node-v3
// services/transactions/rave.verify-by-txref.js), which needs no
// Flutterwave id: a charge answered with a redirect has none. Flutterwave
// answering that no transaction has this tx_ref (400 or 404, status
// "error") is not found; the service waits movement.NotFoundIsFinal before
// concluding from it.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	var a answer
	code, err := c.call(ctx, http.MethodGet, "/transactions/verify_by_reference?tx_ref="+url.QueryEscape(ref.Reference), nil, &a)
	if err != nil {
		return gateway.Status{}, err
	}
	switch {
	case (code == http.StatusBadRequest || code == http.StatusNotFound) && a.Status == "error":
		return gateway.Status{Outcome: gateway.NotFound}, nil
	case code >= 300 || a.Status != "success" || a.Data == nil:
		return gateway.Status{}, &gateway.Error{Message: "Flutterwave verify answered " + refusal(code, a.Message)}
	case a.Data.TxRef != "" && a.Data.TxRef != ref.Reference:
		return gateway.Status{}, &gateway.Error{Message: "Flutterwave verified tx_ref " + a.Data.TxRef + ", not " + ref.Reference}
	}
	st, known := chargeStatus(*a.Data)
	if !known {
		return gateway.Status{}, &gateway.Error{Message: "Flutterwave charge status " + a.Data.Status + " is unknown"}
	}
	return st, nil
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
// of a transfer, per country and operator code (providers.json), as each
// country's transfer guide spells it (Uganda: Airtel, MTN, MPS; Rwanda:
// MTN, MPS). MPS is Flutterwave's own mobile money route. Kenya's M-Pesa
// transfers need the sender's name, country and number in meta, which a
// Payout does not carry: they are not connected.
var transferBanks = map[string]map[string]string{
	"UG": {"MTN": "MTN", "AIRTEL": "Airtel"},
	"RW": {"MTN": "MTN", "AIRTEL": "MPS"},
	"ZM": {"MTN": "MPS", "AIRTEL": "MPS", "ZAMTEL": "MPS"},
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
		return transferRequest{}, &gateway.Error{NotSent: true, Message: "Flutterwave transfers to " + p.Operator + " in " + p.Country + " are not connected"}
	}
	r := transferRequest{AccountBank: bank, AccountNumber: strings.TrimPrefix(p.Phone, "+"),
		Amount: json.Number(cauri.FormatAmount(p.Amount, p.Currency)), Currency: string(p.Currency), Narration: clip(p.Description, 100),
		Reference: p.Reference, BeneficiaryName: clip(p.RecipientName, 100), CallbackURL: p.NotifyURL}
	if len(r.CallbackURL) > 100 {
		// Node-v3's transferSchema caps callback_url at 100: without it,
		// the dashboard's webhook and the status reads still tell.
		r.CallbackURL = ""
	}
	return r, nil
}

// errUnproven is the answer when Flutterwave may have received a transfer
// and nothing it said proves otherwise: the transfer waits, never re-sent.
func errUnproven(reference, why string) error {
	return &gateway.Error{Transient: true, Answered: true,
		Message: "Flutterwave transfer " + reference + ": " + why + "; it may have been received, so it is not sent again (check it on Flutterwave's dashboard)"}
}

// Payout implements gateway.Payer. The transfer's id comes back as the
// Status's ProviderRef; Payout.Created is not used, as Flutterwave gives
// the id only in its answer. A refusal (status "error", 4xx) created
// nothing and fails the payout; an answer lost or unreadable is an error
// the service must not take for "not sent".
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
		st, known := transferStatus(*a.Data)
		if !known {
			st = gateway.Status{Outcome: gateway.Pending, ProviderRef: st.ProviderRef}
		}
		return st, nil
	}
	if strings.Contains(strings.ToLower(a.Message), "already exists") {
		// "Payout with this ref already exists": Flutterwave has a
		// transfer with this reference; its state is the answer, never a
		// failure of this one.
		// Whatever the lookup says, this answer proves Flutterwave received
		// the reference: an error here is always "may have been received".
		st, err := c.transferByReference(ctx, p.Reference)
		switch {
		case err != nil:
			return gateway.Status{}, errUnproven(p.Reference, "Flutterwave has one with this reference, not read: "+err.Error())
		case st.Outcome == gateway.NotFound:
			return gateway.Status{}, errUnproven(p.Reference, "Flutterwave has one with this reference but does not list it")
		}
		return st, nil
	}
	if code >= 400 && a.Status == "error" {
		return gateway.Status{Outcome: gateway.Failed, Reason: a.Message, LowBalance: lowBalance(a.Message)}, nil
	}
	return gateway.Status{}, errUnproven(p.Reference, "Flutterwave answered "+refusal(code, a.Message))
}

// IdempotentPayout: Flutterwave v3 takes no idempotency key on transfers,
// and neither its SDKs nor its documentation promise that a reference
// already used is refused; a payout is never sent twice on that hope.
func (c *Client) IdempotentPayout() bool { return false }

// PayoutStatus implements gateway.Payer: GET /transfers/{id} when the
// transfer's id is known, else a search of the transfers Flutterwave lists
// for the one with our reference. It never answers "not found": nothing
// Flutterwave documents proves a transfer absent (GET /transfers is not
// documented to filter by reference, and a listing is no proof a transfer
// queued a moment ago is not there), and "not found" would let the
// service send it again. A transfer we cannot find stays unknown (an
// error) until its webhook, its id or a person settles it.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if ref.ProviderRef != "" {
		var a transferAnswer
		code, err := c.call(ctx, http.MethodGet, "/transfers/"+url.PathEscape(ref.ProviderRef), nil, &a)
		if err != nil {
			return gateway.Status{}, err
		}
		if code < 400 && a.Status == "success" && a.Data != nil && a.Data.Reference == ref.Reference {
			st, known := transferStatus(*a.Data)
			if !known {
				return gateway.Status{}, &gateway.Error{Message: "Flutterwave transfer status " + a.Data.Status + " is unknown"}
			}
			return st, nil
		}
	}
	st, err := c.transferByReference(ctx, ref.Reference)
	if err == nil && st.Outcome == gateway.NotFound {
		return gateway.Status{}, errUnproven(ref.Reference, "not found among the transfers Flutterwave lists")
	}
	return st, err
}

// listPages bounds the pages of GET /transfers read to find a transfer:
// the reference filter is not documented, so the list may be all the
// account's transfers, newest first.
const listPages = 10

// transferByReference looks for our reference in GET /transfers, page by
// page (page is a documented parameter of the list; reference is sent too,
// harmless if Flutterwave ignores it). NotFound only says it was not seen
// in the pages read; the callers never conclude from it.
func (c *Client) transferByReference(ctx context.Context, reference string) (gateway.Status, error) {
	for page := 1; page <= listPages; page++ {
		var a struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			Meta    struct {
				PageInfo struct {
					TotalPages int `json:"total_pages"`
				} `json:"page_info"`
			} `json:"meta"`
			Data []transfer `json:"data"`
		}
		q := url.Values{"reference": {reference}, "page": {fmt.Sprint(page)}}
		code, err := c.call(ctx, http.MethodGet, "/transfers?"+q.Encode(), nil, &a)
		if err != nil {
			return gateway.Status{}, err
		}
		if code >= 400 || a.Status != "success" {
			return gateway.Status{}, &gateway.Error{Message: fmt.Sprintf("Flutterwave did not list its transfers (%d): %s", code, a.Message)}
		}
		for _, t := range a.Data {
			if t.Reference == reference {
				st, known := transferStatus(t)
				if !known {
					return gateway.Status{}, &gateway.Error{Message: "Flutterwave transfer status " + t.Status + " is unknown"}
				}
				return st, nil
			}
		}
		if len(a.Data) == 0 || page >= a.Meta.PageInfo.TotalPages {
			break
		}
	}
	return gateway.Status{Outcome: gateway.NotFound}, nil
}

// transferStatus reads a transfer's status: SUCCESSFUL is paid, FAILED
// ends it (its complete_message the reason), NEW and PENDING wait. Case
// is ignored (the older webhooks say "Failed"). known is false for any
// other word.
func transferStatus(t transfer) (st gateway.Status, known bool) {
	st = gateway.Status{Outcome: gateway.Pending}
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
	case "NEW", "PENDING":
	default:
		return st, false
	}
	return st, true
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
