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
// (sim.Outcome): settlement after SettleAfter (once the voucher is in, for
// Telecel) or on POST /_sim/settle/{reference}[?status=], and webhooks
// signed with the secret key (x-paystack-signature) to WebhookURL:
// charge.success, and transfer.success, transfer.failed or
// transfer.reversed, the only events Paystack documents for them. A
// transfer to a number ending 0039 is refused ("can't make the transfer to
// this recipient"), one ending 0049 is refused for want of balance, one
// ending 0029 fails once settled, one ending 0129 never settles. Refunds
// (POST /refund, GET /refund/{id}) give back a successful charge in parts,
// never more than is left; each starts pending and ends processed (or as
// settled: processing, needs-attention, failed) with its refund.* webhook.
//
// Control calls (sim.Book) take a payment's reference, Paystack's id or a
// transfer's transfer_code. ?status= takes Paystack's words: a charge's
// steps send_otp and pay_offline, a transfer's otp and received (openapi
// paths/transfer.yaml), pending, and the final success, failed,
// abandoned, reversed, blocked and rejected. POST /_sim/callback/{reference}
// [?status=] sends a webhook whatever the payment's status (stale, early
// or out of order): charge.success for a charge that has not failed (or
// with any status asked); for a transfer, the event its status or the
// status asked names (success while it is not final). POST /_sim/fault
// injects faults (sim.Faults). Paystack's own sample numbers
// (doc-code-snippets: 0551234987 for Ghana, 254700000000 for Kenya) pay;
// the number endings are the project's own, shared by every simulator:
// Paystack's material at hand publishes no mobile money test numbers.
type Simulator struct {
	SecretKey   string
	WebhookURL  string
	SettleAfter time.Duration

	// Book holds the charges and the transfers (Payout), by Paystack's
	// id, found by their reference too.
	sim.Book[simPayment]
	once       sync.Once
	mu         sync.Mutex
	recipients map[string]*simRecipient // by recipient_code
	refunding  sync.Mutex               // one refund at a time: what is left sees the others
}

// simPayment is Paystack's own of a charge or a transfer.
type simPayment struct {
	id              int64
	reference       string
	amount          int64
	currency        string
	gatewayResponse string
	displayText     string       // a charge's instructions to the customer
	code, reason    string       // a transfer's transfer_code and reason
	recipient       simRecipient // a transfer's
	refundOf        int64        // a refund's transaction (Paystack's id); 0 for a charge or a transfer
	note            string       // a refund's merchant_note
}

// simRecipient is a transfer recipient: a mobile money wallet.
type simRecipient struct {
	code, name, account, bank, currency string
}

// transferEvents are the transfer webhooks Paystack documents
// (doc-code-snippets src/doc/payments/webhooks/events: transfer-successful,
// transfer-failed, transfer-reversed).
var transferEvents = map[string]bool{"success": true, "failed": true, "reversed": true}

// ready sets the book to Paystack's lifecycle on the first request: a
// charge starts at send_otp or pay_offline (pending once its voucher is
// in), a transfer pending; both end success or failed, or abandoned,
// reversed, blocked or rejected.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simPayment]{
			Pending: "pending", Succeeded: "success", Failed: "failed",
			Steps:   []string{"send_otp", "pay_offline", "otp", "received", "processing", "needs-attention"},
			Finals:  []string{"abandoned", "reversed", "blocked", "rejected", "processed"},
			Outcome: simOutcome, End: simEnd, Notify: s.webhook,
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// simOutcome is how a payment ends by its number; a charge waiting for its
// voucher cannot be approved yet.
func simOutcome(m *sim.Movement[simPayment]) (string, bool) {
	_, fails, stuck := sim.Outcome(m.Phone)
	switch {
	case m.Status == "send_otp" || stuck:
		return "", true
	case fails:
		return "failed", false
	case m.Data.refundOf != 0:
		return "processed", false
	}
	return "", false
}

