package mpesa

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// The simulator's reversals: POST /mpesa/reversal/v1/request, acknowledged
// at once ({OriginatorConversationID, ConversationID, ResponseCode "0",
// ResponseDescription}: testdata/reversal_accepted.json), its result POSTed
// later to the request's ResultURL (reversal_result_*.json). What it
// reverses is one of its own STK payments, by its receipt:
//
//	a paid push's receipt, first time   reversed (ResultCode 0, a receipt SIR...)
//	reversed already                    R000001 "The transaction has already been reversed."
//	any other TransactionID             R000002 "The OriginalTransactionID is invalid."
//	a wrong initiator or credential     2001 "The initiator information is invalid."
//	the B2C initiator, when the simulator has a separate reversal
//	initiator (ReversalInitiatorName)   21 "The initiator is not allowed to initiate this request."
//
// An Amount other than the payment's is refused at once (400 "Bad Request
// - Invalid Amount": the simulator's choice), as are a CommandID other than
// TransactionReversal, a RecieverIdentifierType other than "11" (the
// portal's FAQ words this refusal), a ReceiverParty other than ShortCode.
// A reversal settles after SettleAfter or, when it is 0, when POST
// /_sim/settle/{OriginatorConversationID}[?status=ResultCode] says so
// (status forcing its ResultCode), or /_sim/settle/{receipt} for the
// pending reversal of that payment (whose acknowledgement was lost). LoseResults drops the results (not the
// status query's); LoseReversalAnswers records each reversal, then closes
// the connection without answering (an acknowledgement lost). The
// transaction status query describes a reversal asked by its
// OriginatorConversationID ("Completed" once reversed), or a payment asked
// by its receipt ("Reversed" once reversed: the simulator's word).
// Reversals counts the reversal requests received.

// simReversal is one reversal the simulator received.
type simReversal struct {
	origID, convID, receipt string // Daraja's ids, and the reversal's own receipt once reversed
	reversed                string // the payment's receipt it reverses
	amount                  int64
	resultURL               string
	code                    string // "" while pending
	initiatorCode           string // the ResultCode its initiator ends it with (21, 2001), "" when allowed
}

type reversalBook struct {
	mu   sync.Mutex
	list []*simReversal
}

// Reversals counts the reversal requests the simulator received, each one
// recorded (a reversal sent twice counts twice).
func (s *Simulator) Reversals() int {
	s.reversals.mu.Lock()
	defer s.reversals.mu.Unlock()
	return len(s.reversals.list)
}

// Refunds is Reversals: a refund of an M-Pesa payment is its reversal.
func (s *Simulator) Refunds() int { return s.Reversals() }

// reversalDescs are the ResultDescs of the simulated reversal results
// (the portal's Reversal page's result codes).
var reversalDescs = map[string]string{
	"0":       "The service request is processed successfully.",
	"R000001": "The transaction has already been reversed.",
	"R000002": "The OriginalTransactionID is invalid.",
	"21":      "The initiator is not allowed to initiate this request.",
	"2001":    "The initiator information is invalid.",
	"1":       "The balance is insufficient for the transaction.",
}

// simReversalBody is a reversal request as the simulator reads it.
type simReversalBody struct {
	Initiator, SecurityCredential, CommandID, TransactionID, Amount   text
	ReceiverParty, RecieverIdentifierType, ResultURL, QueueTimeOutURL text
	Remarks, Occasion                                                 text
}

