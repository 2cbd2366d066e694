package paystack

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for Paystack's mobile money charges and transfers:
// bearer auth with the secret key, input checks, unique references,
// outcomes by the payer's or the recipient's number
// (gateway.SimulatedOutcome), settlement after SettleAfter or on POST
// /_sim/settle/{reference}[?status=], and webhooks signed with the secret
// key (x-paystack-signature) to WebhookURL: charge.success, and
// transfer.success, transfer.failed or transfer.reversed. A transfer to a
// number ending 0039 is refused ("can't make the transfer to this
// recipient"), one ending 0049 is refused for want of balance, one ending
// 0029 fails once settled, one ending 0129 never settles. POST
// /_sim/callback/{reference}[?status=] sends a webhook whatever the
// payment's status (stale, early or out of order): charge.success for a
// charge; for a transfer, the one its status or the status asked names
// (success while it is pending). POST /_sim/fault injects faults
// (gateway.Faults).
type Simulator struct {
	SecretKey   string
	WebhookURL  string
	SettleAfter time.Duration

	mu         sync.Mutex
	charges    map[string]*simCharge
	recipients map[string]*simRecipient // by recipient_code
	transfers  map[string]*simTransfer  // by reference
	nextID     int64
	payouts    int
	faults     gateway.Faults
}

type simCharge struct {
	id                      int64
	reference, phone        string
	status, gatewayResponse string
}

// simRecipient is a transfer recipient: a mobile money wallet.
type simRecipient struct {
	code, name, account, bank, currency string
}

// simTransfer is a transfer from the merchant's balance to a recipient.
type simTransfer struct {
	id                      int64
	reference, code, reason string
	amount                  int64
	recipient               *simRecipient
	status, gatewayResponse string
}

var providers = map[string]bool{"mtn": true, "atl": true, "vod": true, "mpesa": true, "mpesa_offline": true}

// momoBanks are the mobile money telcos a recipient may have, by currency.
var momoBanks = map[string]map[string]bool{"GHS": {"MTN": true, "ATL": true, "VOD": true}, "KES": {"MPESA": true}}

// transferRef is what Paystack allows in a transfer reference.
var transferRef = regexp.MustCompile(`^[a-z0-9_-]{1,100}$`)

// Payouts counts the transfers the simulator accepted: each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payouts
}

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
	case r.Method == http.MethodPost && r.URL.Path == "/transferrecipient":
		s.recipient(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/transfer":
		s.transfer(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transfer/verify/"):
		s.mu.Lock()
		var out any = map[string]any{"status": false, "message": "Transfer not found"}
		code := http.StatusNotFound
		if t := s.transfers[strings.TrimPrefix(r.URL.Path, "/transfer/verify/")]; t != nil {
			out, code = map[string]any{"status": true, "message": "Transfer retrieved", "data": t.object()}, http.StatusOK
		}
		s.mu.Unlock()
		gateway.Reply(w, code, out)
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
		time.AfterFunc(s.SettleAfter, func() { s.settleCharge(req.Reference, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Charge attempted", "data": map[string]any{
		"reference": req.Reference, "status": "pay_offline", "display_text": "Please complete authorization process on your mobile phone"}})
}

// settle settles the charge or the transfer with this reference.
func (s *Simulator) settle(reference, status string) bool {
	return s.settleCharge(reference, status) || s.settleTransfer(reference, status)
}

func (s *Simulator) settleCharge(reference, status string) bool {
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
// status (the status asked is ignored: Paystack's only charge event is
// success), or a transfer's webhook claiming status (by default its own,
// success while it is pending).
func (s *Simulator) claimedWebhook(reference, status string) bool {
	s.mu.Lock()
	c, t := s.charges[reference], s.transfers[reference]
	var body []byte
	if t != nil {
		if status == "" && t.status == "pending" {
			status = "success"
		}
		body = t.event(status)
	}
	s.mu.Unlock()
	if c != nil {
		s.webhook(c, true)
	}
	s.post(body)
	return c != nil || t != nil
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
	s.post(body)
}

// post sends a webhook body, if any, signed as Paystack signs: hex
// HMAC-SHA512 of the raw body under the secret key.
func (s *Simulator) post(body []byte) {
	if s.WebhookURL == "" || body == nil {
		return
	}
	mac := hmac.New(sha512.New, []byte(s.SecretKey))
	mac.Write(body)
	gateway.PostCallback(s.WebhookURL, body, http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}})
}