// simEnd gives a payment the processor's words as it ends.
func simEnd(m *sim.Movement[simPayment]) {
	p := &m.Data
	switch {
	case p.gatewayResponse != "":
	case m.Payout && (m.Status == "failed" || m.Status == "reversed"):
		p.gatewayResponse = "The recipient's wallet could not be credited"
	case m.Payout, m.Data.refundOf != 0:
	case m.Status == "success":
		p.gatewayResponse = "Approved"
	case sim.LowBalance(m.Phone):
		p.gatewayResponse = "Insufficient Funds"
	default:
		p.gatewayResponse = "Declined"
	}
}

// webhook is the payment's webhook, claiming status when given, signed as
// Paystack signs: hex HMAC-SHA512 of the raw body under the secret key.
func (s *Simulator) webhook(m *sim.Movement[simPayment], claim string) sim.Note {
	var body []byte
	switch status := cmp.Or(claim, m.Status); {
	case m.Data.refundOf != 0:
		body, _ = json.Marshal(map[string]any{"event": "refund." + status, "data": refundEvent(m, status)})
	case m.Payout:
		if !s.Final(status) {
			status = "success"
		}
		if transferEvents[status] {
			data := transferOf(m)
			data["status"] = status
			body, _ = json.Marshal(map[string]any{"event": "transfer." + status, "data": data})
		}
	case claim != "" || !s.Final(status) || status == "success":
		data := transaction(m)
		data["status"], data["gateway_response"] = "success", "Approved"
		body, _ = json.Marshal(map[string]any{"event": "charge.success", "data": data})
	}
	if s.WebhookURL == "" || body == nil {
		return sim.Note{}
	}
	mac := hmac.New(sha512.New, []byte(s.SecretKey))
	mac.Write(body)
	return sim.Note{URL: s.WebhookURL, Body: body, Header: http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}}}
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

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	if s.Intercept(w, r) {
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
		if m, ok := s.find(strings.TrimPrefix(r.URL.Path, "/charge/"), false); ok {
			sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Reference check successful", "data": step(&m)})
			return
		}
		sim.Reply(w, http.StatusNotFound, map[string]any{"status": false, "message": "Charge not found"})
	case r.Method == http.MethodPost && r.URL.Path == "/refund":
		s.refund(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/refund/"):
		if m, ok := s.View(strings.TrimPrefix(r.URL.Path, "/refund/")); ok && m.Data.refundOf != 0 {
			sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Refund retrieved", "data": refundObject(&m)})
			return
		}
		sim.Reply(w, http.StatusNotFound, map[string]any{"status": false, "message": "Refund not found"})
	case r.Method == http.MethodPost && r.URL.Path == "/transferrecipient":
		s.recipient(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/transfer":
		s.transfer(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transfer/verify/"):
		if m, ok := s.find(strings.TrimPrefix(r.URL.Path, "/transfer/verify/"), true); ok {
			sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Transfer retrieved", "data": transferOf(&m)})
			return
		}
		sim.Reply(w, http.StatusNotFound, map[string]any{"status": false, "message": "Transfer not found"})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transaction/verify/"):
		if m, ok := s.find(strings.TrimPrefix(r.URL.Path, "/transaction/verify/"), false); ok {
			sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Verification successful", "data": transaction(&m)})
			return
		}
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Transaction reference not found",
			"type": "validation_error", "code": "transaction_not_found"})
	default:
		http.NotFound(w, r)
	}
}

// find returns the charge, or the transfer, Paystack knows by this
// reference (not by its id, which only control calls take).
func (s *Simulator) find(reference string, transfer bool) (sim.Movement[simPayment], bool) {
	m, ok := s.View(reference)
	return m, ok && m.Payout == transfer && m.Data.refundOf == 0 && m.Data.reference == reference
}

// transaction is the charge's transaction as Verify Transaction shows it.
func transaction(m *sim.Movement[simPayment]) map[string]any {
	status := m.Status
	switch status {
	case "send_otp":
		status = "ongoing"
	case "pay_offline":
		status = "pending"
	}
	p := &m.Data
	data := map[string]any{"id": p.id, "reference": p.reference, "status": status, "gateway_response": p.gatewayResponse,
		"channel": "mobile_money", "amount": p.amount, "currency": p.currency}
	if status == "success" {
		data["paid_at"] = m.Ended.UTC().Format(time.RFC3339)
	}
	return data
}

