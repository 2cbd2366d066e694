package flutterwave

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

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for Flutterwave's mobile money charges and its
// transfers to mobile money wallets: bearer auth, input checks (each
// charge type's currency and documented networks, a transfer's
// account_bank per currency), unique tx_ref and transfer reference,
// outcomes by the payer's or recipient's number (sim.Outcome), and the
// charge.completed or transfer.completed webhook carrying the secret hash
// in verif-hash to WebhookURL once one ends.
//
// Its lifecycle, in Flutterwave's words: a charge is pending, then
// successful or failed; a transfer is NEW (queued), may be PENDING, then
// SUCCESSFUL or FAILED (testdata/SOURCES.md).
//
// As Flutterwave documents it, a charge in Uganda, Rwanda, Zambia or Ghana
// answers only meta.authorization {mode "redirect", redirect}: no data, no
// id; the customer authorizes on that page (here /_sim/pay/{tx_ref}: the
// test-mode OTP and pay, or decline, then back to the charge's
// redirect_url), and the charge waits for it. Tanzania and M-Pesa answer the pending charge in data;
// francophone charges answer it with meta.authorization mode "callback".
// A charge is read back by tx_ref.
//
// GET /transfers lists the transfers newest first, ten a page (?page=),
// narrowed by ?status= only: Flutterwave documents no reference filter, so
// the simulator has none. A transfer to a number ending 0049 is refused at
// once for want of funds in the merchant's balance; 0039 is refused as an
// invalid wallet; 0029 fails once settled; 0129 never settles.
//
// A charge or a transfer settles after SettleAfter (a redirect charge
// once authorized), or on POST /_sim/settle/{tx_ref, transfer reference
// or Flutterwave id}[?status=]: successful or failed (either case) end it,
// PENDING only moves a transfer there. POST /_sim/callback/{...} sends the
// webhook again, or with ?status= one claiming that status (stale, early
// or out of order); POST /_sim/fault injects faults.
type Simulator struct {
	SecretKey   string
	SecretHash  string
	WebhookURL  string
	SettleAfter time.Duration

	// Book holds the charges and the transfers by Flutterwave's id (one
	// sequence for both), found by our reference too.
	sim.Book[simObject]
	once      sync.Once
	refunding sync.Mutex // one refund at a time: what is left sees the others
}

// simObject is Flutterwave's own of a charge or a transfer.
type simObject struct {
	transfer    bool
	ref         string // a charge's tx_ref, a transfer's reference
	amount      json.Number
	currency    string
	redirectURL string // a charge's
	redirect    bool   // a charge the customer authorizes on Flutterwave's page: Held until then
	reply       string // a charge's processor_response, a transfer's complete_message
	bank, name  string // a transfer's
	refundOf    string // a refund's charge (Flutterwave's id); "" for a charge or a transfer
}

// ready sets the book to Flutterwave's lifecycle on the first request.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simObject]{
			Pending: "pending", Succeeded: "successful", Failed: "failed",
			Steps:   []string{"NEW", "PENDING", "pending-momo", "processing"},
			Finals:  []string{"SUCCESSFUL", "FAILED", "completed-momo", "completed"},
			Outcome: simOutcome, End: simEnd,
			Notify: func(m *sim.Movement[simObject], claim string) sim.Note {
				if m.Data.refundOf != "" {
					return sim.Note{} // no refund webhook is documented
				}
				event, data := "charge.completed", chargeData(m)
				if m.Data.transfer {
					event, data = "transfer.completed", transferData(m)
				}
				if claim != "" {
					data["status"] = claim
				}
				body, _ := json.Marshal(map[string]any{"event": event, "data": data})
				return sim.Note{URL: s.WebhookURL, Body: body, Header: http.Header{"Verif-Hash": {s.SecretHash}}}
			},
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// simOutcome is how a charge or a transfer ends as its number asks; a
// redirect charge waits for the customer's authorization (held).
func simOutcome(m *sim.Movement[simObject]) (string, bool) {
	_, fails, stuck := sim.Outcome(m.Phone)
	switch {
	case stuck, m.Held:
		return "", true
	case m.Data.refundOf != "":
		return "completed-momo", false
	case m.Data.transfer && fails:
		return "FAILED", false
	case m.Data.transfer:
		return "SUCCESSFUL", false
	case fails:
		return "failed", false
	}
	return "", false
}

