package flutterwave

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for Flutterwave's mobile money charges and its
// transfers to mobile money wallets: bearer auth, input checks (each
// charge type's currency and documented networks, a transfer's
// account_bank per currency), unique tx_ref and transfer reference,
// outcomes by the payer's or recipient's number
// (sim.Outcome), settlement after SettleAfter or on POST
// /_sim/settle/{tx_ref or reference}, and the charge.completed or
// transfer.completed webhook carrying the secret hash in verif-hash to
// WebhookURL.
//
// As Flutterwave documents it, a charge in Uganda, Rwanda, Zambia or Ghana
// answers only meta.authorization {mode "redirect", redirect}: no data, no
// id; the customer authorizes on that page (here /_sim/pay/{tx_ref}: pay
// or decline, then back to the charge's redirect_url). Tanzania and M-Pesa
// answer the pending charge in data; francophone charges answer it with
// meta.authorization mode "callback". A charge is read back by tx_ref
// (pending until authorized and settled).
//
// GET /transfers lists the transfers newest first, ten a page (?page=),
// narrowed by ?status= only: Flutterwave documents no reference filter, so
// the simulator has none. A transfer to a number ending 0049 is refused at
// once for want of funds in the merchant's balance; 0039 is refused as an
// invalid wallet; 0029 fails once settled; 0129 never settles. POST
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
	faults    sim.Faults
}

type simCharge struct {
	id            int64
	txRef, phone  string
	redirectURL   string
	status, reply string
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

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		sim.Page{Settle: s.authorized, Declined: "failed", Return: s.returnTo}.Serve(w, r)
		return
	case r.URL.Path == "/_sim/done":
		w.Write([]byte("Payment page closed"))
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		sim.ServeSimControl(w, r, &s.faults, s.settleAny, s.resendAny)
		return
	}
	if s.faults.Apply(w, r) {
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
		s.mu.Lock()
		c := s.charges[r.URL.Query().Get("tx_ref")]
		s.mu.Unlock()
		if c == nil {
			sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "No transaction was found for this id", "data": nil})
			return
		}
		sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transaction fetched successfully", "data": s.data(c)})
	case r.Method == http.MethodPost && r.URL.Path == "/transfers":
		s.transfer(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/transfers":
		s.listTransfers(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transfers/"):
		if t := s.transferByID(strings.TrimPrefix(r.URL.Path, "/transfers/")); t != nil {
			sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfer fetched", "data": s.transferData(t)})
			return
		}
		sim.Reply(w, http.StatusNotFound, map[string]any{"status": "error", "message": "No transfer found", "data": nil})
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
	s.mu.Lock()
	if s.charges == nil {
		s.charges = map[string]*simCharge{}
	}
	if bad == "" && s.charges[req.TxRef] != nil {
		bad = "Duplicate transaction reference"
	}
	if bad != "" {
		s.mu.Unlock()
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": bad, "data": nil})
		return
	}
	s.nextID++
	c := &simCharge{id: 7000000 + s.nextID, txRef: req.TxRef, phone: req.PhoneNumber, redirectURL: req.RedirectURL, status: "pending",
		reply: "Transaction in progress"}
	s.charges[req.TxRef] = c
	s.mu.Unlock()
	if kind.redirect {
		// No data: the customer must authorize on Flutterwave's page first.
		sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Charge initiated",
			"meta": map[string]any{"authorization": map[string]any{"mode": "redirect", "redirect": "http://" + r.Host + "/_sim/pay/" + url.PathEscape(req.TxRef)}}})
		return
	}
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(req.TxRef, "") })
	}
	answer := map[string]any{"status": "success", "message": "Charge initiated", "data": s.data(c)}
	if kind.countries != nil {
		answer["meta"] = map[string]any{"authorization": map[string]any{"mode": "callback", "redirect_url": nil}}
	}
	sim.Reply(w, http.StatusOK, answer)
}

