package pawapay

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for pawaPay's deposits and payouts API in tests and
// on a developer's machine (cauri simulate pawapay). It accepts and refuses
// as pawaPay does: bearer auth, input checks, idempotency of depositId and
// payoutId; and the customer's number decides the outcome, like pawaPay's
// sandbox numbers:
//
//	...0039  refused at initiation (INVALID_PHONE_NUMBER)
//	...0029  fails once settled (PAYER_NOT_FOUND, RECIPIENT_NOT_FOUND)
//	...0049  a deposit fails once settled (INSUFFICIENT_BALANCE); a payout
//	         is refused at initiation: the merchant's wallet lacks funds
//	...0129  never settles, no callback (a lost payment, for the reconciler)
//	other    completes
//
// A payment settles after SettleAfter, or when POST /_sim/settle/{id} says
// so; settled payments are POSTed to CallbackURL. POST /_sim/fault?mode=
// slow|500|500-initiate|malformed|none injects faults into the API
// (500-initiate: new payments fail and are not recorded); POST
// /_sim/callback/{id} sends a payment's callback again (a duplicate), or,
// with ?status=, one claiming that status whatever the payment's (a stale,
// early or out-of-order callback).
type Simulator struct {
	Token       string
	CallbackURL string
	SettleAfter time.Duration // 0: only the control call settles

	mu       sync.Mutex
	payments map[string]*simPayment // deposits and payouts, by their id
	faults   gateway.Faults
	calls    int
	payouts  int
}

// simPayment is a deposit or a payout.
type simPayment struct {
	kind                  string // "deposit" or "payout"
	id, status, phone     string
	providerTransactionID string
	failureReason         *failureReason
}

// object is the payment as pawaPay shows it (status reads, callbacks).
func (p *simPayment) object() map[string]any {
	o := map[string]any{p.kind + "Id": p.id, "status": p.status}
	if p.providerTransactionID != "" {
		o["providerTransactionId"] = p.providerTransactionID
	}
	if p.failureReason != nil {
		o["failureReason"] = p.failureReason
	}
	return o
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// knownProvider reports whether pawaPay has this provider code.
func knownProvider(code string) bool {
	p, _ := gateway.Lookup("pawapay")
	for _, ops := range p.Operators {
		for _, c := range ops {
			if c == code {
				return true
			}
		}
	}
	return false
}

// Calls counts the API requests the simulator answered (control calls aside).
func (s *Simulator) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Payouts counts the payouts the simulator accepted (duplicates aside):
// each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payouts
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		gateway.ServeSimControl(w, r, &s.faults, s.settle, func(id, status string) bool { s.callback(id, status); return true })
		return
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.faults.Apply(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		gateway.Reply(w, http.StatusUnauthorized, map[string]any{"status": "REJECTED", "failureReason": &failureReason{"NO_AUTHENTICATION", "The API token is missing or wrong"}})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/deposits":
		s.initiate(w, r, "deposit")
	case r.Method == http.MethodPost && r.URL.Path == "/v2/payouts":
		s.initiate(w, r, "payout")
	case r.Method == http.MethodGet && (strings.HasPrefix(r.URL.Path, "/v2/deposits/") || strings.HasPrefix(r.URL.Path, "/v2/payouts/")):
		kind, id := "deposit", strings.TrimPrefix(r.URL.Path, "/v2/deposits/")
		if strings.HasPrefix(r.URL.Path, "/v2/payouts/") {
			kind, id = "payout", strings.TrimPrefix(r.URL.Path, "/v2/payouts/")
		}
		s.mu.Lock()
		p := s.payments[id]
		var out any = map[string]any{"status": "NOT_FOUND", "data": nil}
		if p != nil && p.kind == kind {
			out = map[string]any{"status": "FOUND", "data": p.object()}
		}
		s.mu.Unlock()
		gateway.Reply(w, http.StatusOK, out)
	default:
		http.NotFound(w, r)
	}
}

