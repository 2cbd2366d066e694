package fedapay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for FedaPay's transactions and payouts: bearer auth,
// input checks, a token per transaction, the push without a redirect
// (POST /{mode} under the API version, where FedaPay's SDKs post it; POST
// /transactions/{mode} is not an address it answers) and FedaPay's page at
// /_sim/pay/{id} (pay or decline, then back to callback_url); payouts
// created pending (POST /payouts) then started (PUT /payouts/start); the
// signed transaction.* or payout.* webhook to WebhookURL once one ends.
//
// Its lifecycle, in FedaPay's words: a transaction is pending, then
// approved, declined or canceled (the events of docs.fedapay.com
// integration-api/en/webhooks-en); a payout is pending, scheduled or
// started, then sent or failed (the payout statuses of the API reference
// and of the SDKs' tests, testdata/SOURCES.md).
//
// The customer's or the recipient's number decides the outcome
// (sim.Outcome): ...0039 is refused (the push, or the payout's creation);
// ...0029 is declined (declined_by_customer) or fails (invalid_account);
// ...0049 is declined for insufficient_funds, or refuses a payout's start
// for the merchant's balance; ...0129 never ends. FedaPay publishes no
// sandbox test numbers in the sources we hold.
//
// A pushed transaction or a started payout ends after SettleAfter, or on
// POST /_sim/settle/{FedaPay id or our reference}[?status=]: approved,
// declined, canceled (sent, failed for a payout, which must have started
// to end as its number asks); scheduled or started only move a payout
// there. POST /_sim/callback/{...}[?status=] sends the webhook again
// (claiming status); POST /_sim/fault injects faults.
type Simulator struct {
	SecretKey     string
	WebhookSecret string
	WebhookURL    string
	SettleAfter   time.Duration
	// CreatedWebhook sends transaction.created as a transaction is
	// created, as FedaPay does (docs.fedapay.com/integration-api/en/
	// webhooks-en, "Transaction Lifecycle"). Off unless set, so that tests
	// counting webhooks see only the final ones.
	CreatedWebhook bool

	// Book holds the transactions and the payouts by FedaPay's id (one
	// sequence for both), found by our reference (custom_metadata) and a
	// transaction by its tokens too.
	sim.Book[simObject]
	once sync.Once
}

// simObject is FedaPay's own of a transaction or a payout (Payout).
type simObject struct {
	reference                       string // ours, from custom_metadata
	amount                          int64
	currency                        string
	callbackURL                     string // a transaction's
	mode                            string // a payout's
	lastErrorCode, lastErrorMessage string
	tokens                          []string // a transaction's
}

// ready sets the book to FedaPay's lifecycle on the first request. A
// transaction or a payout is held until it is pushed (or paid on the
// page) or started: SettleAfter runs from then.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simObject]{
			Pending: "pending", Succeeded: "approved", Failed: "declined",
			Steps: []string{"scheduled", "started"}, Finals: []string{"canceled", "sent", "failed"},
			Outcome: simOutcome, End: simEnd,
			Notify: func(m *sim.Movement[simObject], claim string) sim.Note {
				kind, entity := "transaction", object(m)
				if m.Payout {
					kind, entity = "payout", payoutObject(m)
				}
				if claim != "" {
					entity["status"] = claim
				}
				return s.webhook(kind, fmt.Sprint(entity["status"]), entity)
			},
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// webhook is the event <kind>.<name> about entity, signed as FedaPay signs
// it.
func (s *Simulator) webhook(kind, name string, entity map[string]any) sim.Note {
	body, _ := json.Marshal(map[string]any{"name": kind + "." + name, "object": kind, "entity": entity})
	return sim.Note{URL: s.WebhookURL, Body: body, Header: http.Header{"X-Fedapay-Signature": {Sign(s.WebhookSecret, time.Now(), body)}}}
}

// simOutcome is how a transaction or a payout ends as its number asks; a
// payout neither started nor scheduled waits.
func simOutcome(m *sim.Movement[simObject]) (string, bool) {
	_, fails, stuck := sim.Outcome(m.Phone)
	switch {
	case m.Payout && m.Status == "pending", stuck:
		return "", true
	case m.Payout && fails:
		return "failed", false
	case m.Payout:
		return "sent", false
	case sim.LowBalance(m.Phone):
		m.Data.lastErrorCode = "insufficient_funds"
		return "declined", false
	case fails:
		m.Data.lastErrorCode = "declined_by_customer"
		return "declined", false
	}
	return "", false
}

