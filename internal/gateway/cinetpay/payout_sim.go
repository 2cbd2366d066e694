package cinetpay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// The simulator's transfer API v1: it accepts and refuses as CinetPay
// documents (transfert/utilisation and annexe), and the recipient's number
// decides the outcome (sim.Outcome):
//
//	...0049  refused when sent: 602 INSUFFICIENT_BALANCE (the account's)
//	...0039  refused when sent: 802 INVALID_PHONE
//	...0029  rejected once settled (REJ)
//	...0129  never settles, no notification
//	other    validated once settled (VAL)

// simTokenLife is a token's lifetime (transfert/utilisation: 5 minutes).
const simTokenLife = 5 * time.Minute

// simNumberLength is the national number's length by prefix (transfert/annexe,
// codes by country).
var simNumberLength = map[string]int{"225": 10, "223": 8, "221": 9, "228": 8, "226": 8, "237": 9}

// simTransfer is CinetPay's own of a transfer (its id is the
// movement's, client_transaction_id its alias).
type simTransfer struct {
	clientID, lot            string
	amount, prefix, operator string
	notifyURL                string
	sending, comment         string // sending_status; comment
	validatedAt              string
}

// transferLifecycle is a transfer's treatment_status (docs.cinetpay.com/
// api/1.0-en/transfert/statuts): NEW waits to be processed, REC is being
// processed, NOS awaits confirmation or rejection (both reached only by a
// control call: CinetPay says not when), VAL and REJ are final and
// notified. A stuck number stays NEW.
func transferLifecycle(s *Simulator) sim.Lifecycle[simTransfer] {
	return sim.Lifecycle[simTransfer]{
		Pending: "NEW", Steps: []string{"REC", "NOS"}, Succeeded: "VAL", Failed: "REJ",
		End: func(m *sim.Movement[simTransfer]) {
			t := &m.Data
			if m.Status == "REJ" {
				t.sending, t.comment = "REJECTED", "The recipient's wallet refused the transfer"
				return
			}
			t.sending, t.comment = "CONFIRM", "Transfer completed"
			t.validatedAt = s.now().UTC().Format("2006-01-02 15:04:05")
		},
		Notify: transferNotification,
	}
}

// transferObject is the transfer as the check and the notification show it.
func transferObject(m *sim.Movement[simTransfer]) map[string]string {
	t := &m.Data
	return map[string]string{"transaction_id": m.ID, "client_transaction_id": t.clientID, "lot": t.lot, "amount": t.amount,
		"receiver": m.Phone, "receiver_e164": "+" + t.prefix + m.Phone, "operator": t.operator, "sending_status": t.sending,
		"treatment_status": m.Status, "comment": t.comment, "validated_at": t.validatedAt}
}

// simItem is one contact or transfer of a request's data.
type simItem struct {
	Prefix              text `json:"prefix"`
	Phone               text `json:"phone"`
	Name                text `json:"name"`
	Surname             text `json:"surname"`
	Email               text `json:"email"`
	Amount              text `json:"amount"`
	ClientTransactionID text `json:"client_transaction_id"`
	NotifyURL           text `json:"notify_url"`
	PaymentMethod       text `json:"payment_method"`
}

// Payouts counts the transfers the simulator accepted (refusals and
// resent client_transaction_ids aside): each is money sent.
func (s *Simulator) Payouts() int { return s.transfers.Payouts() }

// Logins counts the tokens the simulator gave.
func (s *Simulator) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

func (s *Simulator) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// transferReply writes the transfer API's envelope: code 0 (a number) on
// success, the error's code as a string otherwise, as documented.
func transferReply(w http.ResponseWriter, code, message, description string, data any) {
	var c any = code
	if code == "0" {
		c = 0
	}
	sim.Reply(w, http.StatusOK, map[string]any{"code": c, "message": message, "description": description, "data": data})
}

