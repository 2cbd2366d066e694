package wave

import (
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

// Simulator stands in for Wave's Checkout and Payout APIs in tests and on
// a developer's machine, for one XOF wallet: bearer auth (401 with Wave's
// codes), input checks (400 request-validation-error, Wave's {code,
// message} shape), checkout sessions with their launch page at GET
// /c/{id} (the wave_launch_url, on the simulator's own host), reads by id
// and searches by client_reference ({"result": [...]}), a session expired
// on request (POST /v1/checkout/sessions/{id}/expire), a paid session
// refunded whole (POST /v1/checkout/sessions/{id}/refund), payouts that honour
// the idempotency-key (the same key answers the same payout, never a
// second one; another request under it is 409 idempotency-mismatch) and
// their reversal (POST /v1/payout/{id}/reverse).
//
// On the launch page the customer pays (with the Wave number typed there,
// if any) or cancels, and goes back to success_url or error_url. A session
// created with restrict_payer_mobile fails (payer-mobile-mismatch) when
// another number pays it. The payer's or the recipient's number decides
// the outcome (sim.Outcome):
//
//	...0039  a payment fails; a payout is refused (400 invalid-wallet)
//	...0029  a payment fails; a payout fails once settled
//	...0049  a payment fails for the payer's balance; a payout is refused
//	         (400 insufficient-funds): the wallet lacks the funds
//	...0129  never settles, no webhook (a lost payment, for the reconciler)
//	other    succeeds (a session paid without a number too)
//
// A session or payout settles after SettleAfter (a session as if paid
// without a number), on the page, or on POST /_sim/settle/{id, client_reference
// or a payout's idempotency-key}[?status=succeeded|cancelled|expired for a
// session, succeeded|failed|reversed for a payout; reversed takes back a
// succeeded payout, and would a succeeded session too: the book does not
// tell them apart]. A session's end is POSTed to CallbackURL as
// checkout.session.completed or checkout.session.payment_failed, signed
// (Wave-Signature) with WebhookSecret when set; an expired session and
// payouts send none (Wave documents no such event). POST
// /_sim/callback/{session id or client_reference}[?status=] sends a
// session's webhook again, claiming payment_status status when given; POST
// /_sim/fault injects faults into the API.
type Simulator struct {
	APIKey        string
	WebhookSecret string        // signs the webhooks; none: sent unsigned
	CallbackURL   string        // the account's webhook URL
	SettleAfter   time.Duration // 0: only the page or the control call settles

	// Book holds the checkout sessions and the payouts (Payout), by
	// Wave's id; a session is found by its client_reference too, a payout
	// by its idempotency-key and client_reference.
	sim.Book[simData]
	once    sync.Once
	seq     atomic.Int64 // ids, transaction ids and event ids
	refunds atomic.Int64 // sessions refunded (Refunds)
}

// Refunds is how many checkout sessions were refunded: a refund asked
// again of a refunded session is not counted again.
func (s *Simulator) Refunds() int { return int(s.refunds.Load()) }

// SessionLifetime is how long a simulated checkout session stays open, as
// Wave's (when_expires, 30 minutes after when_created in a webhook Wave sent).
const SessionLifetime = 30 * time.Minute

// ReversalWindow is how long after it was sent a payout can be reversed
// (three days: docs.wave.com/payout, as public integrations quote it).
const ReversalWindow = 72 * time.Hour

// The statuses, in Wave's words: a session's payment_status (processing,
// succeeded, cancelled; expired is its checkout_status) and a payout's
// status (processing, succeeded, failed, reversed).
const (
	simProcessing = "processing"
	simSucceeded  = "succeeded"
	simFailed     = "failed"    // a payout's
	simCancelled  = "cancelled" // a session's
	simExpired    = "expired"   // a session's
	simReversed   = "reversed"  // a payout's, after succeeded
)

type simError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// simData is Wave's own of a checkout session or a payout.
type simData struct {
	amount, currency, clientReference string
	// a session's
	successURL, errorURL, launch string
	restrictPayer, transactionID string
	refunded                     bool // a paid session given back (refundSession)
	lastError                    *simError
	expires                      time.Time
	// a payout's
	key, fee, name, paymentReason string
	errCode, errMessage           string
}

var (
	amountRE = regexp.MustCompile(`^[1-9][0-9]{0,14}$`)   // XOF: whole units, as a string
	mobileRE = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`) // E.164
)

// ready sets the book to Wave's lifecycle on the first request: a session
// or payout is processing, then succeeded, or cancelled (a session),
// expired (a session), failed (a payout), with a webhook for a session's
// payment; a succeeded payout may be reversed after.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simData]{
			Pending: simProcessing, Succeeded: simSucceeded, Failed: simFailed,
			Finals: []string{simCancelled, simExpired}, After: map[string][]string{simSucceeded: {simReversed}},
			Outcome: simOutcome, End: s.end, Notify: s.webhook,
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	if strings.HasPrefix(r.URL.Path, "/c/") {
		s.page(w, r, strings.TrimPrefix(r.URL.Path, "/c/"))
		return
	}
	if s.Intercept(w, r) {
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
	id, action, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(path, "/v1/checkout/sessions/"), "/v1/payout/"), "/")
	switch {
	case r.Method == http.MethodPost && path == "/v1/checkout/sessions":
		s.createSession(w, r)
	case r.Method == http.MethodGet && path == "/v1/checkout/sessions/search":
		s.search(w, r, false)
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/v1/checkout/sessions/") && action == "expire":
		s.expireSession(w, id)
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/v1/checkout/sessions/") && action == "refund":
		s.refundSession(w, id)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/checkout/sessions/") && action == "" && id != "":
		s.answerOne(w, id, false, "checkout-session-not-found", "No checkout session with this id.")
	case r.Method == http.MethodPost && path == "/v1/payout":
		s.createPayout(w, r)
	case r.Method == http.MethodGet && path == "/v1/payouts/search":
		s.search(w, r, true)
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/v1/payout/") && action == "reverse":
		s.reversePayout(w, id)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/payout/") && action == "" && id != "":
		s.answerOne(w, id, true, "payout-not-found", "No payout with this id.")
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

// createSession is POST /v1/checkout/sessions.
func (s *Simulator) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		checkoutRequest
		// A session only this Wave account may pay: docs.wave.com/checkout
		// (apis.io's summary: "restrict_payer_mobile for phone-locked
		// payments"; 0xc007b/wave-api-client src/api/checkout/types.ts).
		RestrictPayerMobile string `json:"restrict_payer_mobile"`
	}
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
	case req.RestrictPayerMobile != "" && !mobileRE.MatchString(req.RestrictPayerMobile):
		invalid(w, "restrict_payer_mobile", "must be a number in E.164 format")
	default:
		now := time.Now().UTC()
		id := fmt.Sprintf("cos-sim%08d", s.seq.Add(1))
		m := &sim.Movement[simData]{ID: id, Created: now, Data: simData{amount: req.Amount, currency: req.Currency,
			successURL: req.SuccessURL, errorURL: req.ErrorURL, clientReference: req.ClientReference,
			restrictPayer: req.RestrictPayerMobile, launch: "http://" + r.Host + "/c/" + id, expires: now.Add(SessionLifetime)}}
		s.Add(m)
		if req.ClientReference != "" {
			s.Alias(req.ClientReference, id) // the latest session of a reference
		}
		v, _ := s.View(id)
		sim.Reply(w, http.StatusOK, sessionObject(&v))
	}
}

// sessionObject is a session as Wave shows it.
func sessionObject(m *sim.Movement[simData]) map[string]any {
	d := &m.Data
	checkout, payment := "complete", m.Status
	switch m.Status {
	case simProcessing:
		checkout = "open"
	case simExpired:
		checkout, payment = simExpired, simProcessing
	}
	o := map[string]any{"id": m.ID, "amount": d.amount, "currency": d.currency, "business_name": "Cauri Simulator",
		"checkout_status": checkout, "payment_status": payment, "client_reference": nullable(d.clientReference),
		"success_url": d.successURL, "error_url": d.errorURL, "wave_launch_url": d.launch,
		"transaction_id": nullable(d.transactionID), "last_payment_error": nil,
		"when_created": m.Created.Format(time.RFC3339), "when_expires": d.expires.Format(time.RFC3339), "when_completed": nil}
	if d.restrictPayer != "" {
		o["restrict_payer_mobile"] = d.restrictPayer
	}
	if d.lastError != nil {
		o["last_payment_error"] = *d.lastError
	}
	if !m.Ended.IsZero() {
		o["when_completed"] = m.Ended.UTC().Format(time.RFC3339)
	}
	return o
}

// payoutObject is a payout as Wave shows it.
func payoutObject(m *sim.Movement[simData]) map[string]any {
	d := &m.Data
	o := map[string]any{"id": m.ID, "currency": d.currency, "receive_amount": d.amount, "fee": d.fee, "mobile": m.Phone,
		"name": nullable(d.name), "client_reference": nullable(d.clientReference), "payment_reason": nullable(d.paymentReason),
		"status": m.Status, "timestamp": m.Created.UTC().Format(time.RFC3339)}
	if d.errCode != "" {
		o["payout_error"] = map[string]string{"error_code": d.errCode, "error_message": d.errMessage}
	}
	return o
}

func object(m *sim.Movement[simData]) map[string]any {
	if m.Payout {
		return payoutObject(m)
	}
	return sessionObject(m)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// expire closes the open sessions past their when_expires, as Wave's
// expire of their own: no webhook.
func (s *Simulator) expire() {
	now := time.Now()
	for _, m := range s.Find(func(m *sim.Movement[simData]) bool {
		return !m.Payout && m.Status == simProcessing && now.After(m.Data.expires)
	}) {
		s.Settle(m.ID, simExpired)
	}
}

// answerOne answers the session or payout of Wave's id, or 404 with
// Wave's code when there is none.
func (s *Simulator) answerOne(w http.ResponseWriter, id string, payout bool, code, message string) {
	s.expire()
	m, ok := s.View(id)
	if !ok || m.ID != id || m.Payout != payout {
		refuse(w, http.StatusNotFound, code, message)
		return
	}
	sim.Reply(w, http.StatusOK, object(&m))
}

// search answers Wave's search by client_reference over the sessions or
// the payouts, oldest first, as {"result": [...]}.
func (s *Simulator) search(w http.ResponseWriter, r *http.Request, payouts bool) {
	ref := r.URL.Query().Get("client_reference")
	if ref == "" {
		invalid(w, "client_reference", "is required")
		return
	}
	s.expire()
	result := []map[string]any{}
	for _, m := range s.Find(func(m *sim.Movement[simData]) bool { return m.Payout == payouts && m.Data.clientReference == ref }) {
		result = append(result, object(&m))
	}
	sim.Reply(w, http.StatusOK, map[string]any{"result": result})
}

// expireSession is POST /v1/checkout/sessions/{id}/expire: an open
// session ends expired, answered with an empty body, as
// docs.wave.com/checkout lists the endpoint and 0xc007b/wave-api-client
// (src/api/checkout/index.ts, expireSession) reads it. A session already
// complete or expired is refused with the simulator's own code: Wave's
// was not found.
func (s *Simulator) expireSession(w http.ResponseWriter, id string) {
	s.expire()
	m, ok := s.View(id)
	switch {
	case !ok || m.ID != id || m.Payout:
		refuse(w, http.StatusNotFound, "checkout-session-not-found", "No checkout session with this id.")
	case m.Status != simProcessing:
		refuse(w, http.StatusConflict, "checkout-session-not-open", "Only an open checkout session can be expired.")
	default:
		s.Settle(id, simExpired)
		w.WriteHeader(http.StatusOK)
	}
}

// refundSession is POST /v1/checkout/sessions/{id}/refund, by the
// session's id, with no body (a whole refund: no amount), as Wave's
// endpoint list at docs.wave.com/checkout names it and several
// open-source Wave integrations (client libraries in TypeScript and PHP, a
// Wave simulator) implement it, which agree: a paid session is refunded
// at once, answered 200 with an empty body; asked again, 200 again without
// a second refund; a session not paid is refused 400
// checkout-refund-failed; an unknown id (a transaction's too) is 404
// checkout-session-not-found. The session keeps its payment_status (the
// sources do not agree on what Wave shows after a refund).
func (s *Simulator) refundSession(w http.ResponseWriter, id string) {
	s.expire()
	m, ok := s.View(id)
	if !ok || m.ID != id || m.Payout {
		refuse(w, http.StatusNotFound, "checkout-session-not-found", "No checkout session with this id.")
		return
	}
	refunded := false
	s.Update(id, func(m *sim.Movement[simData]) {
		if m.Status == simSucceeded {
			if !m.Data.refunded {
				s.refunds.Add(1)
			}
			m.Data.refunded, refunded = true, true
		}
	})
	if !refunded {
		refuse(w, http.StatusBadRequest, "checkout-refund-failed", "Only a succeeded checkout session can be refunded.")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// page is Wave's launch page, GET /c/{id}: the customer pays there (POST
// do=pay, with the Wave number typed in mobile, if any) or cancels (POST
// do=decline), then goes back to success_url or error_url.
func (s *Simulator) page(w http.ResponseWriter, r *http.Request, id string) {
	s.expire()
	m, ok := s.View(id)
	if !ok || m.ID != id || m.Payout {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Wave (simulated)</title><h1>Pay %s %s to Cauri Simulator</h1>
<form method="post" action="/c/%s"><label>Wave number <input name="mobile" id="sim-mobile"></label>
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="decline" id="sim-decline">Cancel</button></form>`,
			html.EscapeString(m.Data.amount), html.EscapeString(m.Data.currency), url.PathEscape(id))
		return
	}
	if r.FormValue("do") == "decline" {
		s.Settle(id, simCancelled)
	} else {
		mobile := strings.TrimSpace(r.FormValue("mobile"))
		s.Update(id, func(m *sim.Movement[simData]) {
			if m.Status == simProcessing {
				m.Phone = mobile
			}
		})
		s.Settle(id, "")
	}
	m, _ = s.View(id)
	back := m.Data.errorURL
	switch m.Status {
	case simProcessing:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `<!doctype html><title>Wave (simulated)</title><p id="sim-processing">Payment processing…</p>`)
		return
	case simSucceeded:
		back = m.Data.successURL
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// simOutcome is how a session or payout ends when nothing says how: by the
// payer's number typed on the page, or the recipient's. A failed payment
// gets its last_payment_error in Wave's codes (docs.wave.com/checkout's
// payment errors, as public integrations list them: insufficient-funds,
// payer-mobile-mismatch, payment-failure).
func simOutcome(m *sim.Movement[simData]) (string, bool) {
	refused, fails, stuck := sim.Outcome(m.Phone)
	switch {
	case m.Payout && fails:
		return simFailed, false
	case m.Payout:
		return "", stuck
	case m.Data.restrictPayer != "" && m.Phone != "" && m.Phone != m.Data.restrictPayer:
		m.Data.lastError = &simError{"payer-mobile-mismatch", "This checkout session can only be paid by another Wave account."}
	case stuck:
		return "", true
	case sim.LowBalance(m.Phone):
		m.Data.lastError = &simError{"insufficient-funds", "The payer's balance is too low."}
	case refused || fails:
		m.Data.lastError = &simError{"payment-failure", "The payment failed."}
	default:
		return "", false
	}
	return simCancelled, false
}

