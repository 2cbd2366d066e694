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
	"sync/atomic"
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
// FAILED|EXPIRED, or PENDING: it only moves there; in any case]. Its end
// (SUCCESS or FAILED; none for EXPIRED) is POSTed to its notif_url,
// exactly as given (query included), as {status, notif_token, txnid}. POST
// /_sim/callback/{pay_token or order_id}[?status=] sends it again (none
// for a payment not ended or EXPIRED), claiming status when given; POST
// /_sim/fault injects faults into the API (the OAuth endpoint, unknown
// paths and methods aside; 500-initiate fails the web payment only, though
// the status read is a POST too). Calls counts the API's requests, the
// OAuth endpoint's, unknown paths' and methods' too.
type Simulator struct {
	ClientID     string
	ClientSecret string
	MerchantKey  string
	Country      string        // the path's country it serves; Sandbox when empty
	SettleAfter  time.Duration // 0: only the page or the control call settles

	// Book holds the web payments, by pay_token, found by order_id too.
	sim.Book[simPayment]
	once   sync.Once
	seq    atomic.Int64 // txnids
	mu     sync.Mutex
	tokens map[string]time.Time // access token -> expiry
	issued int                  // tokens given
}

// TokenLifetime is how long a simulated token is valid (expires_in 3600:
// Orange's default lifetime, 60 minutes).
const TokenLifetime = time.Hour

// PageLifetime is how long a simulated payment page stays usable before
// the payment is EXPIRED.
const PageLifetime = 10 * time.Minute

// The statuses of a web payment, in OM's words (research notes; the
// integration memo of testdata/SOURCES.md): INITIATED until its page is
// opened, PENDING after, ending SUCCESS, FAILED or EXPIRED.
const (
	omInitiated = "INITIATED"
	omPending   = "PENDING"
	omSuccess   = "SUCCESS"
	omFailed    = "FAILED"
	omExpired   = "EXPIRED"
)

// simPayment is OM's own of a web payment.
type simPayment struct {
	notifToken, orderID  string
	amount               int64
	currency             string
	returnURL, cancelURL string
	notifURL             string
	txnID                string
}

