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

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for CinetPay's checkout API v2: credentials in the
// body (609 when wrong), input checks (608 for a missing field or an
// amount not a multiple of 5, 612 currency, 611 amount type, 641 below
// 100 XOF/XAF, 624 for a card payment without the card holder's details),
// unique transaction ids, a payment page at /_sim/pay/{transaction_id}
// (pay or decline, then back to return_url with a POST, as CinetPay does),
// outcomes by the locked number (sim.Outcome: 600 PAYMENT_FAILED, 602
// INSUFFICIENT_BALANCE; a stuck number waits at 664), settlement after
// SettleAfter or on POST /_sim/settle/{transaction_id}[?status=], and the
// signed form notification to the payment's notify_url.
//
// A payment's status is the code a check answers (checkout/tableau): it
// starts at 662 WAITING_CUSTOMER_PAYMENT; ?status=623, 663 or 664 moves it
// to CinetPay's other waiting codes (the customer's confirmation, the
// Orange Money OTP code, the operator) and notifies it, as CinetPay calls
// notify_url "after each update"; ?status=00, 600, 602, 604 (a wrong OTP
// code), 606 (Orange Money's INCORRECT_SETTINGS) or 627 ends it so, as do
// their messages (SUCCES, TRANSACTION_CANCEL...) and ACCEPTED or REFUSED
// (627, a declined payment). A check of a waiting payment answers its
// code with data.status WAITING_FOR_CUSTOMER. POST /_sim/callback/{id}
// [?status=] sends the notification again (claiming status in
// cpm_error_message); POST /_sim/fault injects faults.
//
// It also stands in for the transfer API v1 under /v1 (payout_sim.go),
// on a book of its own: the control calls settle and notify a transfer by
// its client_transaction_id (?status=REC|NOS|VAL|REJ).
type Simulator struct {
	APIKey, SiteID, SecretKey string
	TransferPassword          string // the transfer API's; none refuses every login
	SettleAfter               time.Duration
	Now                       func() time.Time // the tokens' clock; time.Now when nil

	// Book holds the payments, by transaction_id; it counts the calls and
	// injects the faults of both APIs.
	sim.Book[simPayment]
	transfers sim.Book[simTransfer] // by CinetPay's transaction_id and client_transaction_id
	once      sync.Once

	mu       sync.Mutex
	contacts map[string]bool      // prefix+phone
	tokens   map[string]time.Time // when each token was given
	logins   int
}

// simPayment is CinetPay's own of a payment.
type simPayment struct {
	amount, currency     string
	notifyURL, returnURL string
}

// The codes of CinetPay's code table (docs.cinetpay.com/api/1.0-en/
// checkout/tableau) a simulated payment takes, and their messages.
const (
	codeWaiting  = "662" // WAITING_CUSTOMER_PAYMENT
	codeOperator = "664" // WAITING_CUSTOMER_PAYMENT_AT_OPERATOR_SIDE
	codeCancel   = "627" // TRANSACTION_CANCEL: a declined payment
)

var simMessages = map[string]string{
	"00": "SUCCES", "600": "PAYMENT_FAILED", "602": "INSUFFICIENT_BALANCE",
	// OTP_CODE_ERROR: "The OTP code entered is incorrect"; INCORRECT_SETTINGS:
	// Orange Money's refusal (a wrong OTP code, a low balance, or the same
	// number and amount again too soon), both in checkout/tableau.
	"604": "OTP_CODE_ERROR", "606": "INCORRECT_SETTINGS",
	"623": "WAITING_CUSTOMER_TO_VALIDATE", "627": "TRANSACTION_CANCEL", "662": "WAITING_CUSTOMER_PAYMENT",
	"663": "WAITING_CUSTOMER_OTP_CODE", "664": "WAITING_CUSTOMER_PAYMENT_AT_OPERATOR_SIDE",
}

// simWords are the other words a control call may settle to a code with:
// its message, ACCEPTED, and REFUSED (a declined payment, 627).
var simWords = func() map[string]string {
	words := map[string]string{"ACCEPTED": successCode, "REFUSED": codeCancel}
	for code, message := range simMessages {
		words[message] = code
	}
	return words
}()

// ready sets the books to CinetPay's lifecycles on the first request. A
// payment's settle to a waiting code is notified too: CinetPay calls
// notify_url "after each update to notify you of status changes during a
// transaction" (checkout/notification).
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simPayment]{
			Pending: codeWaiting, Succeeded: successCode, Failed: "600",
			Steps: []string{"623", "663", codeOperator}, NotifySteps: true, Stuck: codeOperator,
			Finals: []string{"602", "604", "606", codeCancel}, Words: simWords,
			Outcome: func(m *sim.Movement[simPayment]) (string, bool) {
				_, fails, stuck := sim.Outcome(m.Phone)
				switch {
				case fails && sim.LowBalance(m.Phone):
					return "602", stuck
				case fails:
					return "600", stuck
				}
				return "", stuck
			},
			Notify: s.notification,
		}
		s.Book.SettleAfter = s.SettleAfter
		s.transfers.Lifecycle = transferLifecycle(s)
		s.transfers.SettleAfter = s.SettleAfter
	})
}

