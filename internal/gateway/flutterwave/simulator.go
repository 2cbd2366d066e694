package flutterwave

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for Flutterwave's push mobile money charges and its
// transfers to mobile money wallets: bearer auth, input checks, unique
// tx_ref and transfer reference, outcomes by the payer's or recipient's
// number (gateway.SimulatedOutcome), settlement after SettleAfter or on
// POST /_sim/settle/{tx_ref or reference}, and the charge.completed or
// transfer.completed webhook carrying the secret hash in verif-hash to
// WebhookURL. A transfer to a number ending 0049 is refused at once for
// want of funds in the merchant's balance; 0039 is refused as an invalid
// wallet; 0029 fails once settled; 0129 never settles. POST
// /_sim/callback/{id} sends the webhook again, or with ?status= one
// claiming that status (stale, early or out of order); POST /_sim/fault
// injects faults.
type Simulator struct {
	SecretKey   string
	SecretHash  string
	WebhookURL  string
	SettleAfter time.Duration

	mu        sync.Mutex
	charges   map[string]*simCharge
	transfers map[string]*simTransfer // by reference
	nextID    int64
	payouts   int
	faults    gateway.Faults
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
		gateway.ServeSimControl(w, r, &s.faults, s.settleAny, s.resendAny)
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
	case r.Method == http.MethodPost && r.URL.Path == "/transfers":
		s.transfer(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/transfers":
		s.listTransfers(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transfers/"):
		if t := s.transferByID(strings.TrimPrefix(r.URL.Path, "/transfers/")); t != nil {
			gateway.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfer fetched", "data": s.transferData(t)})
			return
		}
		gateway.Reply(w, http.StatusNotFound, map[string]any{"status": "error", "message": "No transfer found", "data": nil})
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

// settleAny settles the charge or the transfer id names.
func (s *Simulator) settleAny(id, status string) bool {
	return s.settle(id, status) || s.settleTransfer(id, status)
}

// resendAny sends the webhook of the charge or the transfer id names.
func (s *Simulator) resendAny(id, status string) bool {
	return gateway.ResendCallback(&s.mu, s.charges, id, status, s.webhook) ||
		gateway.ResendCallback(&s.mu, s.transfers, id, status, s.transferWebhook)
}

// Payouts counts the transfers the simulator accepted (refusals and
// duplicates aside): each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payouts
}

type simTransfer struct {
	id                      int64
	reference, bank, number string
	name, currency          string
	amount                  json.Number
	status, message         string
}

// transferBankCodes are the account_bank codes the simulator takes.
var transferBankCodes = map[string]bool{"MPS": true, "MTN": true, "AIRTEL": true, "VODACOM": true, "TIGO": true, "HALOPESA": true}

func (s *Simulator) transferData(t *simTransfer) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"id": t.id, "account_number": t.number, "bank_code": t.bank, "full_name": t.name, "currency": t.currency,
		"amount": t.amount, "fee": 0, "status": t.status, "reference": t.reference, "complete_message": t.message,
		"requires_approval": 0, "is_approved": 1}
}

// transfer is POST /transfers.
func (s *Simulator) transfer(w http.ResponseWriter, r *http.Request) {
	var req transferRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "Invalid JSON", "data": nil})
		return
	}
	refuse, _, _ := gateway.SimulatedOutcome(req.AccountNumber)
	amount, err := req.Amount.Float64()
	bad := ""
	switch {
	case !transferBankCodes[req.AccountBank]:
		bad = "Invalid account_bank"
	case err != nil || amount <= 0:
		bad = "Invalid amount"
	case req.Reference == "" || len(req.Currency) != 3:
		bad = "reference and currency are required"
	case strings.TrimSpace(req.BeneficiaryName) == "":
		bad = "beneficiary_name is required"
	case strings.Trim(req.AccountNumber, "0123456789") != "" || len(req.AccountNumber) < 9 || len(req.AccountNumber) > 15:
		bad = "Invalid account_number: a mobile money number with its country code"
	}
	s.mu.Lock()
	if s.transfers == nil {
		s.transfers = map[string]*simTransfer{}
	}
	switch {
	case bad != "": // refused already
	case s.transfers[req.Reference] != nil:
		bad = "Payout with this ref already exists"
	case refuse:
		bad = "Invalid account_number: no mobile money wallet has this number"
	case gateway.SimulatedLowBalance(req.AccountNumber):
		bad = "Insufficient funds in customer wallet"
	}
	if bad != "" {
		s.mu.Unlock()
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": bad, "data": nil})
		return
	}
	s.nextID++
	s.payouts++
	t := &simTransfer{id: 500000 + s.nextID, reference: req.Reference, bank: req.AccountBank, number: req.AccountNumber,
		name: req.BeneficiaryName, currency: req.Currency, amount: req.Amount, status: "NEW"}
	s.transfers[req.Reference] = t
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settleTransfer(req.Reference, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfer Queued Successfully", "data": s.transferData(t)})
}

// listTransfers is GET /transfers, narrowed by ?reference=.
func (s *Simulator) listTransfers(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("reference")
	s.mu.Lock()
	var found []*simTransfer
	for _, t := range s.transfers {
		if ref == "" || t.reference == ref {
			found = append(found, t)
		}
	}
	s.mu.Unlock()
	data := []map[string]any{}
	for _, t := range found {
		data = append(data, s.transferData(t))
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfers fetched",
		"meta": map[string]any{"page_info": map[string]int{"total": len(data), "current_page": 1, "total_pages": 1}}, "data": data})
}

func (s *Simulator) transferByID(id string) *simTransfer {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.transfers {
		if t.id == n {
			return t
		}
	}
	return nil
}

// settleTransfer ends a transfer as its number says, or as status says
// (FAILED fails it, any other succeeds), and sends its webhook.
func (s *Simulator) settleTransfer(reference, status string) bool {
	s.mu.Lock()
	t := s.transfers[reference]
	if t == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := gateway.SimulatedOutcome(t.number)
	if t.status != "NEW" && t.status != "PENDING" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	if strings.EqualFold(status, "FAILED") || status == "" && fails {
		t.status, t.message = "FAILED", "DISBURSE FAILED: Unable to obtain user details"
	} else {
		t.status, t.message = "SUCCESSFUL", "Transaction was successful"
	}
	s.mu.Unlock()
	s.transferWebhook(t, "")
	return true
}

// transferWebhook sends transfer.completed with the secret hash in
// verif-hash, claiming status when given.
func (s *Simulator) transferWebhook(t *simTransfer, status string) {
	if s.WebhookURL == "" {
		return
	}
	data := s.transferData(t)
	if status != "" {
		data["status"] = status
	}
	body, _ := json.Marshal(map[string]any{"event": "transfer.completed", "data": data})
	gateway.PostCallback(s.WebhookURL, body, http.Header{"Verif-Hash": {s.SecretHash}})
}