// recipient is POST /transferrecipient: a mobile money wallet, the same
// recipient again for an account already known.
func (s *Simulator) recipient(w http.ResponseWriter, r *http.Request) {
	var req recipientRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	bad := ""
	switch {
	case req.Type != "mobile_money":
		bad = "Invalid recipient type"
	case strings.TrimSpace(req.Name) == "":
		bad = "Name is required"
	case !momoBanks[req.Currency][req.BankCode]:
		bad = "Bank code is invalid"
	case len(req.AccountNumber) != 10 || req.AccountNumber[0] != '0' || strings.Trim(req.AccountNumber, "0123456789") != "":
		bad = "Account number is invalid"
	}
	if bad != "" {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
		return
	}
	s.mu.Lock()
	if s.recipients == nil {
		s.recipients = map[string]*simRecipient{}
	}
	var rec *simRecipient
	for _, known := range s.recipients {
		if known.account == req.AccountNumber && known.bank == req.BankCode && known.currency == req.Currency {
			rec = known
		}
	}
	if rec == nil {
		s.nextID++
		rec = &simRecipient{code: fmt.Sprintf("RCP_sim%08d", s.nextID), name: req.Name, account: req.AccountNumber, bank: req.BankCode, currency: req.Currency}
		s.recipients[rec.code] = rec
	}
	data := rec.object()
	s.mu.Unlock()
	gateway.Reply(w, http.StatusCreated, map[string]any{"status": true, "message": "Transfer recipient created successfully", "data": data})
}

// transfer is POST /transfer: checked (its balance too, by the
// recipient's number) before it is recorded, pending.
func (s *Simulator) transfer(w http.ResponseWriter, r *http.Request) {
	var req transferRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.recipients[req.Recipient]
	bad := ""
	switch {
	case req.Source != "balance":
		bad = "Invalid source"
	case req.Amount <= 0:
		bad = "Invalid amount"
	case !transferRef.MatchString(req.Reference):
		bad = "Your reference contains illegal special characters"
	case rec == nil:
		bad = "Recipient specified is invalid"
	case req.Currency != "" && req.Currency != rec.currency:
		bad = "Currency does not match the recipient's"
	case s.transfers[req.Reference] != nil:
		bad = "Duplicate Transfer Reference"
	case refused(rec.account):
		bad = "Sorry, we can't make the transfer to this recipient at the moment"
	case gateway.SimulatedLowBalance(rec.account):
		bad = "Your balance is not enough to fulfil this request"
	}
	if bad != "" {
		gateway.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
		return
	}
	if s.transfers == nil {
		s.transfers = map[string]*simTransfer{}
	}
	s.nextID++
	t := &simTransfer{id: 5000000 + s.nextID, reference: req.Reference, code: fmt.Sprintf("TRF_sim%08d", s.nextID), reason: req.Reason,
		amount: req.Amount, recipient: rec, status: "pending"}
	s.transfers[req.Reference] = t
	s.payouts++
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settleTransfer(req.Reference, "") })
	}
	gateway.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Transfer has been queued", "data": t.object()})
}

// settleTransfer ends a pending transfer as its recipient's number says,
// or as status (success, failed, reversed) says, and sends its webhook.
func (s *Simulator) settleTransfer(reference, status string) bool {
	s.mu.Lock()
	t := s.transfers[reference]
	if t == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := gateway.SimulatedOutcome(t.recipient.account)
	if t.status != "pending" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	switch {
	case status == "failed" || status == "reversed" || status == "" && fails:
		t.status, t.gatewayResponse = cmp.Or(status, "failed"), "The recipient's wallet could not be credited"
	default:
		t.status = "success"
	}
	body := t.event("")
	s.mu.Unlock()
	s.post(body)
	return true
}

func refused(phone string) bool { r, _, _ := gateway.SimulatedOutcome(phone); return r }

// object is the recipient as Paystack shows it.
func (r *simRecipient) object() map[string]any {
	return map[string]any{"active": true, "currency": r.currency, "name": r.name, "recipient_code": r.code, "type": "mobile_money",
		"details": map[string]any{"account_number": r.account, "bank_code": r.bank}}
}

// object is the transfer as Paystack shows it (the caller holds the lock).
func (t *simTransfer) object() map[string]any {
	var words any
	if t.gatewayResponse != "" {
		words = t.gatewayResponse
	}
	return map[string]any{"id": t.id, "reference": t.reference, "transfer_code": t.code, "status": t.status, "amount": t.amount,
		"currency": t.recipient.currency, "source": "balance", "reason": t.reason, "gateway_response": words, "recipient": t.recipient.object()}
}

// event is the transfer's webhook body, claiming status when given (the
// caller holds the lock).
func (t *simTransfer) event(status string) []byte {
	data := t.object()
	status = cmp.Or(status, t.status)
	data["status"] = status
	body, _ := json.Marshal(map[string]any{"event": "transfer." + status, "data": data})
	return body
}
