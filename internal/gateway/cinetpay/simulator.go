package cinetpay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for CinetPay's checkout API v2: credentials in the
// body (609 when wrong), input checks (608 for a missing field or an
// amount not a multiple of 5, 612 currency, 611 amount type, 641 below
// 100 XOF/XAF, 624 for a card payment without the card holder's details),
// unique transaction ids, a payment page at /_sim/pay/{transaction_id}
// (pay or decline, then back to return_url with a POST, as CinetPay does),
// outcomes by the locked number (sim.Outcome), settlement
// after SettleAfter or on POST /_sim/settle/{transaction_id}[?status=
// REFUSED|623|663|664] (the numbers: CinetPay's intermediate waiting
// codes; a stuck number waits at 664), and the signed form notification
// to the payment's notify_url. A check of a waiting payment answers its
// waiting code with data.status WAITING_FOR_CUSTOMER. POST
// /_sim/callback/{id}[?status=] sends the notification again (claiming
// status in cpm_error_message); POST /_sim/fault injects faults.
//
// It also stands in for the transfer API v1 under /v1 (payout_sim.go):
// login with the apikey and TransferPassword (tokens expire after 5
// minutes of Now), contacts, sending to a contact (unique
// client_transaction_id, 805 otherwise), its check and the form
// notification to the transfer's notify_url. The control calls settle
// and notify a transfer by its client_transaction_id (?status=VAL|REJ).
type Simulator struct {
	APIKey, SiteID, SecretKey string
	TransferPassword          string // the transfer API's; none refuses every login
	SettleAfter               time.Duration
	Now                       func() time.Time // the tokens' clock; time.Now when nil

	mu       sync.Mutex
	payments map[string]*simPayment
	nextID   int
	faults   sim.Faults

	transfers map[string]*simTransfer // by client_transaction_id
	contacts  map[string]bool         // prefix+phone
	tokens    map[string]time.Time    // when each token was given
	logins    int
	payouts   int
}

type simPayment struct {
	id, token, amount, currency string
	phone, channels             string
	notifyURL, returnURL        string
	status, code, message       string // CREATED, ACCEPTED or REFUSED; the check's code and message
	created                     time.Time
}

var currencies = map[string]bool{"XOF": true, "XAF": true, "CDF": true, "GNF": true, "USD": true}

// simWaiting are the waiting codes a settle control may move a payment to
// (status=623|663|664): CinetPay's intermediate states.
var simWaiting = map[string][2]string{"623": {"623", "WAITING_CUSTOMER_TO_VALIDATE"}, "663": {"663", "WAITING_CUSTOMER_OTP_CODE"},
	"664": {"664", "WAITING_CUSTOMER_PAYMENT_AT_OPERATOR_SIDE"}}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		sim.Page{Settle: s.settle, Declined: "REFUSED", Return: s.returnTo}.Serve(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		sim.ServeSimControl(w, r, &s.faults,
			func(id, status string) bool { return s.settle(id, status) || s.settleTransfer(id, status) },
			func(id, status string) bool {
				return sim.ResendCallback(&s.mu, s.payments, id, status, s.notify) ||
					sim.ResendCallback(&s.mu, s.transfers, id, status, s.notifyTransfer)
			})
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/payment":
		s.create(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v2/payment/check":
		s.check(w, r)
	case strings.HasPrefix(r.URL.Path, "/v1/"):
		s.serveTransfer(w, r)
	default:
		http.NotFound(w, r)
	}
}

func reply(w http.ResponseWriter, status int, code, message, description string, data any) {
	sim.Reply(w, status, map[string]any{"code": code, "message": message, "description": description, "data": data,
		"api_response_id": strconv.FormatInt(time.Now().UnixNano(), 36)})
}

func (s *Simulator) create(w http.ResponseWriter, r *http.Request) {
	var req paymentRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		reply(w, http.StatusBadRequest, "608", "MINIMUM_REQUIRED_FIELDS", "The body is not JSON", []any{})
		return
	}
	if req.APIKey != s.APIKey || req.SiteID != s.SiteID {
		reply(w, http.StatusOK, "609", "AUTH_NOT_FOUND", "Invalid apikey or site_id", []any{})
		return
	}
	amount, err := strconv.ParseInt(req.Amount.String(), 10, 64)
	refuse, _, _ := sim.Outcome(req.CustomerPhone)
	switch {
	case req.TransactionID == "" || req.Description == "" || req.NotifyURL == "" || req.ReturnURL == "" ||
		req.Channels != "ALL" && req.Channels != "MOBILE_MONEY" && req.Channels != "CREDIT_CARD" && req.Channels != "WALLET" ||
		req.LockPhoneNumber && req.CustomerPhone == "":
		reply(w, http.StatusOK, "608", "MINIMUM_REQUIRED_FIELDS", "A required field is missing or invalid", []any{})
		return
	case !currencies[req.Currency]:
		reply(w, http.StatusOK, "612", "ERROR_CURRENCY_NOTVALID", "The currency must be XOF, XAF, CDF, GNF or USD", []any{})
		return
	case err != nil:
		reply(w, http.StatusOK, "611", "ERROR_AMOUNT_TYPE", "The amount must be an integer", []any{})
		return
	case amount%5 != 0:
		reply(w, http.StatusOK, "608", "MINIMUM_REQUIRED_FIELDS", "The amount must be a multiple of 5", []any{})
		return
	case amount < 100 && (req.Currency == "XOF" || req.Currency == "XAF"):
		reply(w, http.StatusOK, "641", "ERROR_AMOUNT_TOO_LOW", "The amount is below the minimum", []any{})
		return
	case req.Channels == "CREDIT_CARD" && len(cardFields(req)) > 0:
		reply(w, http.StatusOK, "624", "UNKNOWN_ERROR", "A card payment needs "+strings.Join(cardFields(req), ", "), []any{})
		return
	case refuse:
		reply(w, http.StatusOK, "635", "ERROR_PHONE_NUMBER_NOT_FOUND", "This number cannot pay", []any{})
		return
	}
	s.mu.Lock()
	if s.payments == nil {
		s.payments = map[string]*simPayment{}
	}
	if s.payments[req.TransactionID] != nil {
		s.mu.Unlock()
		reply(w, http.StatusOK, "608", "MINIMUM_REQUIRED_FIELDS", "transaction_id already used", []any{})
		return
	}
	s.nextID++
	p := &simPayment{id: req.TransactionID, token: fmt.Sprintf("sim%08d", s.nextID), amount: req.Amount.String(), currency: req.Currency,
		phone: req.CustomerPhone, channels: req.Channels, notifyURL: req.NotifyURL, returnURL: req.ReturnURL,
		status: "CREATED", code: "662", message: "WAITING_CUSTOMER_PAYMENT", created: time.Now()}
	s.payments[p.id] = p
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(p.id, "") })
	}
	reply(w, http.StatusOK, "201", "CREATED", "Transaction created with success", map[string]string{
		"payment_token": p.token, "payment_url": "http://" + r.Host + "/_sim/pay/" + url.PathEscape(p.id)})
}