// simEnd puts an end in its object's words: a charge's status is lower
// case, a transfer's upper case, each with its message.
func simEnd(m *sim.Movement[simObject]) {
	if m.Data.refundOf != "" {
		m.Status = strings.ToLower(m.Status)
		if m.Status == "failed" {
			m.Data.reply = "The refund could not be sent to the customer's wallet"
		}
		return
	}
	if m.Data.transfer {
		m.Status = strings.ToUpper(m.Status)
		m.Data.reply = "Transaction was successful"
		if m.Status == "FAILED" {
			m.Data.reply = "DISBURSE FAILED: Unable to obtain user details"
		}
		return
	}
	m.Status = strings.ToLower(m.Status)
	switch {
	case m.Status == "successful":
		m.Data.reply = "Approved"
	case sim.LowBalance(m.Phone):
		m.Data.reply = "Insufficient funds"
	default:
		m.Data.reply = "Transaction declined"
	}
}

// chargeKind is what the simulator knows of a charge type: its networks
// per currency (a network, when sent, must be one of them, in any case, as
// Node-v3's momoSchema checks; needNetwork: one must be sent), whether the
// customer authorizes on Flutterwave's page, the countries of a
// francophone charge per currency, and whether an order_id is required.
type chargeKind struct {
	networks    map[string][]string
	needNetwork bool
	redirect    bool
	countries   map[string][]string
	needOrderID bool
}

// kinds are the charge types as Flutterwave's SDKs and guides show them
// (testdata/SOURCES.md): the networks of Node-v3 services/schema/create.js
// momoSchema, required where the guides say so (Uganda, Ghana, the
// francophone guide), order_id required for RWF (momoSchema), the
// francophone countries of the guide (CM for XAF; SN, BF, CI for XOF).
var kinds = map[string]chargeKind{
	"mobile_money_uganda":   {networks: map[string][]string{"UGX": {"MTN", "AIRTEL"}}, needNetwork: true, redirect: true},
	"mobile_money_rwanda":   {networks: map[string][]string{"RWF": {"MTN", "AIRTEL"}}, redirect: true, needOrderID: true},
	"mobile_money_zambia":   {networks: map[string][]string{"ZMW": {"MTN", "AIRTEL", "ZAMTEL"}}, redirect: true},
	"mobile_money_ghana":    {networks: map[string][]string{"GHS": {"MTN", "AIRTELTIGO", "VODAFONE"}}, needNetwork: true, redirect: true},
	"mobile_money_tanzania": {networks: map[string][]string{"TZS": {"HALOPESA", "AIRTEL", "TIGO", "VODACOM"}}},
	"mpesa":                 {networks: map[string][]string{"KES": {"SAFARICOM", "AIRTEL"}}},
	"mobile_money_franco": {networks: map[string][]string{"XOF": {"WAVE", "MTN", "ORANGEMONEY"}, "XAF": {"MTN", "ORANGEMONEY"}},
		needNetwork: true, countries: map[string][]string{"XOF": {"SN", "BF", "CI"}, "XAF": {"CM"}}},
}

