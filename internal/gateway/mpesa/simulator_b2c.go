package mpesa

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// The simulator's B2C part: POST /mpesa/b2c/v3/paymentrequest and POST
// /mpesa/transactionstatus/v1/query, both acknowledged at once
// ({ConversationID, OriginatorConversationID, ResponseCode "0",
// ResponseDescription}), their results POSTed later to the request's
// ResultURL ({"Result": {...}}, testdata/b2c_result_*.json,
// transactionstatus_result_completed.json). The recipient's number decides
// the outcome (sim.Outcome):
//
//	...0039  refused at once (400 "Bad Request - Invalid PartyB")
//	...0029  fails: ResultCode 2040 (an unregistered recipient)
//	...0049  fails: ResultCode 1 (the B2C account's balance is too low)
//	...0129  never settles, no result (a lost payout)
//	other    pays (ResultCode 0, a TransactionReceipt, the recipient's name)
//
// A payment settles after SettleAfter, or, when it is 0, when POST
// /_sim/settle/{OriginatorConversationID} says so (its result POSTed
// before the control call answers).
// The SecurityCredential is checked against B2CCredential when set, else
// only for its shape (base64 of a 2048-bit RSA block): the simulator holds
// no Safaricom private key. A payment with a wrong initiator name or
// credential is accepted and fails with ResultCode 2001 "The initiator
// information is invalid." (as Daraja's results do, SOURCES.md); a status
// query with one is refused at once (400). Each request is a payment: one sent twice pays
// twice, as Daraja does (B2CPaid counts the payments per reference).
// LoseResults drops the B2C results (not the status query's), for the
// status query to recover them. LoseB2CRequests closes each payment
// request's connection before reading it (a request that never reached
// Daraja, whose answer the caller waits for in vain); LoseB2CAnswers
// records the payment, then closes the connection without answering (a
// request Daraja received, its answer lost).
//
// The status query about a transaction the simulator does not have (no
// payment, reversal or paid push by that OriginatorConversationID or
// receipt) is answered, like one it has, on its ResultURL: ResultCode 2032
// "The transaction receipt number does not exist.", no ResultParameters
// (testdata/transactionstatus_result_not_known.json, a capture of
// Daraja's sandbox). A payment still pending gets no result.

// b2cPayout is one B2C payment the simulator accepted.
type b2cPayout struct {
	origID, convID, receipt string
	amount                  int64
	phone, resultURL        string
	code                    string // "" while pending
	stuck                   bool
	badInitiator            bool // fails with 2001, paying nothing
}

type b2cBook struct {
	mu      sync.Mutex
	payouts []*b2cPayout
}

// simB2C is a B2C or status request's body as the simulator reads it.
type simB2C struct {
	OriginatorConversationID, InitiatorName, Initiator, SecurityCredential text
	CommandID, Amount, PartyA, PartyB, IdentifierType, TransactionID       text
	Remarks, QueueTimeOutURL, ResultURL, Occasion                          text
}

// B2CPaid counts the B2C payments of a reference that paid (ResultCode 0):
// more than one is a wallet paid twice.
func (s *Simulator) B2CPaid(reference string) int {
	s.b2c.mu.Lock()
	defer s.b2c.mu.Unlock()
	n := 0
	for _, p := range s.b2c.payouts {
		if p.origID == reference && p.code == "0" {
			n++
		}
	}
	return n
}

// B2CRequests counts the B2C payment requests the simulator accepted.
func (s *Simulator) B2CRequests() int {
	s.b2c.mu.Lock()
	defer s.b2c.mu.Unlock()
	return len(s.b2c.payouts)
}

func (s *Simulator) b2cShortCode() string {
	if s.B2CShortCode != "" {
		return s.B2CShortCode
	}
	return s.ShortCode
}

// initiatorRefusal is Daraja's words for a wrong initiator name or
// credential, "" when both are right.
func (s *Simulator) initiatorRefusal(name text, p simB2C) string {
	switch {
	case s.InitiatorName == "" || string(name) != s.InitiatorName:
		return "Bad Request - Invalid Initiator"
	case !credentialOK(p.SecurityCredential, s.B2CCredential):
		return "Bad Request - Invalid SecurityCredential"
	}
	return ""
}

