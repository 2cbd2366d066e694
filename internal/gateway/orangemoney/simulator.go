package orangemoney

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for OM WebPay in tests and on a developer's machine,
// for one app and one merchant wallet: the OAuth endpoint (Basic auth with
// the client id and secret, the form grant_type=client_credentials; tokens
// that expire after TokenLifetime), the bearer token on every call (401
// with Orange's codes 40, 41, 42 otherwise), the web payment's checks
// (merchant_key, currency, order_id unique and at most 30 characters, a
// whole positive amount, absolute return_url, cancel_url and notif_url,
// lang, reference; 400 in Orange's {code, message, description} shape),
// its payment page at GET /pay/{pay_token} (the payment_url, on the
// simulator's own host), and the status read by order_id, amount and
// pay_token together.
//
// On the page the customer pays (with the Orange Money number typed
// there, if any) or cancels, and goes back to return_url or cancel_url.
// Opening the page moves the payment from INITIATED to PENDING; one left
// alone for PageLifetime is EXPIRED. The number decides the outcome
// (sim.Outcome), as the other simulators':
//
//	...0039  refused: FAILED at once
//	...0029  fails: FAILED (the payer declines)
//	...0049  fails: FAILED (the payer's balance is too low)
//	...0129  never settles, no notification (a lost payment, for the reconciler)
//	other    succeeds (a payment made without a number too)
//
// A payment settles on the page, after SettleAfter (as if paid without a
// number), or on POST /_sim/settle/{pay_token or order_id}[?status=SUCCESS|
// FAILED|EXPIRED]. Its end (SUCCESS or FAILED; none for EXPIRED) is POSTed
// to its notif_url, exactly as given (query included), as {status,
// notif_token, txnid}. POST /_sim/callback/{pay_token or order_id}[?status=]
// sends it again, claiming status when given; POST /_sim/fault injects
// faults into the API (the OAuth endpoint aside; 500-initiate fails the web
// payment only, though the status read is a POST too).
type Simulator struct {
	ClientID     string
	ClientSecret string
	MerchantKey  string
	Country      string        // the path's country it serves; Sandbox when empty
	SettleAfter  time.Duration // 0: only the page or the control call settles

	mu       sync.Mutex
	tokens   map[string]time.Time   // access token -> expiry
	payments map[string]*simPayment // by pay_token
	orders   map[string]*simPayment // by order_id
	faults   sim.Faults
	seq      int
	calls    int
	issued   int // tokens given
}

// TokenLifetime is how long a simulated token is valid (expires_in 3600:
// Orange's default lifetime, 60 minutes).
const TokenLifetime = time.Hour

// PageLifetime is how long a simulated payment page stays usable before
// the payment is EXPIRED.
const PageLifetime = 10 * time.Minute

// simPayment is a web payment and where it stands.
type simPayment struct {
	payToken, notifToken, orderID string
	amount                        int64
	currency                      string
	returnURL, cancelURL          string
	notifURL                      string
	status                        string // INITIATED, PENDING, SUCCESS, FAILED, EXPIRED
	txnID                         string
	payer                         string // the number typed on the page
	created                       time.Time
}

