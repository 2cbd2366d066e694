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

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for Paystack's mobile money charges and transfers:
// bearer auth with the secret key, input checks, unique references, and
// the charge's steps as Paystack documents them. A Telecel Cash (vod)
// charge answers send_otp and waits for the customer's voucher at POST
// /charge/submit_otp (000000 is a wrong voucher: the charge fails, as
// submit_otp's documented failed answer has it; any other six digits are
// taken and the charge goes pending); every other charge answers
// pay_offline, the customer approving on the phone. GET /charge/{reference}
// tells a charge's step, GET /transaction/verify/{reference} its
// transaction (ongoing while a voucher is awaited, pending while the
// customer approves). Outcomes go by the payer's or the recipient's number
// (sim.Outcome): settlement after SettleAfter (once the
// voucher is in, for Telecel) or on POST /_sim/settle/{reference}[?status=],
// and webhooks signed with the secret key (x-paystack-signature) to
// WebhookURL: charge.success, and transfer.success, transfer.failed or
// transfer.reversed. A transfer to a number ending 0039 is refused ("can't
// make the transfer to this recipient"), one ending 0049 is refused for want
// of balance, one ending 0029 fails once settled, one ending 0129 never
// settles. POST /_sim/callback/{reference}[?status=] sends a webhook
// whatever the payment's status (stale, early or out of order):
// charge.success for a charge; for a transfer, the one its status or the
// status asked names (success while it is pending). POST /_sim/fault
// injects faults (sim.Faults). Paystack publishes no mobile money test
// numbers that this simulator could follow: the number endings are the
// project's own, shared by every simulator.
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
	faults     sim.Faults
}

// simCharge is a charge at one of its steps: send_otp, pay_offline,
// pending, success or failed.
type simCharge struct {
	id                      int64
	reference, phone        string
	status, gatewayResponse string
	displayText             string
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

// providers are the mobile money providers a charge may name, by currency
// (Paystack's samples write them in either case: "mtn", "MTN").
var providers = map[string]map[string]bool{"GHS": {"mtn": true, "atl": true, "vod": true}, "KES": {"mpesa": true, "mpesa_offline": true}}

// chargePhones are the payer numbers a charge may carry, by currency:
// Ghana's national form (0551234987), Kenya's 254... with or without its +.
var chargePhones = map[string]*regexp.Regexp{"GHS": regexp.MustCompile(`^0\d{9}$`), "KES": regexp.MustCompile(`^\+?254\d{9}$`)}

// chargeRef is what Paystack allows in a charge's reference: -, ., = and
// alphanumerics.
var chargeRef = regexp.MustCompile(`^[A-Za-z0-9.=-]{1,100}$`)

// wrongVoucher is the voucher the simulator refuses.
const wrongVoucher = "000000"

// voucher is a voucher's form: six digits.
var voucher = regexp.MustCompile(`^\d{6}$`)

// The customer's instructions the simulator gives, in its own words.
const (
	voucherText = "Dial *110# and choose the option for a payment voucher, then enter the voucher here"
	approveText = "Approve the payment on your phone to complete it"
)

// momoBanks are the mobile money telcos a recipient may have, by currency.
var momoBanks = map[string]map[string]bool{"GHS": {"MTN": true, "ATL": true, "VOD": true}, "KES": {"MPESA": true}}

// transferRef is what Paystack allows in a transfer reference: lowercase
// alphanumerics, - and _, at least 16 of them.
var transferRef = regexp.MustCompile(`^[a-z0-9_-]{16,100}$`)

// Payouts counts the transfers the simulator accepted: each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payouts
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		sim.ServeSimControl(w, r, &s.faults, s.settle, s.claimedWebhook)
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		sim.Reply(w, http.StatusUnauthorized, map[string]any{"status": false, "message": "Invalid key"})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/charge":
		s.charge(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/charge/submit_otp":
		s.submitOTP(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/charge/"):
		s.mu.Lock()
		var out any = map[string]any{"status": false, "message": "Charge not found"}
		code := http.StatusNotFound
		if c := s.charges[strings.TrimPrefix(r.URL.Path, "/charge/")]; c != nil {
			out, code = map[string]any{"status": true, "message": "Reference check successful", "data": c.step()}, http.StatusOK
		}
		s.mu.Unlock()
		sim.Reply(w, code, out)
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
		sim.Reply(w, code, out)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transaction/verify/"):
		s.mu.Lock()
		c := s.charges[strings.TrimPrefix(r.URL.Path, "/transaction/verify/")]
		s.mu.Unlock()
		if c == nil {
			sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Transaction reference not found",
				"type": "validation_error", "code": "transaction_not_found"})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Verification successful", "data": s.data(c)})
	default:
		http.NotFound(w, r)
	}
}