func (s *Simulator) serveTransfer(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if path == "/auth/login" && r.Method == http.MethodPost {
		s.login(w, r)
		return
	}
	if (path == "/transfer/contact" || path == "/transfer/money/send/contact") && r.Method != http.MethodPost ||
		path == "/transfer/check/money" && r.Method != http.MethodGet {
		transferReply(w, "708", "NOT_ALLOWED", "Check the method and the address", []any{})
		return
	}
	if !s.validToken(w, r) {
		return
	}
	switch path {
	case "/transfer/contact":
		s.addContacts(w, r)
	case "/transfer/money/send/contact":
		s.send(w, r)
	case "/transfer/check/money":
		s.checkTransfer(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Simulator) login(w http.ResponseWriter, r *http.Request) {
	if s.TransferPassword == "" || r.PostFormValue("apikey") != s.APIKey || r.PostFormValue("password") != s.TransferPassword {
		transferReply(w, "701", "INVALID_CREDENTIALS", "Identifiant de connexion incorrect", []any{})
		return
	}
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]time.Time{}
	}
	s.logins++
	token := fmt.Sprintf("simtok%08d", s.logins)
	s.tokens[token] = s.now()
	s.mu.Unlock()
	transferReply(w, "0", "OPERATION_SUCCES", "", map[string]string{"token": token})
}

// validToken answers 706 or 705 unless the query's token is one given
// less than 5 minutes ago (a token posted in the form is not looked at).
func (s *Simulator) validToken(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	at, ok := s.tokens[r.URL.Query().Get("token")]
	expired := ok && s.now().Sub(at) >= simTokenLife
	s.mu.Unlock()
	switch {
	case !ok:
		transferReply(w, "706", "INVALID_TOKEN", "Votre token est invalide", []any{})
	case expired:
		transferReply(w, "705", "EXPIRED_TOKEN", "Votre token a expiré", []any{})
	}
	return ok && !expired
}

// data reads the form's data field, a JSON list; it answers 718 or 704
// when it cannot.
func data(w http.ResponseWriter, r *http.Request) ([]simItem, bool) {
	var list []simItem
	if err := json.Unmarshal([]byte(r.PostFormValue("data")), &list); err != nil {
		transferReply(w, "718", "JSON_PARSE_ERROR", "The data field is not a JSON list", []any{})
		return nil, false
	}
	if len(list) == 0 {
		transferReply(w, "704", "INVALID_PARAM", "The data list is empty", []any{})
		return nil, false
	}
	return list, true
}

func validNumber(prefix, phone string) bool {
	n, ok := simNumberLength[prefix]
	return ok && len(phone) == n && strings.Trim(phone, "0123456789") == ""
}

func (s *Simulator) addContacts(w http.ResponseWriter, r *http.Request) {
	list, ok := data(w, r)
	if !ok {
		return
	}
	out := make([]map[string]any, 0, len(list))
	s.mu.Lock()
	if s.contacts == nil {
		s.contacts = map[string]bool{}
	}
	for _, c := range list {
		o := map[string]any{"prefix": c.Prefix, "phone": c.Phone, "name": c.Name, "surname": c.Surname, "email": c.Email,
			"code": 0, "status": "success", "lot": fmt.Sprintf("%022d", s.transfers.Next())}
		key := string(c.Prefix + c.Phone)
		switch {
		case !validNumber(string(c.Prefix), string(c.Phone)):
			o["code"], o["status"] = 802, "INVALID_PHONE"
		case c.Name == "" && c.Surname == "":
			o["code"], o["status"] = 716, "DATA_NOT_VALID"
		case s.contacts[key]:
			o["code"], o["status"] = 726, "ERROR_PHONE_ALREADY_MY_CONTACT"
		default:
			s.contacts[key] = true
		}
		out = append(out, o)
	}
	s.mu.Unlock()
	transferReply(w, "0", "OPERATION_SUCCES", "", [][]map[string]any{out})
}

// knownMethod reports whether CinetPay has this payment_method.
func knownMethod(code string) bool {
	p, _ := gateway.Lookup("cinetpay")
	for _, ops := range p.Operators {
		for _, c := range ops {
			if c == code {
				return true
			}
		}
	}
	return false
}

