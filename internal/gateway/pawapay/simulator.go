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

// Simulator stands in for pawaPay's deposits API in tests and on a
// developer's machine (cauri simulate pawapay). It accepts and refuses as
// pawaPay does: bearer auth, input checks, idempotency of depositId; and
// the payer's number decides the outcome, like pawaPay's sandbox numbers:
//
//	...0039  refused at initiation (INVALID_PHONE_NUMBER)
//	...0029  fails once settled (PAYER_NOT_FOUND)
//	...0049  fails once settled (INSUFFICIENT_BALANCE)
//	...0129  never settles, no callback (a lost payment, for the reconciler)
//	other    completes
//
// A deposit settles after SettleAfter, or when POST /_sim/settle/{id} says
// so; settled deposits are POSTed to CallbackURL. POST /_sim/fault?mode=
// slow|500|500-initiate|malformed|none injects faults into the API
// (500-initiate: new deposits fail and are not recorded); POST
// /_sim/callback/{id} sends a deposit's callback again (a duplicate), or,
// with ?status=, one claiming that status whatever the deposit's (a stale,
// early or out-of-order callback).
type Simulator struct {
	Token       string
	CallbackURL string
	SettleAfter time.Duration // 0: only the control call settles

	mu       sync.Mutex
	deposits map[string]*simDeposit
	faults   gateway.Faults
	calls    int
}

type simDeposit struct {
	deposit
	phone string
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
		gateway.Reply(w, http.StatusUnauthorized, depositAnswer{Status: "REJECTED", FailureReason: &failureReason{"NO_AUTHENTICATION", "The API token is missing or wrong"}})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/deposits":
		s.initiate(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/deposits/"):
		s.mu.Lock()
		d := s.deposits[strings.TrimPrefix(r.URL.Path, "/v2/deposits/")]
		var out any = map[string]any{"status": "NOT_FOUND", "data": nil}
		if d != nil {
			out = map[string]any{"status": "FOUND", "data": d.deposit}
		}
		s.mu.Unlock()
		gateway.Reply(w, http.StatusOK, out)
	default:
		http.NotFound(w, r)
	}
}

func (s *Simulator) initiate(w http.ResponseWriter, r *http.Request) {
	var req depositRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, depositAnswer{Status: "REJECTED", FailureReason: &failureReason{"INVALID_INPUT", "The request body is not valid JSON"}})
		return
	}
	reject := func(code int, fc, msg string) {
		gateway.Reply(w, code, depositAnswer{DepositID: req.DepositID, Status: "REJECTED", FailureReason: &failureReason{fc, msg}})
	}
	amount, err := strconv.ParseFloat(req.Amount, 64)
	phone := req.Payer.AccountDetails.PhoneNumber
	switch {
	case !uuidRE.MatchString(req.DepositID):
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "depositId must be a UUID")
		return
	case err != nil || amount <= 0 || strings.ContainsAny(req.Amount, "eE+-"):
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "amount must be a positive decimal number")
		return
	case req.Payer.Type != "MMO" || len(req.Currency) != 3:
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "payer.type must be MMO and currency an ISO 4217 code")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deposits == nil {
		s.deposits = map[string]*simDeposit{}
	}
	if _, dup := s.deposits[req.DepositID]; dup {
		gateway.Reply(w, http.StatusOK, depositAnswer{DepositID: req.DepositID, Status: "DUPLICATE_IGNORED"})
		return
	}
	switch {
	case !knownProvider(req.Payer.AccountDetails.Provider):
		reject(http.StatusOK, "INVALID_PROVIDER", "The provider is not available")
		return
	case len(phone) < 9 || len(phone) > 15 || strings.Trim(phone, "0123456789") != "" || refused(phone):
		reject(http.StatusOK, "INVALID_PHONE_NUMBER", "The phone number is not valid for the provider")
		return
	}
	s.deposits[req.DepositID] = &simDeposit{deposit: deposit{DepositID: req.DepositID, Status: "ACCEPTED"}, phone: phone}
	if s.SettleAfter > 0 {
		id := req.DepositID
		time.AfterFunc(s.SettleAfter, func() { s.settle(id, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]string{"depositId": req.DepositID, "status": "ACCEPTED", "created": time.Now().UTC().Format(time.RFC3339)})
}

// settle ends a deposit as its number says, or as status says, and sends
// the callback.
func (s *Simulator) settle(id, status string) bool {
	s.mu.Lock()
	d := s.deposits[id]
	_, fails, stuck := gateway.SimulatedOutcome(d.phoneOr(""))
	if d == nil || d.Status != "ACCEPTED" || (status == "" && stuck) {
		s.mu.Unlock()
		return d != nil
	}
	switch {
	case status == "FAILED" || (status == "" && fails):
		d.Status, d.FailureReason = "FAILED", &failureReason{"PAYER_NOT_FOUND", "The payer's wallet was not found"}
		if gateway.SimulatedLowBalance(d.phone) {
			d.FailureReason = &failureReason{"INSUFFICIENT_BALANCE", "The payer does not have enough funds"}
		}
	default:
		b := make([]byte, 6)
		rand.Read(b)
		d.Status, d.ProviderTransactionID = "COMPLETED", "SIM"+strings.ToUpper(hex.EncodeToString(b))
	}
	s.mu.Unlock()
	s.callback(id, "")
	return true
}

// callback sends a deposit's callback, claiming status when given.
func (s *Simulator) callback(id, status string) {
	s.mu.Lock()
	d := s.deposits[id]
	var body []byte
	if d != nil {
		claimed := d.deposit
		if status != "" {
			claimed.Status = status
		}
		body, _ = json.Marshal(claimed)
	}
	s.mu.Unlock()
	if s.CallbackURL == "" || body == nil {
		return
	}
	gateway.PostCallback(s.CallbackURL, body, nil)
}

func refused(phone string) bool { r, _, _ := gateway.SimulatedOutcome(phone); return r }

// phoneOr is the deposit's number, or def for no deposit.
func (d *simDeposit) phoneOr(def string) string {
	if d == nil {
		return def
	}
	return d.phone
}
