package wave

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for Wave's Checkout and Payout APIs in tests and on
// a developer's machine, for one XOF wallet: bearer auth (401 with Wave's
// codes), input checks (400 request-validation-error, Wave's {code,
// message} shape), checkout sessions with their launch page at GET
// /c/{id} (the wave_launch_url, on the simulator's own host), reads by id
// and searches by client_reference ({"result": [...]}), and payouts that
// honour the idempotency-key (the same key answers the same payout, never
// a second one; another request under it is 409 idempotency-mismatch).
//
// On the launch page the customer pays (with the Wave number typed there,
// if any) or cancels, and goes back to success_url or error_url. The
// payer's or the recipient's number decides the outcome
// (sim.Outcome):
//
//	...0039  a payment fails; a payout is refused (400 invalid-wallet)
//	...0029  a payment fails; a payout fails once settled
//	...0049  a payment fails for the payer's balance; a payout is refused
//	         (400 insufficient-funds): the wallet lacks the funds
//	...0129  never settles, no webhook (a lost payment, for the reconciler)
//	other    succeeds (a session paid without a number too)
//
// A session or payout settles after SettleAfter (a session as if paid
// without a number), on the page, or on POST /_sim/settle/{id or
// client_reference}[?status=succeeded|cancelled|expired for a session,
// succeeded|failed|reversed for a payout]. A session's end is POSTed to
// CallbackURL as checkout.session.completed or
// checkout.session.payment_failed, signed (Wave-Signature) with
// WebhookSecret when set; payouts send none (Wave documents no payout
// event). POST /_sim/callback/{session id or client_reference}[?status=]
// sends a session's webhook again, claiming payment_status status when
// given; POST /_sim/fault injects faults into the API.
type Simulator struct {
	APIKey        string
	WebhookSecret string        // signs the webhooks; none: sent unsigned
	CallbackURL   string        // the account's webhook URL
	SettleAfter   time.Duration // 0: only the page or the control call settles

	mu       sync.Mutex
	sessions map[string]*simSession // by id
	payouts  map[string]*simPayout  // by id
	keys     map[string]*simPayout  // by idempotency-key
	seq      int                    // ids, transaction ids and event ids
	calls    int
	paid     int // payouts created: money sent
	faults   sim.Faults
}

// SessionLifetime is how long a simulated checkout session stays open, as
// Wave's (when_expires, 30 minutes after when_created in a webhook Wave sent).
const SessionLifetime = 30 * time.Minute

type simError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type simSession struct {
	seq                           int
	id, amount, currency          string
	successURL, errorURL, launch  string
	clientReference               string
	checkoutStatus, paymentStatus string
	transactionID                 string
	payer                         string // the Wave number typed on the page
	lastError                     *simError
	created, expires, completed   time.Time
}

type simPayout struct {
	seq                           int
	id, key                       string
	currency, amount, fee         string
	mobile, name, clientReference string
	paymentReason, status         string
	errCode, errMessage           string
	created                       time.Time
}