var (
	simOrderIDRE  = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,30}$`)
	simCurrencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// Calls counts the API requests the simulator answered, token requests
// included (the control calls and the payment page aside).
func (s *Simulator) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Payments counts the web payments the simulator created: each is a page
// where money can be paid.
func (s *Simulator) Payments() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.payments)
}

// Tokens counts the access tokens the simulator gave.
func (s *Simulator) Tokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

func (s *Simulator) country() string {
	if c := strings.ToLower(strings.TrimSpace(s.Country)); c != "" {
		return c
	}
	return Sandbox
}

// refuse answers an error in Orange's {code, message, description} shape.
func refuse(w http.ResponseWriter, status int, code int, message, description string) {
	sim.Reply(w, status, map[string]any{"code": code, "message": message, "description": description})
}

// badRequest is the simulator's refusal of a field.
func badRequest(w http.ResponseWriter, description string) {
	refuse(w, http.StatusBadRequest, 1101, "Bad Request", description)
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		sim.ServeSimControl(w, r, &s.faults, s.settle, s.resend)
		return
	case strings.HasPrefix(r.URL.Path, "/pay/"):
		s.page(w, r, strings.TrimPrefix(r.URL.Path, "/pay/"))
		return
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if r.URL.Path == tokenPath {
		s.issueToken(w, r)
		return
	}
	webpay, status := fmt.Sprintf(webpayPath, s.country()), fmt.Sprintf(statusPath, s.country())
	if r.URL.Path != webpay && r.URL.Path != status {
		refuse(w, http.StatusNotFound, 60, "Resource not found", "The requested URI or the requested resource does not exist.")
		return
	}
	if r.Method != http.MethodPost {
		refuse(w, http.StatusMethodNotAllowed, 61, "Method not allowed", "The requested method is not allowed on this resource.")
		return
	}
	faulted := r
	if r.URL.Path == status {
		// A status read, not an initiation, though a POST.
		faulted = r.Clone(r.Context())
		faulted.Method = http.MethodGet
	}
	if s.faults.Apply(w, faulted) {
		return
	}
	if code, msg, desc := s.authorized(r); code != 0 {
		refuse(w, http.StatusUnauthorized, code, msg, desc)
		return
	}
	if r.URL.Path == webpay {
		s.webPayment(w, r)
	} else {
		s.status(w, r)
	}
}

// issueToken is POST /oauth/v3/token with the client id and secret (Basic)
// and grant_type=client_credentials in a form.
func (s *Simulator) issueToken(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	switch {
	case r.Method != http.MethodPost:
		refuse(w, http.StatusMethodNotAllowed, 61, "Method not allowed", "The token endpoint takes a POST.")
		return
	case r.FormValue("grant_type") != "client_credentials":
		sim.Reply(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": "grant_type must be client_credentials"})
		return
	case !ok || s.ClientID == "" || id != s.ClientID || secret != s.ClientSecret:
		sim.Reply(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "The requested service needs credentials, but the ones provided were invalid."})
		return
	}
	b := make([]byte, 16)
	rand.Read(b)
	tok, now := "sim"+hex.EncodeToString(b), time.Now()
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]time.Time{}
	}
	for t, exp := range s.tokens {
		if now.After(exp) {
			delete(s.tokens, t)
		}
	}
	s.tokens[tok] = now.Add(TokenLifetime)
	s.issued++
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": tok, "expires_in": int(TokenLifetime / time.Second)})
}

// authorized checks r's bearer token, answering Orange's code, message and
// description when it is refused (code 0 when it is not).
func (s *Simulator) authorized(r *http.Request) (int, string, string) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return 40, "Missing credentials", "The requested service needs credentials, but none were provided."
	}
	s.mu.Lock()
	exp, known := s.tokens[tok]
	s.mu.Unlock()
	switch {
	case !known:
		return 41, "Invalid credentials", "The requested service needs credentials, but the ones provided were invalid."
	case time.Now().After(exp):
		return 42, "Expired credentials", "The requested service needs credentials, but the ones provided were out-of-date."
	}
	return 0, "", ""
}

// simWebPayment is a web payment as the simulator reads it: the amount as
// a JSON number, to tell an integer from a fraction.
type simWebPayment struct {
	MerchantKey string      `json:"merchant_key"`
	Currency    string      `json:"currency"`
	OrderID     string      `json:"order_id"`
	Amount      json.Number `json:"amount"`
	ReturnURL   string      `json:"return_url"`
	CancelURL   string      `json:"cancel_url"`
	NotifURL    string      `json:"notif_url"`
	Lang        string      `json:"lang"`
	Reference   string      `json:"reference"`
	PayToken    string      `json:"pay_token"` // the status read's
}

func decode(w http.ResponseWriter, r *http.Request) (simWebPayment, bool) {
	var p simWebPayment
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	d.UseNumber()
	if err := d.Decode(&p); err != nil {
		badRequest(w, "The body is not the JSON expected")
		return p, false
	}
	return p, true
}

// currencyOK reports whether the country served collects currency.
func (s *Simulator) currencyOK(currency string) bool {
	country := s.country()
	if country == Sandbox {
		return currency == SandboxCurrency
	}
	if want, known := Countries[country]; known {
		return currency == string(want)
	}
	return simCurrencyRE.MatchString(currency)
}

// webPayment is POST .../webpayment: checked, given a pay_token, a
// notif_token and its page, answered 201.
func (s *Simulator) webPayment(w http.ResponseWriter, r *http.Request) {
	p, ok := decode(w, r)
	if !ok {
		return
	}
	amount, amountErr := strconv.ParseInt(p.Amount.String(), 10, 64)
	switch {
	case p.MerchantKey == "" || p.MerchantKey != s.MerchantKey:
		badRequest(w, "Invalid merchant_key")
	case !s.currencyOK(p.Currency):
		badRequest(w, "Invalid currency "+p.Currency)
	case !simOrderIDRE.MatchString(p.OrderID):
		badRequest(w, "Invalid order_id: 1 to 30 letters, digits, '-', '_' or '.'")
	case amountErr != nil || amount <= 0:
		badRequest(w, "Invalid amount: a positive whole number")
	case !webURL(p.ReturnURL):
		badRequest(w, "Invalid return_url")
	case !webURL(p.CancelURL):
		badRequest(w, "Invalid cancel_url")
	case !webURL(p.NotifURL):
		badRequest(w, "Invalid notif_url")
	case p.Lang != "fr" && p.Lang != "en":
		badRequest(w, "Invalid lang: fr or en")
	case len([]rune(p.Reference)) > referenceMax:
		badRequest(w, "Invalid reference: at most 30 characters")
	default:
		s.accept(w, r, &simPayment{orderID: p.OrderID, amount: amount, currency: p.Currency, returnURL: p.ReturnURL,
			cancelURL: p.CancelURL, notifURL: p.NotifURL, status: "INITIATED", created: time.Now()})
	}
}

// accept records a web payment, unless its order_id was used already, and
// answers OM's 201.
func (s *Simulator) accept(w http.ResponseWriter, r *http.Request, p *simPayment) {
	b := make([]byte, 24)
	rand.Read(b)
	p.payToken, p.notifToken = "v1"+hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	s.mu.Lock()
	if s.payments == nil {
		s.payments, s.orders = map[string]*simPayment{}, map[string]*simPayment{}
	}
	if s.orders[p.orderID] != nil {
		s.mu.Unlock()
		badRequest(w, "Duplicate order_id "+p.orderID)
		return
	}
	s.payments[p.payToken], s.orders[p.orderID] = p, p
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(p.payToken, "") })
	}
	sim.Reply(w, http.StatusCreated, map[string]any{"status": http.StatusCreated, "message": "OK", "pay_token": p.payToken,
		"payment_url": "http://" + r.Host + "/pay/" + p.payToken, "notif_token": p.notifToken})
}

// status is POST .../transactionstatus: the payment of a pay_token, whose
// order_id and amount must be the web payment's.
func (s *Simulator) status(w http.ResponseWriter, r *http.Request) {
	q, ok := decode(w, r)
	if !ok {
		return
	}
	amount, _ := strconv.ParseInt(q.Amount.String(), 10, 64)
	s.mu.Lock()
	p := s.payments[q.PayToken]
	var answer map[string]string
	if p != nil && p.orderID == q.OrderID && p.amount == amount {
		s.expire(p)
		answer = map[string]string{"status": p.status, "order_id": p.orderID, "txnid": p.txnID}
	}
	s.mu.Unlock()
	if answer == nil {
		badRequest(w, "No transaction with this pay_token, order_id and amount")
		return
	}
	sim.Reply(w, http.StatusCreated, answer)
}

// expire ends a payment left alone past PageLifetime; s.mu is held.
func (s *Simulator) expire(p *simPayment) {
	if (p.status == "INITIATED" || p.status == "PENDING") && time.Since(p.created) > PageLifetime {
		p.status = "EXPIRED"
	}
}

// lookup finds a payment by its pay_token or order_id; s.mu is held.
func (s *Simulator) lookup(key string) *simPayment {
	if p := s.payments[key]; p != nil {
		return p
	}
	return s.orders[key]
}

// page is the payment page, GET /pay/{pay_token}: the customer pays there
// (POST do=pay, with the number typed in msisdn, if any) or cancels (POST
// do=cancel), then goes back to return_url or cancel_url.
func (s *Simulator) page(w http.ResponseWriter, r *http.Request, token string) {
	s.mu.Lock()
	p := s.payments[token]
	var amount int64
	var currency, status string
	if p != nil {
		s.expire(p)
		if p.status == "INITIATED" && r.Method != http.MethodPost {
			p.status = "PENDING"
		}
		amount, currency, status = p.amount, p.currency, p.status
	}
	s.mu.Unlock()
	if p == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if status != "PENDING" {
			fmt.Fprintf(w, `<!doctype html><title>Orange Money (simulated)</title><p id="sim-ended">This payment is %s.</p>`, html.EscapeString(status))
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Orange Money (simulated)</title><h1>Pay %d %s to the merchant</h1>
<form method="post" action="/pay/%s"><label>Orange Money number <input name="msisdn" id="sim-msisdn"></label>
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="cancel" id="sim-cancel">Cancel</button></form>`,
			amount, html.EscapeString(currency), url.PathEscape(token))
		return
	}
	want := ""
	if r.FormValue("do") == "cancel" {
		want = "FAILED"
	}
	payer := strings.TrimSpace(r.FormValue("msisdn"))
	s.settlePayment(token, want, &payer)
	s.mu.Lock()
	status, back := p.status, p.cancelURL
	if status == "SUCCESS" {
		back = p.returnURL
	}
	s.mu.Unlock()
	if status == "PENDING" || status == "INITIATED" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `<!doctype html><title>Orange Money (simulated)</title><p id="sim-processing">Payment processing…</p>`)
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// settle ends a payment (by pay_token or order_id) now, as status says or
// as its number asks. It reports whether the payment exists.
func (s *Simulator) settle(key, status string) bool { return s.settlePayment(key, status, nil) }

