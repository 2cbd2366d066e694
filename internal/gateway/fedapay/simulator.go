package fedapay

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

// Simulator stands in for FedaPay's transactions and payouts: bearer auth,
// input checks, a token per transaction, the push without a redirect
// (POST /{mode} under the API version, where FedaPay's SDKs post it; POST
// /transactions/{mode} is not an address it answers) and FedaPay's page at /_sim/pay/{id} (pay or
// decline, then back to callback_url); payouts created pending (POST
// /payouts) then sent (PUT /payouts/start); outcomes by the customer's or
// the recipient's number (sim.Outcome; a payout to ...0049 is
// refused at its start for the merchant's balance, one to ...0039 at its
// creation), settlement after SettleAfter or on POST /_sim/settle/{id or
// our reference}[?status=declined|failed|...], and the signed
// transaction.* or payout.* webhook to WebhookURL. POST
// /_sim/callback/{...}[?status=] sends it again (claiming status); POST
// /_sim/fault injects faults.
type Simulator struct {
	SecretKey     string
	WebhookSecret string
	WebhookURL    string
	SettleAfter   time.Duration

	mu      sync.Mutex
	txs     map[string]*simTx     // by FedaPay id
	outs    map[string]*simPayout // by FedaPay id
	tokens  map[string]string     // token -> id
	nextID  int64                 // transactions' and payouts' ids
	started int                   // payouts started: money sent
	faults  sim.Faults
}

type simTx struct {
	id                    int64
	reference             string // ours, from custom_metadata
	amount                int64
	currency, phone       string
	callbackURL           string
	status, lastErrorCode string
	sent                  bool // pushed to the phone or paid on the page
}

// modes are FedaPay's Mobile Money modes: the Node SDK's list
// (src/Transaction.ts AVAILABLE_MOBILE_MONEY) and the docs' modes without a
// redirect (docs.fedapay.com payment methods: sbin, mtn_open_gn). An
// unknown mode is no address at all.
var modes = map[string]bool{"mtn": true, "moov": true, "mtn_ci": true, "moov_tg": true, "mtn_open": true, "airtel_ne": true,
	"free_sn": true, "togocel": true, "mtn_ecw": true, "mtn_open_ci": true, "wave_direct_ci": true, "sbin": true, "mtn_open_gn": true}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		sim.Page{Settle: s.pagePaid, Declined: "declined", Return: s.returnTo}.Serve(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		sim.ServeSimControl(w, r, &s.faults, s.settle, s.resendWebhook)
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		sim.Reply(w, http.StatusUnauthorized, map[string]any{"message": "Invalid API key"})
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/payouts"); ok {
		s.servePayouts(w, r, rest)
		return
	}
	if mode := strings.TrimPrefix(r.URL.Path, "/"); r.Method == http.MethodPost && modes[mode] {
		s.send(w, r, mode) // POST /v1/{mode}, the SDKs' path
		return
	}
	rest, isTx := strings.CutPrefix(r.URL.Path, "/transactions")
	switch {
	case !isTx:
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Not found"})
	case r.Method == http.MethodPost && rest == "":
		s.create(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(rest, "/token") && strings.Count(rest, "/") == 2:
		s.token(w, r, strings.Trim(strings.TrimSuffix(rest, "/token"), "/"))
	case r.Method == http.MethodGet && strings.Count(rest, "/") == 1:
		s.mu.Lock()
		t := s.txs[strings.TrimPrefix(rest, "/")]
		s.mu.Unlock()
		if t == nil {
			sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Transaction not found"})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"v1/transaction": s.object(t)})
	default:
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Not found"})
	}
}

func (s *Simulator) object(t *simTx) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"klass": "v1/transaction", "id": t.id, "reference": fmt.Sprintf("trx_sim_%d", t.id), "amount": t.amount,
		"status": t.status, "last_error_code": t.lastErrorCode, "custom_metadata": map[string]string{metadataKey: t.reference},
		"callback_url": t.callbackURL, "mode": nil}
}