// ServeHTTP answers Flutterwave's API, its authorization page and the
// control calls.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		s.page(w, r)
		return
	case r.URL.Path == "/_sim/done":
		w.Write([]byte("Payment page closed"))
		return
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/_sim/settle/"):
		// Settling a redirect charge stands for the customer's authorization.
		s.Release(strings.TrimPrefix(r.URL.Path, "/_sim/settle/"))
	}
	if s.Intercept(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		sim.Reply(w, http.StatusUnauthorized, map[string]any{"status": "error", "message": "Invalid authorization key", "data": nil})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/charges":
		s.charge(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/transactions/verify_by_reference":
		m, ok := s.View(txRefKey + r.URL.Query().Get("tx_ref"))
		if !ok {
			sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "No transaction was found for this id", "data": nil})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transaction fetched successfully", "data": chargeData(&m)})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/transactions/") && strings.HasSuffix(r.URL.Path, "/refund"):
		s.refund(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/transactions/"), "/refund"))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/refunds/"):
		id := strings.TrimPrefix(r.URL.Path, "/refunds/")
		if m, ok := s.View(id); ok && m.ID == id && m.Data.refundOf != "" {
			sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Refund fetched", "data": refundData(&m)})
			return
		}
		sim.Reply(w, http.StatusNotFound, map[string]any{"status": "error", "message": "No refund found", "data": nil})
	case r.Method == http.MethodPost && r.URL.Path == "/transfers":
		s.transfer(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/transfers":
		s.listTransfers(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transfers/"):
		id := strings.TrimPrefix(r.URL.Path, "/transfers/")
		if m, ok := s.View(id); ok && m.ID == id && m.Data.transfer {
			sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfer fetched", "data": transferData(&m)})
			return
		}
		sim.Reply(w, http.StatusNotFound, map[string]any{"status": "error", "message": "No transfer found", "data": nil})
	default:
		http.NotFound(w, r)
	}
}

// The keys a charge and a transfer are found by, apart: a tx_ref and a
// transfer reference are each unique among their own kind only.
const (
	txRefKey     = "tx_ref:"
	referenceKey = "reference:"
)

// newID is a new charge's or transfer's id.
func (s *Simulator) newID() string { return strconv.Itoa(7000000 + s.Next()) }

// chargeData is a charge as Flutterwave shows it (initiation, verify,
// webhook), with the fields of the SDK documentation's samples a merchant
// checks (Node-v3 documentation/collections.md, Tanzania and M-Pesa:
// flw_ref, amount and currency, created_at).
func chargeData(m *sim.Movement[simObject]) map[string]any {
	id, _ := strconv.ParseInt(m.ID, 10, 64)
	return map[string]any{"id": id, "tx_ref": m.Data.ref, "flw_ref": "FLW-SIM-" + m.ID, "amount": m.Data.amount, "currency": m.Data.currency,
		"status": m.Status, "processor_response": m.Data.reply, "created_at": m.Created.UTC().Format(time.RFC3339)}
}

func (s *Simulator) charge(w http.ResponseWriter, r *http.Request) {
	var req chargeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "Invalid JSON", "data": nil})
		return
	}
	kind, ok := kinds[r.URL.Query().Get("type")]
	refuse, _, _ := sim.Outcome(req.PhoneNumber)
	amount, err := req.Amount.Float64()
	bad := ""
	switch {
	case !ok:
		bad = "Invalid charge type"
	case err != nil || amount <= 0:
		bad = "Invalid amount"
	case req.TxRef == "" || !strings.Contains(req.Email, "@"):
		bad = "tx_ref and email are required"
	case kind.networks[req.Currency] == nil:
		bad = "Invalid currency for this charge type"
	case req.Network != "" && !slices.Contains(kind.networks[req.Currency], strings.ToUpper(req.Network)), req.Network == "" && kind.needNetwork:
		bad = "Invalid network"
	case kind.countries != nil && !slices.Contains(kind.countries[req.Currency], req.Country):
		bad = "Invalid country"
	case kind.needOrderID && req.OrderID == "":
		bad = "order_id is required"
	case refuse || strings.Trim(req.PhoneNumber, "0123456789") != "" || len(req.PhoneNumber) < 9:
		bad = "Invalid phone number"
	}
	m := &sim.Movement[simObject]{ID: s.newID(), Phone: req.PhoneNumber, Held: kind.redirect, Data: simObject{ref: req.TxRef, amount: req.Amount,
		currency: req.Currency, redirectURL: req.RedirectURL, redirect: kind.redirect, reply: "Transaction in progress"}}
	if bad == "" {
		if _, added := s.Add(m, txRefKey+req.TxRef); !added {
			bad = "Duplicate transaction reference"
		}
	}
	if bad != "" {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": bad, "data": nil})
		return
	}
	s.Alias(req.TxRef, m.ID)
	if kind.redirect {
		// No data: the customer must authorize on Flutterwave's page first.
		sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Charge initiated",
			"meta": map[string]any{"authorization": map[string]any{"mode": "redirect", "redirect": "http://" + r.Host + "/_sim/pay/" + url.PathEscape(req.TxRef)}}})
		return
	}
	v, _ := s.View(m.ID) // the book's, which a settle may change meanwhile
	answer := map[string]any{"status": "success", "message": "Charge initiated", "data": chargeData(&v)}
	if kind.countries != nil {
		answer["meta"] = map[string]any{"authorization": map[string]any{"mode": "callback", "redirect_url": nil}}
	}
	sim.Reply(w, http.StatusOK, answer)
}