var (
	amountRE = regexp.MustCompile(`^[1-9][0-9]{0,14}$`)   // XOF: whole units, as a string
	mobileRE = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`) // E.164
)

// Calls counts the API requests the simulator answered (the control calls
// and the launch page aside).
func (s *Simulator) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Payouts counts the payouts the simulator created (one per
// idempotency-key): each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paid
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/c/"):
		s.page(w, r, strings.TrimPrefix(r.URL.Path, "/c/"))
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		sim.ServeSimControl(w, r, &s.faults, s.settle, s.resend)
		return
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.faults.Apply(w, r) {
		return
	}
	switch auth := r.Header.Get("Authorization"); {
	case auth == "":
		refuse(w, http.StatusUnauthorized, "missing-auth-header", "Your request should include an HTTP auth header.")
		return
	case auth != "Bearer "+s.APIKey || s.APIKey == "":
		refuse(w, http.StatusUnauthorized, "no-matching-api-key", "The key you provided doesn't exist in our system.")
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/checkout/sessions":
		s.createSession(w, r)
	case r.Method == http.MethodGet && path == "/v1/checkout/sessions/search":
		s.searchSessions(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/checkout/sessions/"):
		s.getSession(w, strings.TrimPrefix(path, "/v1/checkout/sessions/"))
	case r.Method == http.MethodPost && path == "/v1/payout":
		s.createPayout(w, r)
	case r.Method == http.MethodGet && path == "/v1/payouts/search":
		s.searchPayouts(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/payout/"):
		s.getPayout(w, strings.TrimPrefix(path, "/v1/payout/"))
	default:
		refuse(w, http.StatusNotFound, "not-found", "No such endpoint.")
	}
}

// refuse answers an error in Wave's shape.
func refuse(w http.ResponseWriter, status int, code, message string) {
	sim.Reply(w, status, map[string]any{"code": code, "message": message})
}

// invalid answers a request Wave would not accept.
func invalid(w http.ResponseWriter, field, msg string) {
	sim.Reply(w, http.StatusBadRequest, map[string]any{"code": "request-validation-error", "message": "Request invalid: " + field + " " + msg,
		"details": []map[string]any{{"loc": []string{field}, "msg": msg}}})
}

func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// nextSeq numbers ids and events; s.mu is held.
func (s *Simulator) nextSeq() int {
	if s.sessions == nil {
		s.sessions, s.payouts, s.keys = map[string]*simSession{}, map[string]*simPayout{}, map[string]*simPayout{}
	}
	s.seq++
	return s.seq
}

// createSession is POST /v1/checkout/sessions.
func (s *Simulator) createSession(w http.ResponseWriter, r *http.Request) {
	var req checkoutRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		invalid(w, "body", "is not the JSON of a checkout session (amount is a string)")
		return
	}
	switch {
	case !amountRE.MatchString(req.Amount):
		invalid(w, "amount", "must be a positive whole number of XOF, as a string")
	case req.Currency != "XOF":
		invalid(w, "currency", "is not the wallet's currency (XOF)")
	case !webURL(req.SuccessURL):
		invalid(w, "success_url", "must be an absolute URL")
	case !webURL(req.ErrorURL):
		invalid(w, "error_url", "must be an absolute URL")
	case len(req.ClientReference) > 255:
		invalid(w, "client_reference", "is longer than 255 characters")
	default:
		s.mu.Lock()
		n, now := s.nextSeq(), time.Now().UTC()
		ss := &simSession{seq: n, id: fmt.Sprintf("cos-sim%08d", n), amount: req.Amount, currency: req.Currency,
			successURL: req.SuccessURL, errorURL: req.ErrorURL, clientReference: req.ClientReference,
			checkoutStatus: "open", paymentStatus: "processing", created: now, expires: now.Add(SessionLifetime)}
		ss.launch = "http://" + r.Host + "/c/" + ss.id
		s.sessions[ss.id] = ss
		obj := s.sessionObject(ss)
		s.mu.Unlock()
		if s.SettleAfter > 0 {
			time.AfterFunc(s.SettleAfter, func() { s.settle(ss.id, "") })
		}
		sim.Reply(w, http.StatusOK, obj)
	}
}

// sessionObject is a session as Wave shows it; s.mu is held.
func (s *Simulator) sessionObject(ss *simSession) map[string]any {
	s.expire(ss)
	o := map[string]any{"id": ss.id, "amount": ss.amount, "currency": ss.currency, "business_name": "Cauri Simulator",
		"checkout_status": ss.checkoutStatus, "payment_status": ss.paymentStatus, "client_reference": nullable(ss.clientReference),
		"success_url": ss.successURL, "error_url": ss.errorURL, "wave_launch_url": ss.launch,
		"transaction_id": nullable(ss.transactionID), "last_payment_error": nil,
		"when_created": ss.created.Format(time.RFC3339), "when_expires": ss.expires.Format(time.RFC3339), "when_completed": nil}
	if ss.lastError != nil {
		o["last_payment_error"] = *ss.lastError
	}
	if !ss.completed.IsZero() {
		o["when_completed"] = ss.completed.Format(time.RFC3339)
	}
	return o
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// expire closes an open session past its when_expires; s.mu is held.
func (s *Simulator) expire(ss *simSession) {
	if ss.checkoutStatus == "open" && ss.paymentStatus == "processing" && time.Now().After(ss.expires) {
		ss.checkoutStatus, ss.completed = "expired", ss.expires
	}
}

func (s *Simulator) getSession(w http.ResponseWriter, id string) {
	s.answerOne(w, func() map[string]any {
		if ss := s.sessions[id]; ss != nil {
			return s.sessionObject(ss)
		}
		return nil
	}, "checkout-session-not-found", "No checkout session with this id.")
}

func (s *Simulator) searchSessions(w http.ResponseWriter, r *http.Request) {
	simSearch(s, w, r, s.sessions, func(ss *simSession) (string, int) { return ss.clientReference, ss.seq }, s.sessionObject)
}

// answerOne answers the object find returns (read under s.mu), or 404
// with Wave's code when there is none.
func (s *Simulator) answerOne(w http.ResponseWriter, find func() map[string]any, code, message string) {
	s.mu.Lock()
	obj := find()
	s.mu.Unlock()
	if obj == nil {
		refuse(w, http.StatusNotFound, code, message)
		return
	}
	sim.Reply(w, http.StatusOK, obj)
}

// simSearch answers Wave's search by client_reference over all (sessions or
// payouts), oldest first, as {"result": [...]}.
func simSearch[T any](s *Simulator, w http.ResponseWriter, r *http.Request, all map[string]*T, key func(*T) (ref string, seq int), object func(*T) map[string]any) {
	ref := r.URL.Query().Get("client_reference")
	if ref == "" {
		invalid(w, "client_reference", "is required")
		return
	}
	s.mu.Lock()
	var found []*T
	for _, x := range all {
		if r, _ := key(x); r == ref {
			found = append(found, x)
		}
	}
	sort.Slice(found, func(i, j int) bool { _, a := key(found[i]); _, b := key(found[j]); return a < b })
	result := []map[string]any{}
	for _, x := range found {
		result = append(result, object(x))
	}
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]any{"result": result})
}

// lookupSession finds a session by its id or our reference; s.mu is held.
func (s *Simulator) lookupSession(key string) *simSession {
	if ss := s.sessions[key]; ss != nil {
		return ss
	}
	var last *simSession
	for _, ss := range s.sessions {
		if ss.clientReference == key && key != "" && (last == nil || ss.seq > last.seq) {
			last = ss
		}
	}
	return last
}

// page is Wave's launch page, GET /c/{id}: the customer pays there (POST
// do=pay, with the Wave number typed in mobile, if any) or cancels (POST
// do=decline), then goes back to success_url or error_url.
func (s *Simulator) page(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	ss := s.sessions[id]
	var amount, currency string
	if ss != nil {
		s.expire(ss)
		amount, currency = ss.amount, ss.currency
	}
	s.mu.Unlock()
	if ss == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Wave (simulated)</title><h1>Pay %s %s to Cauri Simulator</h1>
<form method="post" action="/c/%s"><label>Wave number <input name="mobile" id="sim-mobile"></label>
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="decline" id="sim-decline">Cancel</button></form>`,
			html.EscapeString(amount), html.EscapeString(currency), url.PathEscape(id))
		return
	}
	status := ""
	if r.FormValue("do") == "decline" {
		status = "cancelled"
	}
	mobile := strings.TrimSpace(r.FormValue("mobile"))
	s.settleSession(id, status, &mobile)
	s.mu.Lock()
	paid, waiting, back := ss.paymentStatus == "succeeded", ss.paymentStatus == "processing" && ss.checkoutStatus == "open", ss.errorURL
	if paid {
		back = ss.successURL
	}
	s.mu.Unlock()
	if waiting {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `<!doctype html><title>Wave (simulated)</title><p id="sim-processing">Payment processing…</p>`)
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// settle ends a session or a payout (by id or our reference) now.
func (s *Simulator) settle(key, status string) bool {
	return s.settleSession(key, status, nil) || s.settlePayout(key, status)
}