// authorized is the customer on the authorization page: paying settles the
// charge as the number asks (or after SettleAfter), declining fails it.
func (s *Simulator) authorized(txRef, status string) bool {
	if status != "" || s.SettleAfter <= 0 {
		return s.settle(txRef, status)
	}
	s.mu.Lock()
	found := s.charges[txRef] != nil
	s.mu.Unlock()
	time.AfterFunc(s.SettleAfter, func() { s.settle(txRef, "") })
	return found
}

func (s *Simulator) returnTo(txRef string) (string, url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.charges[txRef]
	switch {
	case c == nil:
		return "", nil
	case c.redirectURL == "":
		return "/_sim/done", nil
	}
	return c.redirectURL, nil
}

// settle ends a pending charge, as its number asks or as status says
// (failed fails it, anything else succeeds), and sends its webhook.
func (s *Simulator) settle(txRef, status string) bool {
	s.mu.Lock()
	c := s.charges[txRef]
	if c == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := sim.Outcome(c.phone)
	if c.status != "pending" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	if status == "failed" || status == "" && fails {
		c.status, c.reply = "failed", "Transaction declined"
		if sim.LowBalance(c.phone) {
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
	sim.PostCallback(s.WebhookURL, body, http.Header{"Verif-Hash": {s.SecretHash}})
}

// settleAny settles the charge or the transfer id names.
func (s *Simulator) settleAny(id, status string) bool {
	return s.settle(id, status) || s.settleTransfer(id, status)
}

// resendAny sends the webhook of the charge or the transfer id names.
func (s *Simulator) resendAny(id, status string) bool {
	return sim.ResendCallback(&s.mu, s.charges, id, status, s.webhook) ||
		sim.ResendCallback(&s.mu, s.transfers, id, status, s.transferWebhook)
}

// Payouts counts the transfers the simulator accepted (refusals and
// duplicates aside): each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payouts
}

type simTransfer struct {
	seq                     int // order of creation, for the list
	id                      int64
	reference, bank, number string
	name, currency          string
	amount                  json.Number
	status, message         string
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
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": "Invalid JSON", "data": nil})
		return
	}
	refuse, _, _ := sim.Outcome(req.AccountNumber)
	amount, err := req.Amount.Float64()
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
	case sim.LowBalance(req.AccountNumber):
		bad = "Insufficient funds in customer wallet"
	}
	if bad != "" {
		s.mu.Unlock()
		sim.Reply(w, http.StatusBadRequest, map[string]any{"status": "error", "message": bad, "data": nil})
		return
	}
	s.nextID++
	s.payouts++
	t := &simTransfer{seq: len(s.transfers), id: 500000 + s.nextID, reference: req.Reference, bank: req.AccountBank, number: req.AccountNumber,
		name: req.BeneficiaryName, currency: req.Currency, amount: req.Amount, status: "NEW"}
	s.transfers[req.Reference] = t
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settleTransfer(req.Reference, "") })
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfer Queued Successfully", "data": s.transferData(t)})
}

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
	s.mu.Lock()
	var found []*simTransfer
	for _, t := range s.transfers {
		if status == "" || strings.EqualFold(t.status, status) {
			found = append(found, t)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(found, func(a, b *simTransfer) int { return b.seq - a.seq })
	pages := (len(found) + size - 1) / size
	data := []map[string]any{}
	for i := (page - 1) * size; i < len(found) && i < page*size; i++ {
		data = append(data, s.transferData(found[i]))
	}
	sim.Reply(w, http.StatusOK, map[string]any{"status": "success", "message": "Transfers fetched",
		"meta": map[string]any{"page_info": map[string]int{"total": len(found), "current_page": page, "total_pages": pages}}, "data": data})
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
	_, fails, stuck := sim.Outcome(t.number)
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
	sim.PostCallback(s.WebhookURL, body, http.Header{"Verif-Hash": {s.SecretHash}})
}
