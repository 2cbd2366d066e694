package flutterwave

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for Flutterwave's push mobile money charges: bearer
// auth, input checks, unique tx_ref, outcomes by the payer's number
// (gateway.SimulatedOutcome), settlement after SettleAfter or on
// POST /_sim/settle/{tx_ref}, and the charge.completed webhook carrying the
// secret hash in verif-hash to WebhookURL. POST /_sim/callback/{tx_ref}
// sends the webhook again, or with ?status= one claiming that status (stale,
// early or out of order); POST /_sim/fault injects faults.
type Simulator struct {
	SecretKey   string
	SecretHash  string
	WebhookURL  string
	SettleAfter time.Duration

	mu      sync.Mutex
	charges map[string]*simCharge
	nextID  int64
	faults  gateway.Faults
}

type simCharge struct {
	id            int64
	txRef, phone  string
	status, reply string
}

var types = map[string]bool{"mobile_money_uganda": true, "mobile_money_rwanda": true, "mobile_money_zambia": true,
	"mobile_money_tanzania": true, "mpesa": true}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		gateway.ServeSimControl(w, r, &s.faults, s.settle, s.resendWebhook)
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		gateway.Reply(w, http.StatusUnauthorized, map[string]any{"status": "error", "message": "Invalid authorization key", "data": nil})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/charges":
		s.charge(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/transactions/verify_by_reference":
		s.mu.Lock()
		c := s.charges[r.URL.Query().Get("tx_ref")]
		s.mu.Unlock()
		if c == nil {
			gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "No transaction was found for this id", "data": nil})
			return
		}
		gateway.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transaction fetched successfully", "data": s.data(c)})
	default:
		http.NotFound(w, r)
	}
}

func (s *Simulator) data(c *simCharge) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"id": c.id, "tx_ref": c.txRef, "status": c.status, "processor_response": c.reply}
}

func (s *Simulator) charge(w http.ResponseWriter, r *http.Request) {
	var req chargeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "Invalid JSON", "data": nil})
		return
	}
	refuse, _, _ := gateway.SimulatedOutcome(req.PhoneNumber)
	amount, err := req.Amount.Float64()
	bad := ""
	switch {
	case !types[r.URL.Query().Get("type")]:
		bad = "Invalid charge type"
	case err != nil || amount <= 0:
		bad = "Invalid amount"
	case req.TxRef == "" || !strings.Contains(req.Email, "@") || len(req.Currency) != 3:
		bad = "tx_ref, email and currency are required"
	case refuse || strings.Trim(req.PhoneNumber, "0123456789") != "" || len(req.PhoneNumber) < 9:
		bad = "Invalid phone number"
	}
	s.mu.Lock()
	if s.charges == nil {
		s.charges = map[string]*simCharge{}
	}
	if bad == "" && s.charges[req.TxRef] != nil {
		bad = "Duplicate transaction reference"
	}
	if bad != "" {
		s.mu.Unlock()
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": bad, "data": nil})
		return
	}
	s.nextID++
	c := &simCharge{id: 7000000 + s.nextID, txRef: req.TxRef, phone: req.PhoneNumber, status: "pending"}
	s.charges[req.TxRef] = c
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(req.TxRef, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Charge initiated", "data": s.data(c)})
}

func (s *Simulator) settle(txRef, status string) bool {
	s.mu.Lock()
	c := s.charges[txRef]
	if c == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := gateway.SimulatedOutcome(c.phone)
	if c.status != "pending" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	if status == "failed" || status == "" && fails {
		c.status, c.reply = "failed", "Transaction declined"
		if gateway.SimulatedLowBalance(c.phone) {
			c.reply = "Insufficient funds"
		}
	} else {
		c.status, c.reply = "successful", "Approved"
	}
	s.mu.Unlock()
	s.webhook(c, "")
	return true
}

// resendWebhook sends a charge's webhook again, or claiming status.
func (s *Simulator) resendWebhook(txRef, status string) bool {
	s.mu.Lock()
	c := s.charges[txRef]
	s.mu.Unlock()
	if c != nil {
		s.webhook(c, status)
	}
	return c != nil
}

// webhook sends charge.completed with the account's secret hash, as
// Flutterwave does, in verif-hash; claiming status when given, whatever the
// charge's (a stale, early or out-of-order webhook).
func (s *Simulator) webhook(c *simCharge, status string) {
	if s.WebhookURL == "" {
		return
	}
	data := s.data(c)
	if status != "" {
		data["status"] = status
	}
	body, _ := json.Marshal(map[string]any{"event": "charge.completed", "data": data})
	gateway.PostCallback(s.WebhookURL, body, http.Header{"Verif-Hash": {s.SecretHash}})
}