var (
	simOrderIDRE  = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,30}$`)
	simCurrencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// ready sets the book to OM's lifecycle on the first request: INITIATED,
// PENDING once the page is opened (or the payment never ends), then
// SUCCESS or FAILED, notified, or EXPIRED, not notified.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simPayment]{
			Pending: omInitiated, Steps: []string{omPending}, Succeeded: omSuccess, Failed: omFailed,
			Finals: []string{omExpired}, Stuck: omPending,
			Outcome: simOutcome, End: s.end, Notify: simNotification,
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// Payments counts the web payments the simulator created: each is a page
// where money can be paid.
func (s *Simulator) Payments() int {
	return len(s.Find(func(*sim.Movement[simPayment]) bool { return true }))
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
	s.ready()
	s.expire()
	if strings.HasPrefix(r.URL.Path, "/pay/") {
		s.page(w, r, strings.TrimPrefix(r.URL.Path, "/pay/"))
		return
	}
	webpay, status := fmt.Sprintf(webpayPath, s.country()), fmt.Sprintf(statusPath, s.country())
	if !strings.HasPrefix(r.URL.Path, "/_sim/") {
		// The OAuth endpoint, unknown paths and methods: counted, never
		// faulted.
		switch {
		case r.URL.Path == tokenPath:
			s.Count()
			s.issueToken(w, r)
			return
		case r.URL.Path != webpay && r.URL.Path != status:
			s.Count()
			refuse(w, http.StatusNotFound, 60, "Resource not found", "The requested URI or the requested resource does not exist.")
			return
		case r.Method != http.MethodPost:
			s.Count()
			refuse(w, http.StatusMethodNotAllowed, 61, "Method not allowed", "The requested method is not allowed on this resource.")
			return
		}
	}
	faulted := r
	if r.URL.Path == status {
		// A status read, not an initiation, though a POST.
		faulted = r.Clone(r.Context())
		faulted.Method = http.MethodGet
	}
	if s.Intercept(w, faulted) {
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
		s.accept(w, r, simPayment{orderID: p.OrderID, amount: amount, currency: p.Currency, returnURL: p.ReturnURL,
			cancelURL: p.CancelURL, notifURL: p.NotifURL})
	}
}

// accept records a web payment, unless its order_id was used already, and
// accept records a web payment, unless its order_id was used already, and
// answers OM's 201.
func (s *Simulator) accept(w http.ResponseWriter, r *http.Request, p simPayment) {
	b := make([]byte, 24)
	rand.Read(b)
	token := "v1" + hex.EncodeToString(b[:16])
	p.notifToken = hex.EncodeToString(b[16:])
	if _, added := s.Add(&sim.Movement[simPayment]{ID: token, Data: p}, p.orderID); !added {
		badRequest(w, "Duplicate order_id "+p.orderID)
		return
	}
	sim.Reply(w, http.StatusCreated, map[string]any{"status": http.StatusCreated, "message": "OK", "pay_token": token,
		"payment_url": "http://" + r.Host + "/pay/" + token, "notif_token": p.notifToken})
}

// status is POST .../transactionstatus: the payment of a pay_token, whose
// order_id and amount must be the web payment's.
func (s *Simulator) status(w http.ResponseWriter, r *http.Request) {
	q, ok := decode(w, r)
	if !ok {
		return
	}
	amount, _ := strconv.ParseInt(q.Amount.String(), 10, 64)
	m, found := s.View(q.PayToken)
	if !found || m.ID != q.PayToken || m.Data.orderID != q.OrderID || m.Data.amount != amount {
		badRequest(w, "No transaction with this pay_token, order_id and amount")
		return
	}
	sim.Reply(w, http.StatusCreated, map[string]string{"status": m.Status, "order_id": m.Data.orderID, "txnid": m.Data.txnID})
}

// expire ends the payments left alone past PageLifetime, as EXPIRED.
func (s *Simulator) expire() {
	for _, m := range s.Find(func(m *sim.Movement[simPayment]) bool {
		return (m.Status == omInitiated || m.Status == omPending) && time.Since(m.Created) > PageLifetime
	}) {
		s.Settle(m.ID, omExpired)
	}
}

// page is the payment page, GET /pay/{pay_token}: the customer pays there
// (POST do=pay, with the number typed in msisdn, if any) or cancels (POST
// do=cancel), then goes back to return_url or cancel_url.
func (s *Simulator) page(w http.ResponseWriter, r *http.Request, token string) {
	found := s.Update(token, func(m *sim.Movement[simPayment]) {
		if m.Status == omInitiated && r.Method != http.MethodPost {
			m.Status = omPending
		}
	})
	m, _ := s.View(token)
	if !found || m.ID != token {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if m.Status != omPending {
			fmt.Fprintf(w, `<!doctype html><title>Orange Money (simulated)</title><p id="sim-ended">This payment is %s.</p>`, html.EscapeString(m.Status))
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Orange Money (simulated)</title><h1>Pay %d %s to the merchant</h1>
<form method="post" action="/pay/%s"><label>Orange Money number <input name="msisdn" id="sim-msisdn"></label>
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="cancel" id="sim-cancel">Cancel</button></form>`,
			m.Data.amount, html.EscapeString(m.Data.currency), url.PathEscape(token))
		return
	}
	if r.FormValue("do") == "cancel" {
		s.Settle(token, omFailed)
	} else {
		payer := strings.TrimSpace(r.FormValue("msisdn"))
		s.Update(token, func(m *sim.Movement[simPayment]) {
			if !s.Final(m.Status) {
				m.Phone = payer
			}
		})
		s.Settle(token, "")
	}
	m, _ = s.View(token)
	back := m.Data.cancelURL
	switch m.Status {
	case omInitiated, omPending:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `<!doctype html><title>Orange Money (simulated)</title><p id="sim-processing">Payment processing…</p>`)
		return
	case omSuccess:
		back = m.Data.returnURL
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// simOutcome is how a payment ends when nothing says how: as the number
// typed on the page asks (refused or failing: FAILED; lost: it stays
// PENDING), else SUCCESS.
func simOutcome(m *sim.Movement[simPayment]) (string, bool) {
	refused, fails, stuck := sim.Outcome(m.Phone)
	if refused || fails {
		return omFailed, false
	}
	return "", stuck
}

// end gives a paid payment its txnid.
func (s *Simulator) end(m *sim.Movement[simPayment]) {
	if m.Status == omSuccess {
		now := time.Now()
		m.Data.txnID = fmt.Sprintf("MP%s.%04d.S%05d", now.Format("060102"), now.Hour()*100+now.Minute(), s.seq.Add(1))
	}
}

// simNotification is what OM POSTs to the payment's notif_url: {status,
// notif_token, txnid}, claiming status when given, else its own end
// (SUCCESS or FAILED; none for a payment not ended or EXPIRED).
func simNotification(m *sim.Movement[simPayment], claim string) sim.Note {
	status := m.Status
	if claim != "" {
		status = claim
	} else if status != omSuccess && status != omFailed {
		return sim.Note{}
	}
	b, _ := json.Marshal(map[string]string{"status": status, "notif_token": m.Data.notifToken, "txnid": m.Data.txnID})
	return sim.Note{URL: m.Data.notifURL, Body: b}
}