func (s *Simulator) create(w http.ResponseWriter, r *http.Request) {
	var req transactionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "Invalid JSON"})
		return
	}
	amount, err := strconv.ParseInt(req.Amount.String(), 10, 64)
	errs := map[string][]string{}
	if req.Description == "" {
		errs["description"] = []string{"is required"}
	}
	if err != nil || amount <= 0 {
		errs["amount"] = []string{"must be a positive whole number"}
	}
	if iso := req.Currency["iso"]; iso != "XOF" && iso != "GNF" {
		errs["currency"] = []string{"is not supported"}
	}
	if len(errs) > 0 {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "Transaction creation failed", "errors": errs})
		return
	}
	t := &simTx{amount: amount, currency: req.Currency["iso"], callbackURL: req.CallbackURL, status: "pending",
		reference: req.CustomMetadata[metadataKey]}
	if req.Customer != nil && req.Customer.PhoneNumber != nil {
		t.phone = req.Customer.PhoneNumber.Number
	}
	s.mu.Lock()
	t.id = s.newID()
	s.txs[strconv.FormatInt(t.id, 10)] = t
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]any{"v1/transaction": s.object(t)})
}

// newID is a new transaction's or payout's id; s.mu is held.
func (s *Simulator) newID() int64 {
	if s.txs == nil {
		s.txs, s.outs, s.tokens = map[string]*simTx{}, map[string]*simPayout{}, map[string]string{}
	}
	s.nextID++
	return 100000 + s.nextID
}

func (s *Simulator) token(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	t := s.txs[id]
	tok := ""
	if t != nil {
		tok = fmt.Sprintf("tok_sim_%d_%d", t.id, time.Now().UnixNano())
		s.tokens[tok] = id
	}
	s.mu.Unlock()
	if t == nil {
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Transaction not found"})
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"token": tok, "url": "http://" + r.Host + "/_sim/pay/" + id})
}