// simEnd puts an end in its object's words (a payout is sent or failed,
// never approved or declined) and gives a failed payout its error.
func simEnd(m *sim.Movement[simObject]) {
	if !m.Payout {
		switch m.Status {
		case "sent":
			m.Status = "approved"
		case "failed":
			m.Status = "declined"
		}
		return
	}
	switch m.Status {
	case "approved":
		m.Status = "sent"
	case "declined", "canceled":
		m.Status = "failed"
	}
	if m.Status == "failed" && m.Data.lastErrorCode == "" {
		m.Data.lastErrorCode, m.Data.lastErrorMessage = "invalid_account", "The recipient's account was not found"
	}
}

// modes are FedaPay's Mobile Money modes: the Node SDK's list
// (src/Transaction.ts AVAILABLE_MOBILE_MONEY) and the docs' modes without a
// redirect (docs.fedapay.com payment methods: sbin, mtn_open_gn). An
// unknown mode is no address at all.
var modes = map[string]bool{"mtn": true, "moov": true, "mtn_ci": true, "moov_tg": true, "mtn_open": true, "airtel_ne": true,
	"free_sn": true, "togocel": true, "mtn_ecw": true, "mtn_open_ci": true, "wave_direct_ci": true, "sbin": true, "mtn_open_gn": true}

// ServeHTTP answers FedaPay's API, its page and the control calls.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	if strings.HasPrefix(r.URL.Path, "/_sim/pay/") {
		sim.Page{Settle: s.pagePaid, Declined: "declined", Return: s.returnTo}.Serve(w, r)
		return
	}
	if s.Intercept(w, r) {
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
		s.send(w, r) // POST /v1/{mode}, the SDKs' path
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
		m, ok := s.byID(strings.TrimPrefix(rest, "/"), false)
		if !ok {
			sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Transaction not found"})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"v1/transaction": object(&m)})
	default:
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Not found"})
	}
}

// byID is the transaction or the payout (payout) whose FedaPay id is id:
// the API finds neither by our reference nor by a token.
func (s *Simulator) byID(id string, payout bool) (sim.Movement[simObject], bool) {
	m, ok := s.View(id)
	return m, ok && m.ID == id && m.Payout == payout
}

func object(m *sim.Movement[simObject]) map[string]any {
	id, _ := strconv.ParseInt(m.ID, 10, 64)
	return map[string]any{"klass": "v1/transaction", "id": id, "reference": "trx_sim_" + m.ID, "amount": m.Data.amount,
		"status": m.Status, "last_error_code": m.Data.lastErrorCode, "custom_metadata": map[string]string{metadataKey: m.Data.reference},
		"callback_url": m.Data.callbackURL, "mode": nil}
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
	m := &sim.Movement[simObject]{ID: s.newID(), Held: true, Data: simObject{amount: amount, currency: req.Currency["iso"],
		callbackURL: req.CallbackURL, reference: req.CustomMetadata[metadataKey]}}
	if req.Customer != nil && req.Customer.PhoneNumber != nil {
		m.Phone = req.Customer.PhoneNumber.Number
	}
	created := object(s.add(m))
	if s.CreatedWebhook && s.WebhookURL != "" {
		go sim.PostCallback(s.webhook("transaction", "created", created))
	}
	sim.Reply(w, http.StatusOK, map[string]any{"v1/transaction": created})
}

// newID is a new transaction's or payout's id.
func (s *Simulator) newID() string { return strconv.Itoa(100000 + s.Next()) }

// add records a new transaction or payout, found by our reference too
// (the latest of that reference: FedaPay takes the same twice), and
// returns a copy of it as recorded.
func (s *Simulator) add(m *sim.Movement[simObject]) *sim.Movement[simObject] {
	s.Add(m)
	if m.Data.reference != "" {
		s.Alias(m.Data.reference, m.ID)
	}
	v, _ := s.View(m.ID)
	return &v
}

func (s *Simulator) token(w http.ResponseWriter, r *http.Request, id string) {
	tok := fmt.Sprintf("tok_sim_%s_%d", id, time.Now().UnixNano())
	if _, ok := s.byID(id, false); !ok || !s.Update(id, func(m *sim.Movement[simObject]) { m.Data.tokens = append(m.Data.tokens, tok) }) {
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Transaction not found"})
		return
	}
	s.Alias(tok, id)
	sim.Reply(w, http.StatusOK, map[string]any{"token": tok, "url": "http://" + r.Host + "/_sim/pay/" + id})
}