// testOTP is the one-time code Flutterwave's authorization page takes in
// test mode: Node-v3 documentation/collections.md, after the Ghana,
// Rwanda and Uganda samples ("OTP on staging (TEST MODE) is 123456");
// Zambia's answer sends the customer to the same page.
const testOTP = "123456"

// page stands in for Flutterwave's authorization page of a redirect
// charge, GET /_sim/pay/{tx_ref}: the customer enters the OTP and pays,
// or declines (POST do=pay&otp= or do=decline), and goes back to the
// charge's redirect_url. A wrong OTP is refused there (400), the charge
// still pending: what Flutterwave's page says then is not documented.
func (s *Simulator) page(w http.ResponseWriter, r *http.Request) {
	txRef := strings.TrimPrefix(r.URL.Path, "/_sim/pay/")
	m, ok := s.View(txRefKey + txRef)
	if !ok || !m.Data.redirect {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	form := `<form method="post"><label>OTP (test mode: ` + testOTP + `) <input name="otp" id="sim-otp" inputmode="numeric"></label>
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="decline" id="sim-decline">Decline</button></form>`
	switch {
	case r.Method != http.MethodPost:
		fmt.Fprint(w, `<!doctype html><title>Simulated Flutterwave authorization</title>`+form)
		return
	case r.FormValue("do") == "decline":
		s.authorized(txRef, "failed")
	case r.FormValue("otp") != testOTP:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `<!doctype html><title>Simulated Flutterwave authorization</title><p id="sim-error">Invalid OTP</p>`+form)
		return
	default:
		s.authorized(txRef, "")
	}
	back := m.Data.redirectURL
	if back == "" {
		back = "/_sim/done"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// authorized is the customer's authorization: paying settles the charge
// as the number asks (or after SettleAfter), declining (status) fails it.
func (s *Simulator) authorized(txRef, status string) {
	key := txRefKey + txRef
	s.Release(key)
	if status != "" || s.SettleAfter <= 0 {
		s.Settle(key, status)
	}
}

// transferBanks are the account_bank values the simulator takes per
// currency, as Flutterwave's transfer guides spell them (Uganda: Airtel,
// MTN, MPS; Rwanda: MTN, MPS; Ghana: AIRTELTIGO, MTN, TELECEL, VODAFONE;
// Zambia, Kenya: MPS). Tanzania's codes are those of the older mobile money
// transfer page, not confirmed by a current one (testdata/SOURCES.md).
var simTransferBanks = map[string][]string{
	"UGX": {"Airtel", "MTN", "MPS"},
	"RWF": {"MTN", "MPS"},
	"ZMW": {"MPS"},
	"KES": {"MPS"},
	"GHS": {"AIRTELTIGO", "MTN", "TELECEL", "VODAFONE"},
	"TZS": {"MPS", "VODACOM", "AIRTEL", "TIGO", "HALOPESA"},
}

func transferData(m *sim.Movement[simObject]) map[string]any {
	id, _ := strconv.ParseInt(m.ID, 10, 64)
	return map[string]any{"id": id, "account_number": m.Phone, "bank_code": m.Data.bank, "full_name": m.Data.name, "currency": m.Data.currency,
		"amount": m.Data.amount, "fee": 0, "status": m.Status, "reference": m.Data.ref, "complete_message": m.Data.reply,
		"requires_approval": 0, "is_approved": 1}
}

// transfer is POST /transfers.
func (s *Simulator) transfer(w http.ResponseWriter, r *http.Request) {
	var req transferRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "Invalid JSON", "data": nil})
		return
	}
	refuse, _, _ := sim.Outcome(req.AccountNumber)
	amount, err := req.Amount.Float64()
	_, taken := s.View(referenceKey + req.Reference)
	bad := ""
	switch {
	case !slices.Contains(simTransferBanks[req.Currency], req.AccountBank):
		bad = "Invalid account_bank"
	case err != nil || amount <= 0:
		bad = "Invalid amount"
	case req.Reference == "" || len(req.Currency) != 3:
		bad = "reference and currency are required"
	case strings.TrimSpace(req.BeneficiaryName) == "":
		bad = "beneficiary_name is required"
	case strings.Trim(req.AccountNumber, "0123456789") != "" || len(req.AccountNumber) < 9 || len(req.AccountNumber) > 15:
		bad = "Invalid account_number: a mobile money number with its country code"
	case taken:
		bad = duplicateTransfer
	case refuse:
		bad = "Invalid account_number: no mobile money wallet has this number"
	case sim.LowBalance(req.AccountNumber):
		bad = "Insufficient funds in customer wallet"
	}
	m := &sim.Movement[simObject]{ID: s.newID(), Payout: true, Phone: req.AccountNumber, Status: "NEW", Data: simObject{transfer: true,
		ref: req.Reference, bank: req.AccountBank, name: req.BeneficiaryName, currency: req.Currency, amount: req.Amount}}
	if bad == "" {
		if _, added := s.Add(m, referenceKey+req.Reference); !added { // the same reference in between
			bad = duplicateTransfer
		}
	}
	if bad != "" {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": bad, "data": nil})
		return
	}
	s.Alias(req.Reference, m.ID)
	v, _ := s.View(m.ID)
	sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfer Queued Successfully", "data": transferData(&v)})
}