// settlePayment ends a waiting payment as status says (SUCCESS, FAILED,
// EXPIRED) or, without one, as the payer's number asks (payer, when given,
// is the number typed on the page), and POSTs its notification. It reports
// whether the payment exists.
func (s *Simulator) settlePayment(key, status string, payer *string) bool {
	s.mu.Lock()
	p := s.lookup(key)
	if p == nil {
		s.mu.Unlock()
		return false
	}
	if payer != nil {
		p.payer = *payer
	}
	s.expire(p)
	var body []byte
	if p.status == "INITIATED" || p.status == "PENDING" {
		refused, fails, stuck := sim.Outcome(p.payer)
		switch status = strings.ToUpper(strings.TrimSpace(status)); {
		case status == "EXPIRED":
			p.status = "EXPIRED"
		case status == "" && stuck:
			p.status = "PENDING"
		case status == "SUCCESS" || status == "" && !refused && !fails:
			s.seq++
			p.status, p.txnID = "SUCCESS", fmt.Sprintf("MP%s.%04d.S%05d", time.Now().Format("060102"), time.Now().Hour()*100+time.Now().Minute(), s.seq)
			body = p.notification("")
		default:
			p.status = "FAILED"
			body = p.notification("")
		}
	}
	notif := p.notifURL
	s.mu.Unlock()
	if body != nil {
		sim.PostCallback(notif, body, nil)
	}
	return true
}

// resend sends a payment's notification again (or early), claiming status
// when given.
func (s *Simulator) resend(key, status string) bool {
	s.mu.Lock()
	p := s.lookup(key)
	var body []byte
	var notif string
	if p != nil {
		body, notif = p.notification(strings.ToUpper(strings.TrimSpace(status))), p.notifURL
	}
	s.mu.Unlock()
	if p != nil {
		sim.PostCallback(notif, body, nil)
	}
	return p != nil
}

// notification is the payment's notification, claiming status when given,
// else its own (SUCCESS, or FAILED for any other); s.mu is held.
func (p *simPayment) notification(status string) []byte {
	if status == "" {
		status = p.status
		if status != "SUCCESS" {
			status = "FAILED"
		}
	}
	b, _ := json.Marshal(map[string]string{"status": status, "notif_token": p.notifToken, "txnid": p.txnID})
	return b
}