// credentialOK reports whether a request's SecurityCredential is want, or,
// when want is "", well-formed (base64 of a 2048-bit RSA block).
func credentialOK(cred text, want string) bool {
	if want != "" {
		return string(cred) == want
	}
	raw, err := base64.StdEncoding.DecodeString(string(cred))
	return err == nil && len(raw) == 256
}

// reversalInitiator reports whether name and cred are the separate
// reversal initiator's (ReversalInitiatorName, ReversalCredential).
func (s *Simulator) reversalInitiator(name, cred text) bool {
	return s.ReversalInitiatorName != "" && string(name) == s.ReversalInitiatorName && credentialOK(cred, s.ReversalCredential)
}

// initiated checks what both requests share: the initiator, its
// credential (unless checkInitiator is false: a payment, whose wrong
// initiator fails later, with 2001), the shortcode and the result
// addresses.
func (s *Simulator) initiated(w http.ResponseWriter, name text, p simB2C, checkInitiator bool) bool {
	why := ""
	if checkInitiator && !s.reversalInitiator(name, p.SecurityCredential) {
		why = s.initiatorRefusal(name, p) // both initiators may query
	}
	switch {
	case why != "":
		refuse(w, http.StatusBadRequest, "400.002.02", why)
	case string(p.PartyA) != s.b2cShortCode() && !(checkInitiator && string(p.PartyA) == s.ShortCode):
		// A status query may ask about the paybill's transactions too
		// (a reversal, a payment reversed).
		badRequest(w, "PartyA")
	case !webURL(string(p.ResultURL)):
		badRequest(w, "ResultURL")
	case !webURL(string(p.QueueTimeOutURL)):
		badRequest(w, "QueueTimeOutURL")
	default:
		return true
	}
	return false
}

func decodeB2C(w http.ResponseWriter, r *http.Request) (simB2C, bool) {
	var p simB2C
	return p, decodeJSON(w, r, &p)
}

// decodeJSON reads a request's body into v, answering Daraja's refusal
// when it is not JSON.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(v); err != nil {
		refuse(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid JSON")
		return false
	}
	return true
}

// marshalResult is a result callback's body, {"Result": res}.
func marshalResult(res map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"Result": res})
	return b
}