// step is the charge as the Charge API shows it.
func step(m *sim.Movement[simPayment]) map[string]any {
	p := &m.Data
	data := map[string]any{"reference": p.reference, "status": m.Status}
	switch m.Status {
	case "send_otp", "pay_offline":
		data["display_text"] = p.displayText
	case "failed":
		data["message"] = p.gatewayResponse
	case "success":
		data["id"], data["gateway_response"] = p.id, p.gatewayResponse
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
	if bad != "" {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": bad})
		return
	}
	id := int64(4000000 + s.Next())
	m := &sim.Movement[simPayment]{ID: fmt.Sprint(id), Phone: req.MobileMoney.Phone, Status: "pay_offline",
		Data: simPayment{id: id, reference: req.Reference, amount: req.Amount, currency: req.Currency, displayText: approveText}}
	if provider == "vod" { // held until its voucher is in
		m.Status, m.Held, m.Data.displayText = "send_otp", true, voucherText
	}
	if _, added := s.Add(m, req.Reference); !added {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Duplicate Transaction Reference"})
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Charge attempted", "data": step(m)})
}

// submitOTP is POST /charge/submit_otp: the voucher of a charge at
// send_otp. A wrong one fails the charge; a right one sends it pending,
// to settle after SettleAfter.
func (s *Simulator) submitOTP(w http.ResponseWriter, r *http.Request) {
	var req submitOTP
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	waiting, wrong := false, req.OTP == wrongVoucher || !voucher.MatchString(req.OTP)
	s.Update(req.Reference, func(m *sim.Movement[simPayment]) {
		if waiting = !m.Payout && m.Data.reference == req.Reference && m.Status == "send_otp"; !waiting {
			return
		}
		if wrong {
			m.Data.gatewayResponse = "The voucher is invalid or has expired"
		} else {
			m.Status = "pending"
		}
	})
	switch {
	case !waiting:
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Transaction reference is invalid"})
		return
	case wrong:
		s.Settle(req.Reference, "failed")
	default:
		s.Release(req.Reference)
	}
	m, _ := s.View(req.Reference)
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Charge attempted", "data": step(&m)})
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
		rec = &simRecipient{code: fmt.Sprintf("RCP_sim%08d", s.Next()), name: req.Name, account: req.AccountNumber, bank: req.BankCode, currency: req.Currency}
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
	rec := s.recipients[req.Recipient]
	s.mu.Unlock()
	_, known := s.View(req.Reference)
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
	case known:
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
	n := s.Next()
	m := &sim.Movement[simPayment]{ID: fmt.Sprint(5000000 + n), Payout: true, Phone: rec.account, Data: simPayment{id: int64(5000000 + n),
		reference: req.Reference, amount: req.Amount, currency: rec.currency, code: fmt.Sprintf("TRF_sim%08d", n), reason: req.Reason, recipient: *rec}}
	if _, added := s.Add(m, req.Reference, m.Data.code); !added { // the same reference in between
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Duplicate Transfer Reference"})
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Transfer has been queued", "data": transferOf(m)})
}

func refused(phone string) bool { r, _, _ := sim.Outcome(phone); return r }

// object is the recipient as Paystack shows it.
func (r *simRecipient) object() map[string]any {
	return map[string]any{"active": true, "currency": r.currency, "name": r.name, "recipient_code": r.code, "type": "mobile_money",
		"details": map[string]any{"account_number": r.account, "bank_code": r.bank}}
}

// transferOf is the transfer as Paystack shows it.
func transferOf(m *sim.Movement[simPayment]) map[string]any {
	p := &m.Data
	var words any
	if p.gatewayResponse != "" {
		words = p.gatewayResponse
	}
	return map[string]any{"id": p.id, "reference": p.reference, "transfer_code": p.code, "status": m.Status, "amount": p.amount,
		"currency": p.currency, "source": "balance", "reason": p.reason, "gateway_response": words, "recipient": p.recipient.object()}
}

// refund is POST /refund (openapi paths/refund.yaml, RefundCreate.yaml):
// transaction, the transaction's reference or id, is required; the
// transaction must be a charge that succeeded; currency, when given, must
// be the transaction's; amount (subunits), when given, may not exceed what
// is left of the transaction (its amount less its refunds that have not
// failed; RefundCreate.yaml: "It cannot be more than the original
// transaction amount", silent about several parts: the conservative
// reading); without it, the rest is refunded. Refusals are status false
// with a message, HTTP 400, in the simulator's own words (Paystack
// documents no refusal). Paystack takes no idempotency key: each request
// is a new refund, answered pending with its id; it ends processed (or
// as settled) after SettleAfter or on /_sim/settle/{id}, with a refund.*
// webhook naming the transaction's reference.
func (s *Simulator) refund(w http.ResponseWriter, r *http.Request) {
	var req refundRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": "Invalid JSON"})
		return
	}
	refuse := func(msg string) { sim.Reply(w, http.StatusBadRequest, map[string]any{"status": false, "message": msg}) }
	if strings.TrimSpace(req.Transaction) == "" {
		refuse("Transaction reference or id is required")
		return
	}
	s.refunding.Lock()
	defer s.refunding.Unlock()
	tx, ok := s.View(req.Transaction)
	switch {
	case !ok || tx.Payout || tx.Data.refundOf != 0:
		refuse("Transaction not found")
		return
	case tx.Status != "success":
		refuse("Cannot refund a transaction that was not successful")
		return
	case req.Currency != "" && req.Currency != tx.Data.currency:
		refuse("Currency does not match the transaction's")
		return
	case req.Amount < 0:
		refuse("Invalid amount")
		return
	}
	left := tx.Data.amount
	for _, o := range s.Find(func(m *sim.Movement[simPayment]) bool { return m.Data.refundOf == tx.Data.id && m.Status != "failed" }) {
		left -= o.Data.amount
	}
	amount := req.Amount
	if amount == 0 {
		amount = left
	}
	switch {
	case left <= 0:
		refuse("Transaction has been fully reversed")
		return
	case amount > left:
		refuse(fmt.Sprintf("Refund amount cannot be more than %d, what is left of the transaction", left))
		return
	}
	id := int64(6000000 + s.Next())
	m := &sim.Movement[simPayment]{ID: fmt.Sprint(id), Phone: tx.Phone, Data: simPayment{id: id, reference: tx.Data.reference,
		amount: amount, currency: tx.Data.currency, refundOf: tx.Data.id, note: req.MerchantNote}}
	s.Add(m)
	data := refundObject(m)
	data["transaction"] = map[string]any{"id": tx.Data.id, "reference": tx.Data.reference, "amount": tx.Data.amount,
		"currency": tx.Data.currency, "channel": "mobile_money"}
	sim.Reply(w, http.StatusOK, map[string]any{"status": true, "message": "Refund has been queued for processing", "data": data})
}

// refundObject is the refund as Fetch Refund shows it.
func refundObject(m *sim.Movement[simPayment]) map[string]any {
	p := &m.Data
	data := map[string]any{"id": p.id, "transaction": p.refundOf, "transaction_reference": p.reference, "amount": p.amount,
		"currency": p.currency, "status": m.Status, "merchant_note": p.note, "domain": "live", "refunded_at": nil,
		"createdAt": m.Created.UTC().Format(time.RFC3339)}
	if m.Status == "processed" {
		data["refunded_at"] = m.Ended.UTC().Format(time.RFC3339)
	}
	return data
}

// refundEvent is a refund webhook's data as Paystack's samples show it
// (doc-code-snippets src/doc/payments/refunds/events): the transaction's
// reference, the processor's refund_reference once processed, and the
// refund's id only in needs-attention's.
func refundEvent(m *sim.Movement[simPayment], status string) map[string]any {
	p := &m.Data
	data := map[string]any{"status": status, "transaction_reference": p.reference, "refund_reference": nil, "amount": p.amount,
		"currency": p.currency, "processor": "mobile_money", "domain": "live"}
	switch status {
	case "processed", "failed":
		data["refund_reference"] = fmt.Sprintf("RRF_sim%d", p.id)
	case "needs-attention":
		data["id"] = fmt.Sprint(p.id)
	}
	return data
}

// Refunds counts the refunds the simulator made (each gives money back).
func (s *Simulator) Refunds() int {
	return len(s.Find(func(m *sim.Movement[simPayment]) bool { return m.Data.refundOf != 0 }))
}