// initiate is POST /v2/deposits or /v2/payouts (kind).
func (s *Simulator) initiate(w http.ResponseWriter, r *http.Request, kind string) {
	var req struct {
		DepositID string `json:"depositId"`
		PayoutID  string `json:"payoutId"`
		Amount    string `json:"amount"`
		Currency  string `json:"currency"`
		Payer     *payer `json:"payer"`
		Recipient *payer `json:"recipient"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": "REJECTED", "failureReason": &failureReason{"INVALID_INPUT", "The request body is not valid JSON"}})
		return
	}
	id, party := req.DepositID, req.Payer
	if kind == "payout" {
		id, party = req.PayoutID, req.Recipient
	}
	reject := func(code int, fc, msg string) {
		gateway.Reply(w, code, map[string]any{kind + "Id": id, "status": "REJECTED", "failureReason": &failureReason{fc, msg}})
	}
	amount, err := strconv.ParseFloat(req.Amount, 64)
	switch {
	case !uuidRE.MatchString(id):
		reject(http.StatusBadRequest, "INVALID_PARAMETER", kind+"Id must be a UUID")
		return
	case err != nil || amount <= 0 || strings.ContainsAny(req.Amount, "eE+-"):
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "amount must be a positive decimal number")
		return
	case party == nil || party.Type != "MMO" || len(req.Currency) != 3:
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "the payer or recipient type must be MMO and currency an ISO 4217 code")
		return
	}
	phone := party.AccountDetails.PhoneNumber
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.payments == nil {
		s.payments = map[string]*simPayment{}
	}
	if _, dup := s.payments[id]; dup {
		gateway.Reply(w, http.StatusOK, map[string]any{kind + "Id": id, "status": "DUPLICATE_IGNORED"})
		return
	}
	switch {
	case !knownProvider(party.AccountDetails.Provider):
		reject(http.StatusOK, "INVALID_PROVIDER", "The provider is not available")
		return
	case len(phone) < 9 || len(phone) > 15 || strings.Trim(phone, "0123456789") != "" || refused(phone):
		reject(http.StatusOK, "INVALID_PHONE_NUMBER", "The phone number is not valid for the provider")
		return
	case kind == "payout" && gateway.SimulatedLowBalance(phone):
		reject(http.StatusOK, "INSUFFICIENT_BALANCE", "The wallet does not have enough funds for this payout")
		return
	}
	s.payments[id] = &simPayment{kind: kind, id: id, status: "ACCEPTED", phone: phone}
	if kind == "payout" {
		s.payouts++
	}
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(id, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]string{kind + "Id": id, "status": "ACCEPTED", "created": time.Now().UTC().Format(time.RFC3339)})
}

// settle ends a payment as its number says, or as status says, and sends
// the callback.
func (s *Simulator) settle(id, status string) bool {
	s.mu.Lock()
	p := s.payments[id]
	if p == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := gateway.SimulatedOutcome(p.phone)
	if p.status != "ACCEPTED" || (status == "" && stuck) {
		s.mu.Unlock()
		return true
	}
	switch {
	case status == "FAILED" || (status == "" && fails):
		p.status, p.failureReason = "FAILED", &failureReason{"PAYER_NOT_FOUND", "The payer's wallet was not found"}
		if p.kind == "payout" {
			p.failureReason = &failureReason{"RECIPIENT_NOT_FOUND", "The recipient's wallet was not found"}
		} else if gateway.SimulatedLowBalance(p.phone) {
			p.failureReason = &failureReason{"INSUFFICIENT_BALANCE", "The payer does not have enough funds"}
		}
	default:
		b := make([]byte, 6)
		rand.Read(b)
		p.status, p.providerTransactionID = "COMPLETED", "SIM"+strings.ToUpper(hex.EncodeToString(b))
	}
	s.mu.Unlock()
	s.callback(id, "")
	return true
}

// callback sends a payment's callback, claiming status when given.
func (s *Simulator) callback(id, status string) {
	s.mu.Lock()
	var body []byte
	if p := s.payments[id]; p != nil {
		o := p.object()
		if status != "" {
			o["status"] = status
		}
		body, _ = json.Marshal(o)
	}
	s.mu.Unlock()
	if s.CallbackURL == "" || body == nil {
		return
	}
	gateway.PostCallback(s.CallbackURL, body, nil)
}

func refused(phone string) bool { r, _, _ := gateway.SimulatedOutcome(phone); return r }