// duplicateTransfer is the refusal of a transfer reference already used,
// as seen in practice (no official source documents it: SOURCES.md).
const duplicateTransfer = "Payout with this ref already exists"

// listTransfers is GET /transfers: newest first, ten a page (?page=,
// from 1), narrowed by ?status= only. Flutterwave documents no reference
// filter; the simulator ignores ?reference=, so a connector relying on it
// is caught here.
func (s *Simulator) listTransfers(w http.ResponseWriter, r *http.Request) {
	const size = 10
	status := r.URL.Query().Get("status")
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	found := s.Find(func(m *sim.Movement[simObject]) bool {
		return m.Data.transfer && (status == "" || strings.EqualFold(m.Status, status))
	})
	slices.Reverse(found)
	pages := (len(found) + size - 1) / size
	data := []map[string]any{}
	for i := (page - 1) * size; i < len(found) && i < page*size; i++ {
		data = append(data, transferData(&found[i]))
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfers fetched",
		"meta": map[string]any{"page_info": map[string]int{"total": len(found), "current_page": page, "total_pages": pages}}, "data": data})
}

// refund is POST /transactions/{id}/refund (Node-v3 rave.refund.js,
// refundSchema; the refunds guide): id is a charge's Flutterwave id; the
// charge must be successful; amount, in major units, must be positive,
// with no more decimals than the currency has, and at most what is left
// of the charge (its amount less its refunds that have not failed: the
// sources are silent about over-refunding, so the conservative reading);
// without amount (the guide: a partial refund names one) the rest is
// refunded; NGN and KES refunds under 100 and 10 are refused, as the guide
// says. Refusals are status "error", HTTP 400, in the simulator's own
// words but the minimum's. A refund of a mobile money charge is
// pending-momo until it ends completed-momo (or as settled: failed,
// completed), after SettleAfter or on /_sim/settle/{refund id}. No
// webhook: none is documented for refunds.
func (s *Simulator) refund(w http.ResponseWriter, r *http.Request, txID string) {
	var req refundRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "Invalid JSON", "data": nil})
		return
	}
	refuse := func(msg string) {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": msg, "data": nil})
	}
	s.refunding.Lock()
	defer s.refunding.Unlock()
	tx, ok := s.View(txID)
	switch {
	case !ok || tx.ID != txID || tx.Data.transfer || tx.Data.refundOf != "":
		refuse("No transaction was found for this id")
		return
	case tx.Status != "successful":
		refuse("Only a successful transaction can be refunded")
		return
	}
	cur := cauri.Currency(tx.Data.currency)
	paid, _ := cauri.ParseAmount("amount", tx.Data.amount.String(), cur)
	left := paid
	for _, o := range s.Find(func(m *sim.Movement[simObject]) bool { return m.Data.refundOf == txID && m.Status != "failed" }) {
		a, _ := cauri.ParseAmount("amount", o.Data.amount.String(), cur)
		left -= a
	}
	amount := left
	if req.Amount != "" {
		var err error
		if amount, err = cauri.ParseAmount("amount", req.Amount.String(), cur); err != nil || amount <= 0 {
			refuse("Invalid amount")
			return
		}
	}
	minimum := map[cauri.Currency]int64{"NGN": 100, "KES": 10}
	switch {
	case left <= 0:
		refuse("This transaction has been fully refunded")
		return
	case amount > left:
		refuse("The refund amount exceeds what is left to refund: " + cauri.FormatAmount(left, cur) + " " + string(cur))
		return
	case minimum[cur] > 0 && amount < minimum[cur]*pow10(cur.Exponent()):
		refuse(fmt.Sprintf("Amount should be above %s%d", cur, minimum[cur]))
		return
	}
	m := &sim.Movement[simObject]{ID: s.newID(), Phone: tx.Phone, Status: "pending-momo", Data: simObject{refundOf: txID, ref: tx.Data.ref,
		amount: json.Number(cauri.FormatAmount(amount, cur)), currency: tx.Data.currency, reply: req.Comments}}
	s.Add(m)
	v, _ := s.View(m.ID)
	sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transaction refund initiated", "data": refundData(&v)})
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// refundData is a refund as its initiation shows it (Node-v3
// documentation/transactions.md) and GET /refunds/{id} too.
func refundData(m *sim.Movement[simObject]) map[string]any {
	id, _ := strconv.ParseInt(m.ID, 10, 64)
	tx, _ := strconv.ParseInt(m.Data.refundOf, 10, 64)
	return map[string]any{"id": id, "account_id": 73001, "tx_id": tx, "flw_ref": "URF_SIM_" + m.ID, "wallet_id": 74001,
		"amount_refunded": m.Data.amount, "status": m.Status, "destination": "payment_source", "comment": m.Data.reply,
		"meta": map[string]any{"source": "availablebalance"}, "created_at": m.Created.UTC().Format(time.RFC3339)}
}

// Refunds counts the refunds the simulator made (each gives money back).
func (s *Simulator) Refunds() int {
	return len(s.Find(func(m *sim.Movement[simObject]) bool { return m.Data.refundOf != "" }))
}