// settleSession ends an open session as status says (succeeded, cancelled,
// expired) or, without one, as the payer's number asks (payer, when given,
// is the number typed on the page), and sends its webhook. It reports
// whether the session exists.
func (s *Simulator) settleSession(key, status string, payer *string) bool {
	s.mu.Lock()
	ss := s.lookupSession(key)
	if ss == nil {
		s.mu.Unlock()
		return false
	}
	if payer != nil {
		ss.payer = *payer
	}
	var body []byte
	if event := s.end(ss, status); event != "" {
		body = s.event(ss, event, "")
	}
	s.mu.Unlock()
	s.post(body)
	return true
}

// end moves an open session to its end and names the webhook it sends
// ("" for none); s.mu is held.
func (s *Simulator) end(ss *simSession, status string) string {
	s.expire(ss)
	if ss.checkoutStatus != "open" || ss.paymentStatus != "processing" {
		return ""
	}
	refused, fails, stuck := sim.Outcome(ss.payer)
	now := time.Now().UTC()
	switch {
	case status == "expired":
		ss.checkoutStatus, ss.completed = "expired", now
		return ""
	case status == "" && stuck:
		return ""
	case status == "succeeded" || status == "" && !refused && !fails:
		ss.paymentStatus, ss.checkoutStatus, ss.completed = "succeeded", "complete", now
		ss.transactionID = fmt.Sprintf("TSIM%010d", s.nextSeq())
		return "checkout.session.completed"
	}
	ss.paymentStatus, ss.checkoutStatus, ss.completed = "cancelled", "complete", now
	switch {
	case status != "":
		ss.lastError = &simError{"payment-cancelled", "The payer cancelled the payment."}
	case sim.LowBalance(ss.payer):
		ss.lastError = &simError{"insufficient-funds", "The payer's balance is too low."}
	default:
		ss.lastError = &simError{"payment-failed", "The payment failed."}
	}
	return "checkout.session.payment_failed"
}