// reversal is POST /mpesa/reversal/v1/request.
func (s *Simulator) reversal(w http.ResponseWriter, r *http.Request) {
	var p simReversalBody
	if !decodeJSON(w, r, &p) {
		return
	}
	amount, _ := strconv.ParseInt(string(p.Amount), 10, 64)
	paid := s.Find(func(m *sim.Movement[simPayment]) bool {
		return m.Status == "0" && m.Data.receipt == string(p.TransactionID)
	})
	switch {
	case p.CommandID != transactionReversal:
		badRequest(w, "CommandID")
	case strings.TrimSpace(string(p.TransactionID)) == "":
		badRequest(w, "TransactionID")
	case !simAmountRE.MatchString(string(p.Amount)) || amount < 1, len(paid) == 1 && paid[0].Data.amount != amount:
		badRequest(w, "Amount")
	case string(p.ReceiverParty) != s.ShortCode:
		badRequest(w, "ReceiverParty")
	case p.RecieverIdentifierType != reversalReceiverType:
		badRequest(w, "RecieverIdentifierType")
	case !webURL(string(p.ResultURL)):
		badRequest(w, "ResultURL")
	case !webURL(string(p.QueueTimeOutURL)):
		badRequest(w, "QueueTimeOutURL")
	case len(p.Remarks) < 2 || len(p.Remarks) > reversalRemarksMax:
		badRequest(w, "Remarks")
	default:
		n := s.Next()
		rv := &simReversal{origID: fmt.Sprintf("%04x-%04x-%08x%d", n, n*7, n*13, n), convID: fmt.Sprintf("AG_%s_%010d", time.Now().UTC().Format("20060102"), n),
			reversed: string(p.TransactionID), amount: amount, resultURL: string(p.ResultURL),
			initiatorCode: s.reversalInitiatorCode(p.Initiator, p.SecurityCredential)}
		s.reversals.mu.Lock()
		s.reversals.list = append(s.reversals.list, rv)
		s.reversals.mu.Unlock()
		if s.SettleAfter > 0 {
			go func() {
				time.Sleep(s.SettleAfter)
				s.settleReversal(rv, "")
			}()
		}
		if s.LoseReversalAnswers.Load() && hangUp(w) {
			return
		}
		sim.Reply(w, http.StatusOK, map[string]string{"OriginatorConversationID": rv.origID, "ConversationID": rv.convID,
			"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	}
}

// reversalInitiatorCode is the ResultCode a reversal by this initiator
// ends with: "" when it may reverse (the reversal initiator when the
// simulator has one, else the B2C initiator); 21, the portal's code for an
// API user without the "Org Reversals Initiator" role, for the B2C
// initiator when a separate reversal initiator is set; 2001 for a wrong
// name or credential.
func (s *Simulator) reversalInitiatorCode(name, cred text) string {
	b2c := s.initiatorRefusal(name, simB2C{SecurityCredential: cred}) == ""
	switch {
	case s.ReversalInitiatorName == "" && b2c, s.reversalInitiator(name, cred):
		return ""
	case s.ReversalInitiatorName != "" && b2c:
		return "21"
	}
	return "2001"
}

// settleReversal ends a pending reversal, with code when given, else as
// what it reverses asks, and POSTs its result (unless LoseResults); false
// when it had ended already.
func (s *Simulator) settleReversal(rv *simReversal, code string) bool {
	s.reversals.mu.Lock()
	if rv.code != "" {
		s.reversals.mu.Unlock()
		return false
	}
	paid := s.Find(func(m *sim.Movement[simPayment]) bool { return m.Status == "0" && m.Data.receipt == rv.reversed })
	already := false
	for _, o := range s.reversals.list {
		already = already || (o != rv && o.reversed == rv.reversed && o.code == "0")
	}
	switch {
	case code != "":
	case rv.initiatorCode != "":
		code = rv.initiatorCode
	case len(paid) != 1:
		code = "R000002"
	case already:
		code = "R000001"
	default:
		code = "0"
	}
	rv.code = code
	if code == "0" {
		rv.receipt = fmt.Sprintf("SIR%07d", s.Next()%10000000)
	}
	body := reversalResult(rv)
	s.reversals.mu.Unlock()
	if !s.LoseResults.Load() {
		post(rv.resultURL, body)
	}
	return true
}

// reversalControl is POST /_sim/settle/{OriginatorConversationID}, or
// /_sim/settle/{receipt} for a payment's pending reversal: the reversal
// ends, its result POSTed before it answers 204; false when no
// reversal has this id.
func (s *Simulator) reversalControl(w http.ResponseWriter, r *http.Request) bool {
	id, ok := strings.CutPrefix(r.URL.Path, "/_sim/settle/")
	if !ok || r.Method != http.MethodPost {
		return false
	}
	rv := s.reversalBy(func(rv *simReversal) bool { return rv.origID == id || rv.reversed == id && rv.code == "" })
	if rv == nil {
		return false
	}
	code := strings.TrimSpace(r.URL.Query().Get("status"))
	if _, known := reversalDescs[code]; code != "" && !known {
		http.Error(w, "unknown reversal ResultCode "+code, http.StatusBadRequest)
		return true
	}
	s.settleReversal(rv, code)
	w.WriteHeader(http.StatusNoContent)
	return true
}

// reversalBy is the last reversal that matches.
func (s *Simulator) reversalBy(match func(*simReversal) bool) *simReversal {
	s.reversals.mu.Lock()
	defer s.reversals.mu.Unlock()
	var found *simReversal
	for _, rv := range s.reversals.list {
		if match(rv) {
			found = rv
		}
	}
	return found
}

// reversalResult is rv's Result (the reversals' lock held), shaped as the
// portal's (reversal_result_success.json, reversal_result_failed.json).
func reversalResult(rv *simReversal) []byte {
	res := map[string]any{"ResultType": 0, "ResultCode": rv.code, "ResultDesc": reversalDescs[rv.code],
		"OriginatorConversationID": rv.origID, "ConversationID": rv.convID, "TransactionID": rv.receipt,
		"ReferenceData": map[string]any{"ReferenceItem": map[string]string{"Key": "QueueTimeoutURL", "Value": "https://internalsandbox.safaricom.co.ke/mpesa/reversalresults/v1/submit"}}}
	if rv.code == "0" {
		res["ResultCode"] = 0
		res["ResultParameters"] = map[string]any{"ResultParameter": []map[string]any{
			{"Key": "Amount", "Value": float64(rv.amount)},
			{"Key": "TransCompletedTime", "Value": time.Now().In(eat).Format(timestampLayout)},
			{"Key": "OriginalTransactionID", "Value": rv.reversed},
			{"Key": "Charge", "Value": 0.0},
			{"Key": "DebitPartyPublicName", "Value": "174379 - Simulated shop"},
		}}
	} else {
		res["TransactionID"] = "SKE0000000"
	}
	return marshalResult(res)
}

// reversalStatus is the status query's Result about a reversal (asked by
// its OriginatorConversationID) or about a payment (asked by its receipt),
// nil when neither is known or the reversal is still pending.
func (s *Simulator) reversalStatus(origID, receipt, convID, queryID string) []byte {
	s.reversals.mu.Lock()
	defer s.reversals.mu.Unlock()
	var about *simReversal
	for _, rv := range s.reversals.list {
		if (origID != "" && rv.origID == origID) || (origID == "" && receipt != "" && rv.reversed == receipt && rv.code == "0") {
			about = rv
		}
	}
	var params []map[string]any
	switch {
	case origID != "" && about != nil && about.code != "":
		status := "Completed"
		if about.code != "0" {
			status = "Failed"
		}
		params = []map[string]any{{"Key": "OriginatorConversationID", "Value": about.origID}, {"Key": "ReceiptNo", "Value": about.receipt},
			{"Key": "TransactionStatus", "Value": status}, {"Key": "Amount", "Value": about.amount}, {"Key": "ReasonType", "Value": "Reversal"}}
	case origID == "" && receipt != "":
		paid := s.Find(func(m *sim.Movement[simPayment]) bool { return m.Status == "0" && m.Data.receipt == receipt })
		if len(paid) != 1 {
			return nil
		}
		status := "Completed"
		if about != nil {
			status = "Reversed"
		}
		params = []map[string]any{{"Key": "ReceiptNo", "Value": receipt}, {"Key": "TransactionStatus", "Value": status},
			{"Key": "Amount", "Value": paid[0].Data.amount}, {"Key": "ReasonType", "Value": "Pay Bill Online"}}
	default:
		return nil
	}
	return marshalResult(map[string]any{"ResultType": 0, "ResultCode": 0, "ResultDesc": "The service request is processed successfully.",
		"OriginatorConversationID": queryID, "ConversationID": convID, "TransactionID": "SKE0000000",
		"ResultParameters": map[string]any{"ResultParameter": params}})
}