// ServeHTTP answers the checkout API v2, the transfer API under /v1, the
// payment page and the control calls.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		sim.Page{Settle: func(id, status string) bool { return s.Settle(id, status) == nil }, Declined: codeCancel, Return: s.returnTo}.Serve(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		// A transfer's control call goes to the transfers' book; the rest
		// (payments, faults) to the payments'.
		key := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/_sim/"), "settle/"), "callback/")
		if _, payment := s.View(key); !payment {
			if _, transfer := s.transfers.View(key); transfer {
				s.transfers.Intercept(w, r)
				return
			}
		}
	}
	if s.Intercept(w, r) {
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
	case !checkoutCurrencies[cauri.Currency(req.Currency)]:
		reply(w, http.StatusOK, "612", "ERROR_CURRENCY_NOTVALID", "The currency must be XOF, XAF, CDF, GNF or USD", []any{})
		return
	case err != nil:
		reply(w, http.StatusOK, "611", "ERROR_AMOUNT_TYPE", "The amount must be an integer", []any{})
		return
	case amount%5 != 0:
		reply(w, http.StatusOK, "608", "MINIMUM_REQUIRED_FIELDS", "The amount must be a multiple of 5", []any{})
		return
	case amount < minimumFCFA && (req.Currency == "XOF" || req.Currency == "XAF"):
		reply(w, http.StatusOK, "641", "ERROR_AMOUNT_TOO_LOW", "The amount is below the minimum", []any{})
		return
	case req.Channels == "CREDIT_CARD" && len(cardFields(req)) > 0:
		// checkout/tableau, 624: "Some credit card parameters are supplied
		// without customer_address and customer_city".
		reply(w, http.StatusOK, "624", "UNKNOWN_ERROR", "A card payment needs "+strings.Join(cardFields(req), ", "), []any{})
		return
	case refuse:
		reply(w, http.StatusOK, "635", "ERROR_PHONE_NUMBER_NOT_FOUND", "This number cannot pay", []any{})
		return
	}
	m, added := s.Add(&sim.Movement[simPayment]{ID: req.TransactionID, Phone: req.CustomerPhone, Data: simPayment{amount: req.Amount.String(),
		currency: req.Currency, notifyURL: req.NotifyURL, returnURL: req.ReturnURL}})
	if !added {
		reply(w, http.StatusOK, "608", "MINIMUM_REQUIRED_FIELDS", "transaction_id already used", []any{})
		return
	}
	reply(w, http.StatusOK, "201", "CREATED", "Transaction created with success", map[string]string{
		"payment_token": simToken(m), "payment_url": "http://" + r.Host + "/_sim/pay/" + url.PathEscape(m.ID)})
}

// simToken is a payment's payment_token.
func simToken(m *sim.Movement[simPayment]) string { return fmt.Sprintf("sim%08d", m.Seq) }

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
	m, ok := s.View(req.TransactionID)
	if !ok {
		reply(w, http.StatusNotFound, "404", "TRANSACTION_NOT_FOUND", "No transaction with this id", []any{})
		return
	}
	data := map[string]any{"amount": m.Data.amount, "currency": m.Data.currency, "status": "REFUSED", "payment_method": "OM",
		"description": "", "metadata": m.ID, "operator_id": "", "payment_date": m.Created.Format("2006-01-02 15:04:05")}
	switch {
	case m.Status == successCode:
		data["status"], data["operator_id"] = "ACCEPTED", "MP"+simToken(&m)
	case !s.Final(m.Status): // waiting: CinetPay's word for it (checkout/notification)
		data["status"] = "WAITING_FOR_CUSTOMER"
	}
	reply(w, http.StatusOK, m.Status, simMessages[m.Status], "", data)
}

func (s *Simulator) returnTo(id string) (string, url.Values) {
	m, ok := s.View(id)
	if !ok {
		return "", nil
	}
	return m.Data.returnURL, url.Values{"transaction_id": {m.ID}, "token": {simToken(&m)}}
}

// notification is CinetPay's form notification of m, signed in x-token;
// claiming status in cpm_error_message when given.
func (s *Simulator) notification(m *sim.Movement[simPayment], claim string) sim.Note {
	message := simMessages[m.Status]
	if claim != "" {
		message = claim
	}
	form := url.Values{"cpm_site_id": {s.SiteID}, "cpm_trans_id": {m.ID}, "cpm_trans_date": {m.Created.Format("2006-01-02 15:04:05")},
		"cpm_amount": {m.Data.amount}, "cpm_currency": {m.Data.currency}, "signature": {simToken(m)}, "payment_method": {"OM"},
		"cel_phone_num": {strings.TrimPrefix(m.Phone, "+")}, "cpm_phone_prefixe": {""}, "cpm_language": {"fr"}, "cpm_version": {"V4"},
		"cpm_payment_config": {"SINGLE"}, "cpm_page_action": {"PAYMENT"}, "cpm_custom": {m.ID}, "cpm_designation": {""},
		"cpm_error_message": {message}}
	return sim.Note{URL: m.Data.notifyURL, Body: []byte(form.Encode()),
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Token": {Sign(s.SecretKey, form)}}}
}