// end completes a session or payout as it ends: a paid session has its
// transaction id, a cancelled one its last_payment_error (cancelled by the
// payer unless its number said otherwise), a failed payout its
// payout_error. A session's failure is cancelled, a payout's failed.
func (s *Simulator) end(m *sim.Movement[simData]) {
	d := &m.Data
	switch {
	case m.Payout && (m.Status == simCancelled || m.Status == simExpired):
		m.Status = simFailed
	case !m.Payout && m.Status == simFailed:
		m.Status = simCancelled
	}
	switch {
	case m.Status == simSucceeded && !m.Payout:
		d.transactionID = fmt.Sprintf("TSIM%010d", s.seq.Add(1))
	case m.Status == simCancelled && d.lastError == nil:
		d.lastError = &simError{"payment-cancelled", "The payer cancelled the payment."}
	case m.Status == simExpired && time.Now().After(d.expires):
		m.Ended = d.expires
	case m.Status == simFailed && d.errCode == "":
		// recipient-account-blocked: one of the payout errors of
		// docs.wave.com/payout, as public integrations list them.
		d.errCode, d.errMessage = "recipient-account-blocked", "The recipient's account cannot receive money."
	}
}

// webhook is the event a session's end sends, or, with claim, one
// claiming that payment_status (succeeded: completed; other: failed). An
// open or expired session sends none of its own, nor does a payout.
func (s *Simulator) webhook(m *sim.Movement[simData], claim string) sim.Note {
	status := m.Status
	if claim != "" {
		status = claim
	}
	if m.Payout || s.CallbackURL == "" || status == simProcessing || status == simExpired {
		return sim.Note{}
	}
	kind := "checkout.session.payment_failed"
	if status == simSucceeded {
		kind = "checkout.session.completed"
	}
	data := sessionObject(m)
	if claim != "" {
		data["payment_status"] = claim
	}
	body, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("AE_sim_%08d", s.seq.Add(1)), "type": kind, "data": data})
	h := http.Header{}
	if s.WebhookSecret != "" {
		h.Set("Wave-Signature", Sign(s.WebhookSecret, time.Now().Unix(), body))
	}
	return sim.Note{URL: s.CallbackURL, Body: body, Header: h}
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
	byKey := "idempotency-key:" + key
	if old, ok := s.View(byKey); ok {
		s.answerKey(w, &old, req)
		return
	}
	if refused, _, _ := sim.Outcome(req.Mobile); refused {
		refuse(w, http.StatusBadRequest, "invalid-wallet", "The recipient has no Wave account that can receive this payout.")
		return
	}
	if sim.LowBalance(req.Mobile) {
		refuse(w, http.StatusBadRequest, "insufficient-funds", "The wallet does not have enough funds for this payout.")
		return
	}
	amount, _ := strconv.ParseInt(req.ReceiveAmount, 10, 64)
	m := &sim.Movement[simData]{ID: fmt.Sprintf("pt-sim%08d", s.seq.Add(1)), Payout: true, Phone: req.Mobile, Created: time.Now().UTC(),
		Data: simData{key: key, currency: req.Currency, amount: req.ReceiveAmount, fee: strconv.FormatInt((amount+99)/100, 10),
			name: req.Name, clientReference: req.ClientReference, paymentReason: req.PaymentReason}}
	if old, added := s.Add(m, byKey); !added { // the same key in between
		s.answerKey(w, old, req)
		return
	}
	s.Alias(key, m.ID)
	if req.ClientReference != "" {
		s.Alias(req.ClientReference, m.ID)
	}
	v, _ := s.View(m.ID)
	sim.Reply(w, http.StatusOK, payoutObject(&v))
}