// send is the payment pushed to the customer's phone, without a redirect.
func (s *Simulator) send(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token       string       `json:"token"`
		PhoneNumber *phoneNumber `json:"phone_number"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": "Invalid JSON"})
		return
	}
	bad, id := "Invalid token", ""
	s.Update(req.Token, func(m *sim.Movement[simObject]) {
		switch {
		case m.Payout || !slices.Contains(m.Data.tokens, req.Token):
			return
		case !m.Held || m.Status != "pending":
			bad = "Transaction already processed"
			return
		case req.PhoneNumber != nil:
			m.Phone = req.PhoneNumber.Number
		}
		if refuse, _, _ := sim.Outcome(m.Phone); refuse || m.Phone == "" {
			bad = "Invalid phone number"
			return
		}
		bad, id = "", m.ID
	})
	if bad == "" && !s.Release(id) { // pushed by another call meanwhile
		bad = "Transaction already processed"
	}
	if bad != "" {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"message": bad})
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"message": "Payment sent to the customer"})
}

func (s *Simulator) returnTo(id string) (string, url.Values) {
	m, ok := s.View(id)
	if !ok || m.Payout || m.Data.callbackURL == "" {
		return "", nil
	}
	return m.Data.callbackURL, nil
}

// pagePaid is the customer paying or declining on FedaPay's page.
func (s *Simulator) pagePaid(id, status string) bool {
	s.Release(id)
	return s.Settle(id, status) == nil
}

// servePayouts answers POST /payouts, PUT /payouts/start and GET /payouts/{id}.
func (s *Simulator) servePayouts(w http.ResponseWriter, r *http.Request, rest string) {
	switch {
	case r.Method == http.MethodPost && rest == "":
		s.createPayout(w, r)
	case r.Method == http.MethodPut && rest == "/start":
		s.startPayouts(w, r)
	case r.Method == http.MethodGet && strings.Count(rest, "/") == 1 && rest != "/":
		m, ok := s.byID(strings.TrimPrefix(rest, "/"), true)
		if !ok {
			sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Payout not found"})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"v1/payout": payoutObject(&m)})
	default:
		sim.Reply(w, http.StatusNotFound, map[string]any{"message": "Not found"})
	}
}

func payoutObject(m *sim.Movement[simObject]) map[string]any {
	id, _ := strconv.ParseInt(m.ID, 10, 64)
	return map[string]any{"klass": "v1/payout", "id": id, "reference": "pyt_sim_" + m.ID, "amount": m.Data.amount,
		"status": m.Status, "mode": m.Data.mode, "last_error_code": m.Data.lastErrorCode, "last_error_message": m.Data.lastErrorMessage,
		"custom_metadata": map[string]string{metadataKey: m.Data.reference}}
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
	// Held: it sends nothing, nor counts in Payouts, until its start.
	m := &sim.Movement[simObject]{ID: s.newID(), Payout: true, Held: true, Phone: phone, Data: simObject{reference: req.CustomMetadata[metadataKey],
		amount: amount, currency: req.Currency["iso"], mode: req.Mode}}
	sim.Reply(w, http.StatusOK, map[string]any{"v1/payout": payoutObject(s.add(m))})
}

// startPayouts is PUT /payouts/start {"payouts": [{"id": ...}]}: each
// pending payout is started now, unless the merchant's balance cannot
// fund it (a recipient number ending 0049): then it fails and the call is
// refused, none started.
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
	var ids []string
	for _, it := range req.Payouts {
		id := it.ID.String()
		m, ok := s.byID(id, true)
		bad, code := "", http.StatusBadRequest
		switch {
		case !ok:
			bad, code = "Payout not found", http.StatusNotFound
		case m.Status != "pending":
			bad = "Payout already started"
		case it.ScheduledAt != "":
			bad = "The simulator sends payouts now only"
		case sim.LowBalance(m.Phone):
			s.Update(id, func(m *sim.Movement[simObject]) {
				m.Data.lastErrorCode, m.Data.lastErrorMessage = "insufficient_balance", "Insufficient balance"
			})
			s.Settle(id, "failed")
			bad = "Insufficient balance to send the payouts"
		}
		if bad != "" {
			sim.Reply(w, code, map[string]any{"message": bad})
			return
		}
		ids = append(ids, id)
	}
	objs := []map[string]any{}
	for _, id := range ids {
		started := false
		s.Update(id, func(m *sim.Movement[simObject]) {
			if started = m.Status == "pending"; started { // not started by another call meanwhile
				m.Status = "started"
				objs = append(objs, payoutObject(m))
			}
		})
		if started {
			s.Release(id)
		}
	}
	sim.Reply(w, http.StatusOK, map[string]any{"v1/payouts": objs})
}
