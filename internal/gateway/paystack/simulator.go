package paystack

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for Paystack's mobile money charges: bearer auth with
// the secret key, input checks, unique references, outcomes by the payer's
// number (gateway.SimulatedOutcome), settlement after SettleAfter or on
// POST /_sim/settle/{reference}, and the charge.success webhook signed with
// the secret key (x-paystack-signature) to WebhookURL. POST
// /_sim/callback/{reference} sends a charge.success webhook whatever the
// charge's status (stale, early or out of order); POST /_sim/fault injects
// faults (gateway.Faults).
type Simulator struct {
	SecretKey   string
	WebhookURL  string
	SettleAfter time.Duration

	mu      sync.Mutex
	charges map[string]*simCharge
	nextID  int64
	faults  gateway.Faults
}

type simCharge struct {
	id                      int64
	reference, phone        string
	status, gatewayResponse string
}

var providers = map[string]bool{"mtn": true, "atl": true, "vod": true, "mpesa": true, "mpesa_offline": true}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		gateway.ServeSimControl(w, r, &s.faults, s.settle, s.claimedWebhook)
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		gateway.Reply(w, http.StatusUnauthorized, map[string]any{"status": false, "message": "Invalid key"})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/charge":
		s.charge(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transaction/verify/"):
		s.mu.Lock()
		c := s.charges[strings.TrimPrefix(r.URL.Path, "/transaction/verify/")]
		s.mu.Unlock()
		if c == nil {
			gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Transaction reference not found"})
			return
		}
		gateway.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Verification successful", "data": s.data(c)})
	default:
		http.NotFound(w, r)
	}
}

func (s *Simulator) data(c *simCharge) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"id": c.id, "reference": c.reference, "status": c.status, "gateway_response": c.gatewayResponse}
}

func (s *Simulator) charge(w http.ResponseWriter, r *http.Request) {
	var req chargeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	refuse, _, _ := gateway.SimulatedOutcome(req.MobileMoney.Phone)
	bad := ""
	switch {
	case req.Amount <= 0:
		bad = "Invalid amount"
	case !strings.Contains(req.Email, "@"):
		bad = "Invalid Email Address Passed"
	case req.Reference == "" || len(req.Reference) > 100:
		bad = "Invalid reference"
	case !providers[req.MobileMoney.Provider]:
		bad = "Invalid mobile money provider"
	case refuse || strings.Trim(req.MobileMoney.Phone, "0123456789") != "" || len(req.MobileMoney.Phone) < 9:
		bad = "Invalid phone number"
	}
	s.mu.Lock()
	if s.charges == nil {
		s.charges = map[string]*simCharge{}
	}
	if bad == "" && s.charges[req.Reference] != nil {
		bad = "Duplicate Transaction Reference"
	}
	if bad != "" {
		s.mu.Unlock()
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
		return
	}
	s.nextID++
	c := &simCharge{id: 4000000 + s.nextID, reference: req.Reference, phone: req.MobileMoney.Phone, status: "pay_offline"}
	s.charges[req.Reference] = c
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(req.Reference, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Charge attempted", "data": map[string]any{
		"reference": req.Reference, "status": "pay_offline", "display_text": "Please complete authorization process on your mobile phone"}})
}

func (s *Simulator) settle(reference, status string) bool {
	s.mu.Lock()
	c := s.charges[reference]
	if c == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := gateway.SimulatedOutcome(c.phone)
	if c.status != "pay_offline" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	if status == "failed" || status == "" && fails {
		c.status, c.gatewayResponse = "failed", "Declined"
		if gateway.SimulatedLowBalance(c.phone) {
			c.gatewayResponse = "Insufficient Funds"
		}
	} else {
		c.status, c.gatewayResponse = "success", "Approved"
	}
	success := c.status == "success"
	s.mu.Unlock()
	if success {
		s.webhook(c, false)
	}
	return true
}

// claimedWebhook sends a charge.success webhook for a charge whatever its
// status (the status asked is ignored: Paystack's only event is success).
func (s *Simulator) claimedWebhook(reference, _ string) bool {
	s.mu.Lock()
	c := s.charges[reference]
	s.mu.Unlock()
	if c != nil {
		s.webhook(c, true)
	}
	return c != nil
}

// webhook sends charge.success, signed as Paystack signs: hex HMAC-SHA512
// of the raw body under the secret key; claimed: whatever the charge's
// status (a stale, early or out-of-order webhook).
func (s *Simulator) webhook(c *simCharge, claimed bool) {
	if s.WebhookURL == "" {
		return
	}
	data := s.data(c)
	if claimed {
		data["status"], data["gateway_response"] = "success", "Approved"
	}
	body, _ := json.Marshal(map[string]any{"event": "charge.success", "data": data})
	mac := hmac.New(sha512.New, []byte(s.SecretKey))
	mac.Write(body)
	gateway.PostCallback(s.WebhookURL, body, http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}})
}