// data is the charge's transaction as Verify Transaction shows it.
func (s *Simulator) data(c *simCharge) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	status := c.status
	switch status {
	case "send_otp":
		status = "ongoing"
	case "pay_offline":
		status = "pending"
	}
	return map[string]any{"id": c.id, "reference": c.reference, "status": status, "gateway_response": c.gatewayResponse, "channel": "mobile_money"}
}

// step is the charge as the Charge API shows it (the caller holds the lock).
func (c *simCharge) step() map[string]any {
	data := map[string]any{"reference": c.reference, "status": c.status}
	switch c.status {
	case "send_otp", "pay_offline":
		data["display_text"] = c.displayText
	case "failed":
		data["message"] = c.gatewayResponse
	case "success":
		data["id"], data["gateway_response"] = c.id, c.gatewayResponse
	}
	return data
}

func (s *Simulator) charge(w http.ResponseWriter, r *http.Request) {
	var req chargeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	refuse, _, _ := sim.Outcome(req.MobileMoney.Phone)
	provider := strings.ToLower(req.MobileMoney.Provider)
	bad := ""
	switch {
	case req.Amount <= 0:
		bad = "Invalid amount"
	case !strings.Contains(req.Email, "@"):
		bad = "Invalid Email Address Passed"
	case !chargeRef.MatchString(req.Reference):
		bad = "Invalid reference"
	case providers[req.Currency] == nil:
		bad = "Currency not supported by merchant"
	case !providers[req.Currency][provider]:
		bad = "Invalid mobile money provider"
	case refuse || !chargePhones[req.Currency].MatchString(req.MobileMoney.Phone):
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
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
		return
	}
	s.nextID++
	c := &simCharge{id: 4000000 + s.nextID, reference: req.Reference, phone: req.MobileMoney.Phone, status: "pay_offline", displayText: approveText}
	if provider == "vod" {
		c.status, c.displayText = "send_otp", voucherText
	}
	s.charges[req.Reference] = c
	data := c.step()
	s.mu.Unlock()
	if c.status == "pay_offline" {
		s.settleLater(req.Reference)
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Charge attempted", "data": data})
}

// settleLater settles a charge after SettleAfter, when set.
func (s *Simulator) settleLater(reference string) {
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settleCharge(reference, "") })
	}
}

// submitOTP is POST /charge/submit_otp: the voucher of a charge at
// send_otp. A wrong one fails the charge; a right one sends it pending.
func (s *Simulator) submitOTP(w http.ResponseWriter, r *http.Request) {
	var req submitOTP
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	s.mu.Lock()
	c := s.charges[req.Reference]
	if c == nil || c.status != "send_otp" {
		s.mu.Unlock()
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Transaction reference is invalid"})
		return
	}
	if req.OTP == wrongVoucher || !voucher.MatchString(req.OTP) {
		c.status, c.gatewayResponse = "failed", "The voucher is invalid or has expired"
	} else {
		c.status = "pending"
	}
	data := c.step()
	s.mu.Unlock()
	if c.status == "pending" {
		s.settleLater(req.Reference)
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Charge attempted", "data": data})
}

// settle settles the charge or the transfer with this reference.
func (s *Simulator) settle(reference, status string) bool {
	return s.settleCharge(reference, status) || s.settleTransfer(reference, status)
}

// settleCharge ends a charge waiting for the customer's approval (or, with
// status failed, one still waiting for its voucher) as the payer's number
// says, or as status (success, failed) says.
func (s *Simulator) settleCharge(reference, status string) bool {
	s.mu.Lock()
	c := s.charges[reference]
	if c == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := sim.Outcome(c.phone)
	waiting := c.status == "pay_offline" || c.status == "pending" || c.status == "send_otp" && status == "failed"
	if !waiting || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	if status == "failed" || status == "" && fails {
		c.status, c.gatewayResponse = "failed", "Declined"
		if sim.LowBalance(c.phone) {
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
	sim.PostCallback(s.WebhookURL, body, http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}})
}

// recipient is POST /transferrecipient: a mobile money wallet, the same
// recipient again for an account already known.
func (s *Simulator) recipient(w http.ResponseWriter, r *http.Request) {
	var req recipientRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
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
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
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
	sim.Reply(w, http.StatusCreated, map[string]any{"status": true, "message": "Transfer recipient created successfully", "data": data})
}

// transfer is POST /transfer: checked (its balance too, by the
// recipient's number) before it is recorded, pending.
func (s *Simulator) transfer(w http.ResponseWriter, r *http.Request) {
	var req transferRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
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
	case len(req.Reference) < 16:
		bad = "The reference must have at least 16 characters"
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
	case sim.LowBalance(rec.account):
		bad = "Your balance is not enough to fulfil this request"
	}
	if bad != "" {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
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
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Transfer has been queued", "data": t.object()})
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
	_, fails, stuck := sim.Outcome(t.recipient.account)
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

func refused(phone string) bool { r, _, _ := sim.Outcome(phone); return r }

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