// event is a webhook's body about ss, claiming payment_status status when
// given; s.mu is held.
func (s *Simulator) event(ss *simSession, kind, status string) []byte {
	data := s.sessionObject(ss)
	if status != "" {
		data["payment_status"] = status
	}
	body, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("AE_sim_%08d", s.nextSeq()), "type": kind, "data": data})
	return body
}

// post sends a webhook to CallbackURL, signed when the simulator has a
// signing secret.
func (s *Simulator) post(body []byte) {
	if s.CallbackURL == "" || body == nil {
		return
	}
	h := http.Header{}
	if s.WebhookSecret != "" {
		h.Set("Wave-Signature", Sign(s.WebhookSecret, time.Now().Unix(), body))
	}
	sim.PostCallback(s.CallbackURL, body, h)
}

// resend sends a session's webhook again: the one its end sent, or one
// claiming payment_status status (succeeded: completed; other: failed).
func (s *Simulator) resend(key, status string) bool {
	s.mu.Lock()
	ss := s.lookupSession(key)
	if ss == nil {
		s.mu.Unlock()
		return false
	}
	kind := "checkout.session.payment_failed"
	if status == "succeeded" || status == "" && ss.paymentStatus == "succeeded" {
		kind = "checkout.session.completed"
	}
	body := s.event(ss, kind, status)
	s.mu.Unlock()
	s.post(body)
	return true
}