// send is POST /transfer/money/send/contact. The account's balance is
// checked for the whole request (602 at the top); each transfer is then
// accepted (treatment_status NEW) or refused with its own code.
func (s *Simulator) send(w http.ResponseWriter, r *http.Request) {
	list, ok := data(w, r)
	if !ok {
		return
	}
	for _, t := range list {
		if sim.LowBalance(string(t.Phone)) {
			transferReply(w, "602", "INSUFFICIENT_BALANCE", "Your CinetPay transfer balance is insufficient to perform this operation", []any{})
			return
		}
	}
	out := make([]map[string]any, 0, len(list))
	for _, t := range list {
		o := map[string]any{"prefix": t.Prefix, "phone": t.Phone, "amount": t.Amount, "client_transaction_id": t.ClientTransactionID,
			"notify_url": t.NotifyURL, "code": 0, "status": "success"}
		amount, err := strconv.ParseInt(string(t.Amount), 10, 64)
		refuse, _, _ := sim.Outcome(string(t.Phone))
		id := string(t.ClientTransactionID)
		s.mu.Lock()
		contact := s.contacts[string(t.Prefix+t.Phone)]
		s.mu.Unlock()
		switch {
		case t.NotifyURL == "":
			o["code"], o["status"] = 725, "MISSING_NOTIFY_URL"
		case err != nil || amount <= 0:
			o["code"], o["status"] = 801, "INVALID_AMOUNT"
		case amount < 200:
			o["code"], o["status"] = 719, "AMOUNT_TOO_SMALL"
		case amount > 1500000:
			o["code"], o["status"] = 720, "AMOUNT_TOO_LARGE"
		case t.PaymentMethod != "" && !knownMethod(string(t.PaymentMethod)):
			o["code"], o["status"] = 721, "OPERATOR_NOT_AVAILABLE"
		case !contact:
			o["code"], o["status"] = 724, "ERROR_PHONE_NOT_MY_CONTACT"
		case refuse:
			o["code"], o["status"] = 802, "INVALID_PHONE"
		case id == "":
			o["code"], o["status"] = 704, "INVALID_PARAM"
		default:
			n := s.transfers.Next()
			m, added := s.transfers.Add(&sim.Movement[simTransfer]{ID: fmt.Sprintf("SIM%s.X%06d", s.now().UTC().Format("060102.150405"), n),
				Payout: true, Phone: string(t.Phone), Data: simTransfer{clientID: id, lot: fmt.Sprintf("%022d", n), amount: string(t.Amount),
					prefix: string(t.Prefix), operator: string(t.PaymentMethod), notifyURL: string(t.NotifyURL), sending: "PENDING"}}, id)
			if !added {
				o["code"], o["status"] = 805, "CLIENT_TRANSACTION_ID_EXIST"
				break
			}
			o["treatment_status"], o["transaction_id"], o["lot"] = m.Status, m.ID, m.Data.lot
		}
		out = append(out, o)
	}
	transferReply(w, "0", "OPERATION_SUCCES", "", [][]map[string]any{out})
}

// checkTransfer is GET /transfer/check/money by client_transaction_id or
// transaction_id; 723 NOT_FOUND when no transfer has it.
func (s *Simulator) checkTransfer(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var m sim.Movement[simTransfer]
	found := false
	if id := q.Get("client_transaction_id"); id != "" {
		m, found = s.transfers.View(id)
		found = found && m.Data.clientID == id
	}
	if id := q.Get("transaction_id"); !found && id != "" {
		m, found = s.transfers.View(id)
		found = found && m.ID == id
	}
	if !found {
		transferReply(w, "723", "NOT_FOUND", "No results for this search", []any{})
		return
	}
	transferReply(w, "0", "OPERATION_SUCCES", "", []map[string]string{transferObject(&m)})
}

// transferNotification is the documented form (transfert/notification),
// unsigned as CinetPay documents it; claiming status when given.
func transferNotification(m *sim.Movement[simTransfer], claim string) sim.Note {
	o := transferObject(m)
	form := url.Values{}
	for _, k := range []string{"transaction_id", "client_transaction_id", "lot", "amount", "receiver", "sending_status",
		"comment", "treatment_status", "validated_at"} {
		form.Set(k, o[k])
	}
	form.Set("operator_transaction_id", "")
	if m.Status == "VAL" {
		form.Set("operator_transaction_id", "OP"+m.Data.lot)
	}
	if claim != "" {
		form.Set("treatment_status", claim)
	}
	return sim.Note{URL: m.Data.notifyURL, Body: []byte(form.Encode()), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}
}