// answerKey answers a payout request whose idempotency-key names old: the
// same payout if it is the same request, else 409.
func (s *Simulator) answerKey(w http.ResponseWriter, old *sim.Movement[simData], req payoutRequest) {
	v, _ := s.View(old.ID)
	d := &v.Data
	if d.currency != req.Currency || d.amount != req.ReceiveAmount || v.Phone != req.Mobile || d.clientReference != req.ClientReference {
		refuse(w, http.StatusConflict, "idempotency-mismatch", "This idempotency-key was used for another payout.")
		return
	}
	sim.Reply(w, http.StatusOK, payoutObject(&v))
}

// reversePayout is POST /v1/payout/{id}/reverse (docs.wave.com/payout
// lists it): a succeeded payout is taken back, within ReversalWindow
// (after it: 400 payout-reversal-time-limit-exceeded, a code of Wave's
// payout API as 0xc007b/wave-api-client src/common/types.ts lists it),
// answered with an empty body (the same client's reversePayout); again,
// the same. One not succeeded is refused with the simulator's own code.
func (s *Simulator) reversePayout(w http.ResponseWriter, id string) {
	m, ok := s.View(id)
	switch {
	case !ok || m.ID != id || !m.Payout:
		refuse(w, http.StatusNotFound, "payout-not-found", "No payout with this id.")
		return
	case m.Status == simSucceeded && time.Since(m.Created) > ReversalWindow:
		refuse(w, http.StatusBadRequest, "payout-reversal-time-limit-exceeded", "This payout is too old to be reversed.")
		return
	}
	s.Settle(id, simReversed)
	if m, _ = s.View(id); m.Status != simReversed {
		refuse(w, http.StatusConflict, "payout-not-reversible", "Only a succeeded payout can be reversed.")
		return
	}
	w.WriteHeader(http.StatusOK)
}