// send is the payment pushed to the customer's phone, without a redirect.
func (s *Simulator) send(w http.ResponseWriter, r *http.Request, mode string) {
	var req struct {
		Token       string       `json:"token"`
		PhoneNumber *phoneNumber `json:"phone_number"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "Invalid JSON"})
		return
	}
	s.mu.Lock()
	t := s.txs[s.tokens[req.Token]]
	bad := ""
	switch {
	case t == nil:
		bad = "Invalid token"
	case t.sent || t.status != "pending":
		bad = "Transaction already processed"
	case req.PhoneNumber != nil:
		t.phone = req.PhoneNumber.Number
	}
	if refuse, _, _ := sim.Outcome(phoneOf(t)); bad == "" && (refuse || phoneOf(t) == "") {
		bad = "Invalid phone number"
	}
	if bad == "" {
		t.sent = true
	}
	s.mu.Unlock()
	if bad != "" {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": bad})
		return
	}
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(strconv.FormatInt(t.id, 10), "") })
	}
	sim.Reply(w, http.StatusOK, map[string]any{"message": "Payment sent to the customer"})
}

func phoneOf(t *simTx) string {
	if t == nil {
		return ""
	}
	return t.phone
}

func (s *Simulator) lookup(key string) *simTx {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.txs[key]; t != nil {
		return t
	}
	for _, t := range s.txs {
		if t.reference == key {
			return t
		}
	}
	return nil
}

func (s *Simulator) returnTo(id string) (string, url.Values) {
	t := s.lookup(id)
	if t == nil || t.callbackURL == "" {
		return "", nil
	}
	return t.callbackURL, nil
}

// pagePaid is the customer paying or declining on FedaPay's page.
func (s *Simulator) pagePaid(id, status string) bool {
	if t := s.lookup(id); t != nil {
		s.mu.Lock()
		t.sent = true
		s.mu.Unlock()
	}
	return s.settle(id, status)
}

// settle ends a pending transaction or a started payout (by FedaPay id or
// our reference): as the number asks, or as status (approved, declined,
// canceled; sent, failed) says.
func (s *Simulator) settle(key, status string) bool {
	t := s.lookup(key)
	if t == nil {
		return s.settlePayout(key, status)
	}
	s.mu.Lock()
	_, fails, stuck := sim.Outcome(t.phone)
	if t.status != "pending" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	switch {
	case status != "":
		t.status = status
	case sim.LowBalance(t.phone):
		t.status, t.lastErrorCode = "declined", "insufficient_funds"
	case fails:
		t.status, t.lastErrorCode = "declined", "declined_by_customer"
	default:
		t.status = "approved"
	}
	s.mu.Unlock()
	s.webhook(t, "")
	return true
}

func (s *Simulator) resendWebhook(key, status string) bool {
	if t := s.lookup(key); t != nil {
		s.webhook(t, status)
		return true
	}
	if p := s.lookupPayout(key); p != nil {
		s.event("payout", s.payoutObject(p), status)
		return true
	}
	return false
}

// webhook sends transaction.<status>; claiming status when given, whatever
// the transaction's.
func (s *Simulator) webhook(t *simTx, status string) { s.event("transaction", s.object(t), status) }

// event sends the webhook <object>.<status> about entity, signed as
// FedaPay does; claiming status when given.
func (s *Simulator) event(object string, entity map[string]any, status string) {
	if s.WebhookURL == "" {
		return
	}
	if status != "" {
		entity["status"] = status
	}
	body, _ := json.Marshal(map[string]any{"name": object + "." + fmt.Sprint(entity["status"]), "object": object, "entity": entity})
	sim.PostCallback(s.WebhookURL, body, http.Header{"X-Fedapay-Signature": {Sign(s.WebhookSecret, time.Now(), body)}})
}

// simPayout is a payout: pending once created, started by PUT
// /payouts/start, then sent or failed.
type simPayout struct {
	id                    int64
	reference             string // ours, from custom_metadata
	amount                int64
	currency, mode, phone string
	status                string
	lastErrorCode         string
	lastErrorMessage      string
}

// Payouts counts the payouts the simulator started: each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// servePayouts answers POST /payouts, PUT /payouts/start and GET /payouts/{id}.
func (s *Simulator) servePayouts(w http.ResponseWriter, r *http.Request, rest string) {
	switch {
	case r.Method == http.MethodPost && rest == "":
		s.createPayout(w, r)
	case r.Method == http.MethodPut && rest == "/start":
		s.startPayouts(w, r)
	case r.Method == http.MethodGet && strings.Count(rest, "/") == 1 && rest != "/":
		s.mu.Lock()
		p := s.outs[strings.TrimPrefix(rest, "/")]
		s.mu.Unlock()
		if p == nil {
			sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Payout not found"})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"v1/payout": s.payoutObject(p)})
	default:
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Not found"})
	}
}

func (s *Simulator) payoutObject(p *simPayout) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"klass": "v1/payout", "id": p.id, "reference": fmt.Sprintf("pyt_sim_%d", p.id), "amount": p.amount,
		"status": p.status, "mode": p.mode, "last_error_code": p.lastErrorCode, "last_error_message": p.lastErrorMessage,
		"custom_metadata": map[string]string{metadataKey: p.reference}}
}

// createPayout is POST /payouts: a pending payout, nothing sent yet. A
// recipient number the operator refuses (...0039) fails the creation.
func (s *Simulator) createPayout(w http.ResponseWriter, r *http.Request) {
	var req payoutRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "Invalid JSON"})
		return
	}
	amount, err := strconv.ParseInt(req.Amount.String(), 10, 64)
	phone := ""
	if req.Customer != nil && req.Customer.PhoneNumber != nil {
		phone = req.Customer.PhoneNumber.Number
	}
	errs := map[string][]string{}
	if err != nil || amount <= 0 {
		errs["amount"] = []string{"must be a positive whole number"}
	}
	if iso := req.Currency["iso"]; iso != "XOF" && iso != "GNF" {
		errs["currency"] = []string{"is not supported"}
	}
	if !modes[req.Mode] {
		errs["mode"] = []string{"is not supported"}
	}
	if refuse, _, _ := sim.Outcome(phone); refuse || len(phone) < 9 {
		errs["customer.phone_number"] = []string{"is invalid"}
	}
	if len(errs) > 0 {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "Payout creation failed", "errors": errs})
		return
	}
	p := &simPayout{reference: req.CustomMetadata[metadataKey], amount: amount, currency: req.Currency["iso"], mode: req.Mode,
		phone: phone, status: "pending"}
	s.mu.Lock()
	p.id = s.newID()
	s.outs[strconv.FormatInt(p.id, 10)] = p
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]any{"v1/payout": s.payoutObject(p)})
}

// startPayouts is PUT /payouts/start {"payouts": [{"id": ...}]}: each
// pending payout is sent now, unless the merchant's balance cannot fund it
// (a recipient number ending 0049): then it fails and the call is refused.
func (s *Simulator) startPayouts(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Payouts []struct {
			ID          json.Number `json:"id"`
			ScheduledAt string      `json:"scheduled_at"`
		} `json:"payouts"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || len(req.Payouts) == 0 {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "payouts is required"})
		return
	}
	s.mu.Lock()
	var list []*simPayout
	bad, code := "", http.StatusBadRequest
	for _, it := range req.Payouts {
		p := s.outs[it.ID.String()]
		switch {
		case p == nil:
			bad, code = "Payout not found", http.StatusNotFound
		case p.status != "pending":
			bad = "Payout already started"
		case it.ScheduledAt != "":
			bad = "The simulator sends payouts now only"
		case sim.LowBalance(p.phone):
			p.status, p.lastErrorCode, p.lastErrorMessage = "failed", "insufficient_balance", "Insufficient balance"
			bad = "Insufficient balance to send the payouts"
		}
		if bad != "" {
			break
		}
		list = append(list, p)
	}
	if bad == "" {
		for _, p := range list {
			p.status = "started"
			s.started++
		}
	}
	s.mu.Unlock()
	if bad != "" {
		sim.Reply(w, code, map[string]any{"message": bad})
		return
	}
	objs := []map[string]any{}
	for _, p := range list {
		objs = append(objs, s.payoutObject(p))
		if s.SettleAfter > 0 {
			key := strconv.FormatInt(p.id, 10)
			time.AfterFunc(s.SettleAfter, func() { s.settlePayout(key, "") })
		}
	}
	sim.Reply(w, http.StatusOK, map[string]any{"v1/payouts": objs})
}

func (s *Simulator) lookupPayout(key string) *simPayout {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.outs[key]; p != nil {
		return p
	}
	for _, p := range s.outs {
		if p.reference == key {
			return p
		}
	}
	return nil
}

// settlePayout ends a started payout: as the recipient's number asks
// (...0029 fails, ...0129 never ends), or as status (sent, failed) says,
// then sends payout.<status>.
func (s *Simulator) settlePayout(key, status string) bool {
	p := s.lookupPayout(key)
	if p == nil {
		return false
	}
	s.mu.Lock()
	_, fails, stuck := sim.Outcome(p.phone)
	if p.status != "started" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	switch {
	case status == "failed" || status == "" && fails:
		p.status, p.lastErrorCode, p.lastErrorMessage = "failed", "invalid_account", "The recipient's account was not found"
	case status != "":
		p.status = status
	default:
		p.status = "sent"
	}
	s.mu.Unlock()
	s.event("payout", s.payoutObject(p), "")
	return true
}