func (s *Simulator) check(w http.ResponseWriter, r *http.Request) {
	var req checkRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.TransactionID == "" {
		reply(w, http.StatusBadRequest, "608", "MINIMUM_REQUIRED_FIELDS", "transaction_id is required", []any{})
		return
	}
	if req.APIKey != s.APIKey || req.SiteID != s.SiteID {
		reply(w, http.StatusOK, "609", "AUTH_NOT_FOUND", "Invalid apikey or site_id", []any{})
		return
	}
	s.mu.Lock()
	p := s.payments[req.TransactionID]
	var code, message string
	var data map[string]any
	if p != nil {
		code, message = p.code, p.message
		data = map[string]any{"amount": p.amount, "currency": p.currency, "status": p.status, "payment_method": "OM",
			"description": "", "metadata": p.id, "operator_id": "", "payment_date": p.created.Format("2006-01-02 15:04:05")}
		if p.status == "ACCEPTED" {
			data["operator_id"] = "MP" + p.token
		}
		if p.status == "CREATED" { // waiting: CinetPay's word for it (checkout/notification)
			data["status"] = "WAITING_FOR_CUSTOMER"
		}
	}
	s.mu.Unlock()
	if p == nil {
		reply(w, http.StatusNotFound, "404", "TRANSACTION_NOT_FOUND", "No transaction with this id", []any{})
		return
	}
	reply(w, http.StatusOK, code, message, "", data)
}

func (s *Simulator) returnTo(id string) (string, url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.payments[id]
	if p == nil {
		return "", nil
	}
	return p.returnURL, url.Values{"transaction_id": {p.id}, "token": {p.token}}
}

// settle ends a waiting payment: as the locked number asks, or as status
// (ACCEPTED or REFUSED) says. It reports whether the payment exists.
func (s *Simulator) settle(id, status string) bool {
	s.mu.Lock()
	p := s.payments[id]
	if p == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := sim.Outcome(p.phone)
	if p.status != "CREATED" {
		s.mu.Unlock()
		return true
	}
	if w, ok := simWaiting[status]; ok || status == "" && stuck {
		// Still waiting, further on: the customer's confirmation (623, 663)
		// or the operator (664, where a stuck number stays).
		if !ok {
			w = simWaiting["664"]
		}
		p.code, p.message = w[0], w[1]
		s.mu.Unlock()
		return true
	}
	switch {
	case status == "REFUSED" || status == "" && fails && sim.LowBalance(p.phone):
		p.status, p.code, p.message = "REFUSED", "602", "INSUFFICIENT_BALANCE"
		if status == "REFUSED" {
			p.code, p.message = "627", "TRANSACTION_CANCEL"
		}
	case status == "" && fails:
		p.status, p.code, p.message = "REFUSED", "600", "PAYMENT_FAILED"
	default:
		p.status, p.code, p.message = "ACCEPTED", "00", "SUCCES"
	}
	s.mu.Unlock()
	s.notify(p, "")
	return true
}

// notify posts CinetPay's form notification, signed in x-token; claiming
// status in cpm_error_message when given.
func (s *Simulator) notify(p *simPayment, status string) {
	s.mu.Lock()
	form := url.Values{"cpm_site_id": {s.SiteID}, "cpm_trans_id": {p.id}, "cpm_trans_date": {p.created.Format("2006-01-02 15:04:05")},
		"cpm_amount": {p.amount}, "cpm_currency": {p.currency}, "signature": {p.token}, "payment_method": {"OM"},
		"cel_phone_num": {strings.TrimPrefix(p.phone, "+")}, "cpm_phone_prefixe": {""}, "cpm_language": {"fr"}, "cpm_version": {"V4"},
		"cpm_payment_config": {"SINGLE"}, "cpm_page_action": {"PAYMENT"}, "cpm_custom": {p.id}, "cpm_designation": {""},
		"cpm_error_message": {p.message}}
	s.mu.Unlock()
	if status != "" {
		form.Set("cpm_error_message", status)
	}
	sim.PostCallback(p.notifyURL, []byte(form.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Token": {Sign(s.SecretKey, form)}})
}