// createPayout is POST /v1/payout, under its idempotency-key.
func (s *Simulator) createPayout(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	var req payoutRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		invalid(w, "body", "is not the JSON of a payout (receive_amount is a string)")
		return
	}
	switch {
	case key == "":
		invalid(w, "idempotency-key", "header is required")
		return
	case req.Currency != "XOF":
		invalid(w, "currency", "is not the wallet's currency (XOF)")
		return
	case !amountRE.MatchString(req.ReceiveAmount):
		invalid(w, "receive_amount", "must be a positive whole number of XOF, as a string")
		return
	case !mobileRE.MatchString(req.Mobile):
		invalid(w, "mobile", "must be a number in E.164 format")
		return
	case len(req.ClientReference) > 255:
		invalid(w, "client_reference", "is longer than 255 characters")
		return
	}
	s.mu.Lock()
	if p := s.keys[key]; p != nil {
		same := p.currency == req.Currency && p.amount == req.ReceiveAmount && p.mobile == req.Mobile && p.clientReference == req.ClientReference
		obj := payoutObject(p)
		s.mu.Unlock()
		if !same {
			refuse(w, http.StatusConflict, "idempotency-mismatch", "This idempotency-key was used for another payout.")
			return
		}
		sim.Reply(w, http.StatusOK, obj)
		return
	}
	if refused, _, _ := sim.Outcome(req.Mobile); refused {
		s.mu.Unlock()
		refuse(w, http.StatusBadRequest, "invalid-wallet", "The recipient has no Wave account that can receive this payout.")
		return
	}
	if sim.LowBalance(req.Mobile) {
		s.mu.Unlock()
		refuse(w, http.StatusBadRequest, "insufficient-funds", "The wallet does not have enough funds for this payout.")
		return
	}
	amount, _ := strconv.ParseInt(req.ReceiveAmount, 10, 64)
	n := s.nextSeq()
	p := &simPayout{seq: n, id: fmt.Sprintf("pt-sim%08d", n), key: key, currency: req.Currency, amount: req.ReceiveAmount,
		fee: strconv.FormatInt((amount+99)/100, 10), mobile: req.Mobile, name: req.Name, clientReference: req.ClientReference,
		paymentReason: req.PaymentReason, status: "processing", created: time.Now().UTC()}
	s.payouts[p.id], s.keys[key] = p, p
	s.paid++
	obj := payoutObject(p)
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settlePayout(p.id, "") })
	}
	sim.Reply(w, http.StatusOK, obj)
}

// payoutObject is a payout as Wave shows it; s.mu is held.
func payoutObject(p *simPayout) map[string]any {
	o := map[string]any{"id": p.id, "currency": p.currency, "receive_amount": p.amount, "fee": p.fee, "mobile": p.mobile,
		"name": nullable(p.name), "client_reference": nullable(p.clientReference), "payment_reason": nullable(p.paymentReason),
		"status": p.status, "timestamp": p.created.Format(time.RFC3339)}
	if p.errCode != "" {
		o["payout_error"] = map[string]string{"error_code": p.errCode, "error_message": p.errMessage}
	}
	return o
}

func (s *Simulator) getPayout(w http.ResponseWriter, id string) {
	s.answerOne(w, func() map[string]any {
		if p := s.payouts[id]; p != nil {
			return payoutObject(p)
		}
		return nil
	}, "payout-not-found", "No payout with this id.")
}

func (s *Simulator) searchPayouts(w http.ResponseWriter, r *http.Request) {
	simSearch(s, w, r, s.payouts, func(p *simPayout) (string, int) { return p.clientReference, p.seq }, payoutObject)
}

// settlePayout ends a processing payout (by id, our reference or its
// idempotency-key) as status says (succeeded, failed; reversed takes back
// a succeeded one) or as the recipient's number asks. It reports whether
// the payout exists.
func (s *Simulator) settlePayout(key, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.payouts[key]
	if p == nil {
		p = s.keys[key]
	}
	for _, q := range s.payouts {
		if p == nil && q.clientReference == key && key != "" {
			p = q
		}
	}
	if p == nil {
		return false
	}
	_, fails, stuck := sim.Outcome(p.mobile)
	switch {
	case status == "reversed":
		if p.status == "succeeded" {
			p.status = "reversed"
		}
	case p.status != "processing", status == "" && stuck:
	case status == "failed" || status == "" && fails:
		p.status, p.errCode, p.errMessage = "failed", "recipient-account-blocked", "The recipient's account cannot receive money."
	default:
		p.status = "succeeded"
	}
	return true
}
