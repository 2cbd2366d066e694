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

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for FedaPay's transactions: bearer auth, input
// checks, a token per transaction, the push without a redirect
// (POST /transactions/{mode}) and FedaPay's page at /_sim/pay/{id} (pay or
// decline, then back to callback_url), outcomes by the customer's number
// (gateway.SimulatedOutcome), settlement after SettleAfter or on POST
// /_sim/settle/{id or our reference}[?status=declined], and the signed
// transaction.* webhook to WebhookURL. POST /_sim/callback/{...}[?status=]
// sends it again (claiming status); POST /_sim/fault injects faults.
type Simulator struct {
	SecretKey     string
	WebhookSecret string
	WebhookURL    string
	SettleAfter   time.Duration

	mu     sync.Mutex
	txs    map[string]*simTx // by FedaPay id
	tokens map[string]string // token -> id
	nextID int64
	faults gateway.Faults
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

// modes are FedaPay's Mobile Money modes (docs.fedapay.com, payment methods; Node SDK).
var modes = map[string]bool{"mtn": true, "moov": true, "mtn_ci": true, "moov_tg": true, "mtn_open": true, "airtel_ne": true,
	"free_sn": true, "togocel": true, "mtn_ecw": true, "mtn_open_ci": true, "wave_direct_ci": true, "sbin": true, "mtn_open_gn": true}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		gateway.SimPage{Settle: s.pagePaid, Declined: "declined", Return: s.returnTo}.Serve(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		gateway.ServeSimControl(w, r, &s.faults, s.settle, s.resendWebhook)
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		gateway.Reply(w, http.StatusUnauthorized, map[string]any{"message": "Invalid API key"})
		return
	}
	rest, _ := strings.CutPrefix(r.URL.Path, "/transactions")
	switch {
	case r.Method == http.MethodPost && rest == "":
		s.create(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(rest, "/token"):
		s.token(w, r, strings.Trim(strings.TrimSuffix(rest, "/token"), "/"))
	case r.Method == http.MethodPost && strings.Count(rest, "/") == 1:
		s.send(w, r, strings.TrimPrefix(rest, "/"))
	case r.Method == http.MethodGet && strings.Count(rest, "/") == 1:
		s.mu.Lock()
		t := s.txs[strings.TrimPrefix(rest, "/")]
		s.mu.Unlock()
		if t == nil {
			gateway.Reply(w, http.StatusNotFound, map[string]any{"message": "Transaction not found"})
			return
		}
		gateway.Reply(w, http.StatusOK, map[string]any{"v1/transaction": s.object(t)})
	default:
		gateway.Reply(w, http.StatusNotFound, map[string]any{"message": "Not found"})
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
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"message": "Invalid JSON"})
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
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"message": "Transaction creation failed", "errors": errs})
		return
	}
	t := &simTx{amount: amount, currency: req.Currency["iso"], callbackURL: req.CallbackURL, status: "pending",
		reference: req.CustomMetadata[metadataKey]}
	if req.Customer != nil && req.Customer.PhoneNumber != nil {
		t.phone = req.Customer.PhoneNumber.Number
	}
	s.mu.Lock()
	if s.txs == nil {
		s.txs, s.tokens = map[string]*simTx{}, map[string]string{}
	}
	s.nextID++
	t.id = 100000 + s.nextID
	s.txs[strconv.FormatInt(t.id, 10)] = t
	s.mu.Unlock()
	gateway.Reply(w, http.StatusOK, map[string]any{"v1/transaction": s.object(t)})
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
		gateway.Reply(w, http.StatusNotFound, map[string]any{"message": "Transaction not found"})
		return
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"token": tok, "url": "http://" + r.Host + "/_sim/pay/" + id})
}

// send is the payment pushed to the customer's phone, without a redirect.
func (s *Simulator) send(w http.ResponseWriter, r *http.Request, mode string) {
	var req struct {
		Token       string       `json:"token"`
		PhoneNumber *phoneNumber `json:"phone_number"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"message": "Invalid JSON"})
		return
	}
	s.mu.Lock()
	t := s.txs[s.tokens[req.Token]]
	bad := ""
	switch {
	case !modes[mode]:
		bad = "Unknown mode " + mode
	case t == nil:
		bad = "Invalid token"
	case t.sent || t.status != "pending":
		bad = "Transaction already processed"
	case req.PhoneNumber != nil:
		t.phone = req.PhoneNumber.Number
	}
	if refuse, _, _ := gateway.SimulatedOutcome(phoneOf(t)); bad == "" && (refuse || phoneOf(t) == "") {
		bad = "Invalid phone number"
	}
	if bad == "" {
		t.sent = true
	}
	s.mu.Unlock()
	if bad != "" {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"message": bad})
		return
	}
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(strconv.FormatInt(t.id, 10), "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"message": "Payment sent to the customer"})
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

// settle ends a pending transaction (by FedaPay id or our reference): as
// the number asks, or as status (approved, declined, canceled) says.
func (s *Simulator) settle(key, status string) bool {
	t := s.lookup(key)
	if t == nil {
		return false
	}
	s.mu.Lock()
	_, fails, stuck := gateway.SimulatedOutcome(t.phone)
	if t.status != "pending" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	switch {
	case status != "":
		t.status = status
	case gateway.SimulatedLowBalance(t.phone):
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
	t := s.lookup(key)
	if t != nil {
		s.webhook(t, status)
	}
	return t != nil
}

// webhook sends transaction.<status>, signed as FedaPay does; claiming
// status when given, whatever the transaction's.
func (s *Simulator) webhook(t *simTx, status string) {
	if s.WebhookURL == "" {
		return
	}
	obj := s.object(t)
	if status != "" {
		obj["status"] = status
	}
	body, _ := json.Marshal(map[string]any{"name": "transaction." + fmt.Sprint(obj["status"]), "object": "transaction", "entity": obj})
	gateway.PostCallback(s.WebhookURL, body, http.Header{"X-Fedapay-Signature": {Sign(s.WebhookSecret, time.Now(), body)}})
}