// b2cPayment is POST /mpesa/b2c/v3/paymentrequest.
func (s *Simulator) b2cPayment(w http.ResponseWriter, r *http.Request) {
	if s.LoseB2CRequests.Load() && hangUp(w) {
		return // never received: nothing recorded
	}
	p, ok := decodeB2C(w, r)
	if !ok || !s.initiated(w, p.InitiatorName, p, false) {
		return
	}
	badInitiator := s.initiatorRefusal(p.InitiatorName, p) != ""
	amount, _ := strconv.ParseInt(string(p.Amount), 10, 64)
	refused, _, stuck := sim.Outcome(string(p.PartyB))
	switch {
	case p.CommandID != BusinessPayment && p.CommandID != SalaryPayment && p.CommandID != PromotionPayment:
		badRequest(w, "CommandID")
		return
	case !simAmountRE.MatchString(string(p.Amount)) || amount <= 0:
		badRequest(w, "Amount")
		return
	case !simPhoneRE.MatchString(string(p.PartyB)) || refused:
		badRequest(w, "PartyB")
		return
	case strings.TrimSpace(string(p.OriginatorConversationID)) == "":
		badRequest(w, "OriginatorConversationID")
		return
	}
	n := s.Next()
	pay := &b2cPayout{origID: string(p.OriginatorConversationID), convID: fmt.Sprintf("AG_%s_%010d", time.Now().UTC().Format("20060102"), n),
		amount: amount, phone: string(p.PartyB), resultURL: string(p.ResultURL), stuck: stuck && !badInitiator, badInitiator: badInitiator}
	s.b2c.mu.Lock()
	s.b2c.payouts = append(s.b2c.payouts, pay)
	s.b2c.mu.Unlock()
	if !s.LoseB2CAnswers.Load() || !hangUp(w) { // else received, its answer lost
		sim.Reply(w, http.StatusOK, map[string]string{"ConversationID": pay.convID, "OriginatorConversationID": pay.origID,
			"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	}
	if pay.stuck || s.SettleAfter <= 0 {
		return // never, or when the control call says
	}
	go func() {
		time.Sleep(s.SettleAfter)
		s.settleB2C(pay)
	}()
}

// settleB2C ends a pending payment as its number asks and POSTs its
// result (unless LoseResults); false when it had ended already.
func (s *Simulator) settleB2C(pay *b2cPayout) bool {
	_, fails, _ := sim.Outcome(pay.phone)
	s.b2c.mu.Lock()
	if pay.code != "" {
		s.b2c.mu.Unlock()
		return false
	}
	pay.code = "0"
	switch {
	case pay.badInitiator:
		pay.code = "2001"
	case fails && sim.LowBalance(pay.phone):
		pay.code = "1"
	case fails:
		pay.code = "2040"
	default:
		pay.receipt = fmt.Sprintf("SIB%07d", s.Next()%10000000)
	}
	body := b2cResult(pay)
	s.b2c.mu.Unlock()
	if !s.LoseResults.Load() {
		post(pay.resultURL, body)
	}
	return true
}

// b2cControl is POST /_sim/settle/{OriginatorConversationID}: the
// reference's pending B2C payments end, their results POSTed before it
// answers 204; false when the reference has no B2C payment (the STK
// book's then).
func (s *Simulator) b2cControl(w http.ResponseWriter, r *http.Request) bool {
	ref, ok := strings.CutPrefix(r.URL.Path, "/_sim/settle/")
	if !ok || r.Method != http.MethodPost {
		return false
	}
	s.b2c.mu.Lock()
	var pays []*b2cPayout
	for _, p := range s.b2c.payouts {
		if p.origID == ref {
			pays = append(pays, p)
		}
	}
	s.b2c.mu.Unlock()
	if len(pays) == 0 {
		return false
	}
	for _, p := range pays {
		s.settleB2C(p)
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// Payouts counts the B2C payment requests the simulator accepted (each
// one a payment, duplicates included).
func (s *Simulator) Payouts() int { return s.B2CRequests() }

// b2cResultDescs are the ResultDescs of the simulated B2C results.
var b2cResultDescs = map[string]string{
	"0":    "The service request is processed successfully.",
	"1":    "The balance is insufficient for the transaction.",
	"2001": "The initiator information is invalid.",
	"2040": "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.",
}

// SimRecipientName is the registered name the simulator gives every wallet.
const SimRecipientName = "John Doe"

// b2cResult is pay's Result (b.mu held).
func b2cResult(pay *b2cPayout) []byte {
	var params []map[string]any
	if pay.code == "0" {
		params = []map[string]any{
			{"Key": "TransactionAmount", "Value": pay.amount},
			{"Key": "TransactionReceipt", "Value": pay.receipt},
			{"Key": "B2CRecipientIsRegisteredCustomer", "Value": "Y"},
			{"Key": "ReceiverPartyPublicName", "Value": pay.phone + " - " + SimRecipientName},
			{"Key": "TransactionCompletedDateTime", "Value": time.Now().In(eat).Format("02.01.2006 15:04:05")},
		}
	}
	res := map[string]any{"ResultType": 0, "ResultCode": json.Number(pay.code), "ResultDesc": b2cResultDescs[pay.code],
		"OriginatorConversationID": pay.origID, "ConversationID": pay.convID, "TransactionID": pay.receipt}
	if params != nil {
		res["ResultParameters"] = map[string]any{"ResultParameter": params}
	}
	b, _ := json.Marshal(map[string]any{"Result": res})
	return b
}

// transactionStatus is POST /mpesa/transactionstatus/v1/query, by
// OriginatorConversationID: acknowledged, then the last payment of that
// reference, once settled, is described on the query's ResultURL. A
// payment still pending (or unknown) gets no result.
func (s *Simulator) transactionStatus(w http.ResponseWriter, r *http.Request) {
	p, ok := decodeB2C(w, r)
	if !ok || !s.initiated(w, p.Initiator, p, true) {
		return
	}
	if p.CommandID != "TransactionStatusQuery" {
		badRequest(w, "CommandID")
		return
	}
	ref := strings.TrimSpace(string(p.OriginatorConversationID))
	if ref == "" && p.TransactionID == "" {
		badRequest(w, "TransactionID")
		return
	}
	n := s.Next()
	convID := fmt.Sprintf("AG_%s_%010d", time.Now().UTC().Format("20060102"), n)
	sim.Reply(w, http.StatusOK, map[string]string{"ConversationID": convID, "OriginatorConversationID": fmt.Sprintf("%d-%d-1", 20000+n, n), // the query's own
		"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	s.b2c.mu.Lock()
	var found *b2cPayout
	for _, pay := range s.b2c.payouts {
		if pay.origID == ref || (p.TransactionID != "" && pay.receipt == string(p.TransactionID)) {
			found = pay
		}
	}
	var body []byte
	if found != nil && found.code != "" {
		body = statusResult(found, convID, fmt.Sprintf("%d-%d-1", 20000+n, n))
	}
	s.b2c.mu.Unlock()
	queryID := fmt.Sprintf("%d-%d-1", 20000+n, n)
	if found == nil {
		body = s.reversalStatus(ref, string(p.TransactionID), convID, queryID)
	}
	if found == nil && body == nil && !s.knows(ref, string(p.TransactionID)) {
		body = notKnownResult(convID, queryID, string(p.Occasion))
	}
	if body != nil {
		go post(string(p.ResultURL), body)
	}
}

// knows reports whether the simulator has a reversal by this
// OriginatorConversationID, or a paid push by this receipt (B2C payments
// aside).
func (s *Simulator) knows(origID, receipt string) bool {
	if origID != "" && s.reversalBy(func(rv *simReversal) bool { return rv.origID == origID }) != nil {
		return true
	}
	return receipt != "" && len(s.Find(func(m *sim.Movement[simPayment]) bool { return m.Status == "0" && m.Data.receipt == receipt })) > 0
}

// notKnownResult is the status query's Result about a transaction M-PESA
// does not have, as Daraja's sandbox answered it
// (testdata/transactionstatus_result_not_known.json): ResultCode 2032, a
// number, no ResultParameters, a TransactionID of zeros after its prefix.
func notKnownResult(convID, queryID, occasion string) []byte {
	return marshalResult(map[string]any{"ResultType": 0, "ResultCode": 2032, "ResultDesc": "The transaction receipt number does not exist.",
		"OriginatorConversationID": queryID, "ConversationID": convID, "TransactionID": "SIS0000000",
		"ReferenceData": map[string]any{"ReferenceItem": map[string]string{"Key": "Occasion", "Value": occasion}}})
}

// hangUp closes a request's connection without answering; false when it
// cannot (the ResponseWriter is not a connection's).
func hangUp(w http.ResponseWriter) bool {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// statusResult is the status query's Result about pay (b.mu held):
// ResultCode 0, the transaction's status, receipt, amount and parties; its
// OriginatorConversationID is the query's own, origID.
func statusResult(pay *b2cPayout, convID, origID string) []byte {
	status := "Completed"
	if pay.code != "0" {
		status = "Failed"
	}
	params := []map[string]any{
		{"Key": "OriginatorConversationID", "Value": pay.origID},
		{"Key": "ReceiptNo", "Value": pay.receipt},
		{"Key": "TransactionStatus", "Value": status},
		{"Key": "Amount", "Value": pay.amount},
		{"Key": "CreditPartyName", "Value": pay.phone + " - " + SimRecipientName},
		{"Key": "ReasonType", "Value": "Business Payment to Customer via API"},
	}
	b, _ := json.Marshal(map[string]any{"Result": map[string]any{"ResultType": 0, "ResultCode": 0,
		"ResultDesc": "The service request is processed successfully.", "OriginatorConversationID": origID,
		"ConversationID": convID, "TransactionID": pay.receipt, "ResultParameters": map[string]any{"ResultParameter": params}}})
	return b
}

// post sends a result, once, as Daraja does.
func post(url string, body []byte) {
	c := &http.Client{Timeout: 10 * time.Second}
	if resp, err := c.Post(url, "application/json", bytes.NewReader(body)); err == nil {
		resp.Body.Close()
	}
}
