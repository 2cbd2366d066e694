package mpesa

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for Daraja's Lipa na M-Pesa Online in tests and on a
// developer's machine, for one app and one shortcode: the OAuth endpoint
// (Basic auth with the consumer key and secret; tokens that expire after
// TokenLifetime), the bearer token on every call (404 "Invalid Access
// Token" otherwise, as Daraja answers), the Password and Timestamp of
// every request (500 "Wrong credentials" for a Password that is not
// base64(ShortCode+PassKey+Timestamp)), input checks answering Daraja's
// {requestId, errorCode, errorMessage}, and the CheckoutRequestID it gives
// each push. A push's status is Daraja's: "being processed"
// (500.001.1001) while it waits, then its ResultCode. The customer's
// number decides the outcome (sim.Outcome):
//
//	...0039  refused at initiation (400 "Bad Request - Invalid PhoneNumber")
//	...0029  fails once settled: 1032 "Request cancelled by user"
//	...0049  fails once settled: 1 "The balance is insufficient for the transaction."
//	...0129  never settles, no callback (a lost payment, for the reconciler)
//	...1037  fails once settled: 1037 "DS timeout user cannot be reached"
//	...2001  fails once settled: 2001 (a wrong PIN)
//	other    succeeds (ResultCode 0, a receipt number)
//
// While a push waits, its query answers Daraja's "The transaction is being
// processed" (500 500.001.1001). A push settles after SettleAfter, or when
// POST /_sim/settle/{CheckoutRequestID}[?status=] says so (a ResultCode
// of simResultDescs; FAILED is 1032, SUCCESS 0, in any case; another word
// is refused); its stkCallback is then POSTed to the push's CallBackURL. POST
// /_sim/callback/{CheckoutRequestID}[?status=] sends it again, claiming
// status when given (a duplicate, a stale or an early callback); POST
// /_sim/fault?mode= injects faults into the API (the OAuth endpoint aside;
// 500-initiate fails the push only, though the query is a POST too).
// Calls counts the API's requests, the OAuth endpoint's too. B2C and the
// transaction status query: simulator_b2c.go; reversals:
// simulator_reversal.go.
type Simulator struct {
	ConsumerKey    string
	ConsumerSecret string
	ShortCode      string        // the BusinessShortCode it accepts (the paybill, or a till's store number)
	PassKey        string        // the passkey the Passwords are made with
	SettleAfter    time.Duration // 0: only the control call settles (B2C: at once)

	// B2C (simulator_b2c.go): the initiator it accepts, the ready
	// SecurityCredential it accepts (any well-formed one when empty), the
	// B2C shortcode (ShortCode when empty); LoseResults drops the B2C
	// results, not the status query's; LoseB2CRequests hangs up on each
	// payment request before reading it (never received); LoseB2CAnswers
	// records each, then hangs up (received, its answer lost).
	InitiatorName, B2CCredential, B2CShortCode string
	LoseResults                                atomic.Bool
	LoseB2CRequests, LoseB2CAnswers            atomic.Bool
	b2c                                        b2cBook

	// LoseCallbacks drops the STK callbacks a settle sends (a payment only
	// the status query confirms, whose receipt Cauri never learns); the
	// control call /_sim/callback/ still sends one.
	LoseCallbacks atomic.Bool

	// Reversals (simulator_reversal.go): the separate reversal initiator,
	// when set, and its ready SecurityCredential (any well-formed one when
	// empty): then only it may reverse (the B2C initiator's reversals end
	// 21), and both may query; LoseReversalAnswers records each reversal
	// and closes the connection without answering.
	ReversalInitiatorName, ReversalCredential string
	LoseReversalAnswers                       atomic.Bool
	reversals                                 reversalBook

	// Book holds the pushes, by CheckoutRequestID; their status is the
	// query's errorCode while they wait, then their ResultCode.
	sim.Book[simPayment]
	once   sync.Once
	mu     sync.Mutex
	tokens map[string]time.Time // access token -> expiry
	issued int                  // tokens given
}

// TokenLifetime is how long a simulated token is valid (expires_in "3599").
const TokenLifetime = 3599 * time.Second

// simPayment is Daraja's own of an STK push and, once paid, its receipt.
type simPayment struct {
	merchantRequestID string
	amount            int64 // whole shillings
	callbackURL       string
	receipt, date     string // of a payment: MpesaReceiptNumber, TransactionDate
}

// Result descriptions, as Daraja words them (SOURCES.md): the ResultCodes
// a push ends with.
var simResultDescs = map[int]string{
	0:    "The service request is processed successfully.",
	1:    "The balance is insufficient for the transaction.",
	1032: "Request cancelled by user",
	1037: "DS timeout user cannot be reached",
	1019: "Transaction has expired",
	2001: "The initiator information is invalid.",
}

var (
	simTimestampRE = regexp.MustCompile(`^[0-9]{14}$`)
	simShortCodeRE = regexp.MustCompile(`^[0-9]{5,7}$`)
	simPhoneRE     = regexp.MustCompile(`^254[17][0-9]{8}$`)
	simAmountRE    = regexp.MustCompile(`^[0-9]{1,9}$`)
)

// ready sets the book to Daraja's lifecycle on the first request: a push
// is being processed (500.001.1001) until it ends with its ResultCode, 0
// or a failure's, and its stkCallback.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simPayment]{
			Pending: processing, Succeeded: "0", Failed: "1032", Finals: []string{"1", "1019", "1037", "2001"},
			Words: map[string]string{"FAILED": "1032", "SUCCESS": "0"},
			Outcome: func(m *sim.Movement[simPayment]) (string, bool) {
				if _, _, stuck := sim.Outcome(m.Phone); stuck {
					return "", true
				}
				return strconv.Itoa(resultCode("", m.Phone)), false
			},
			End: func(m *sim.Movement[simPayment]) {
				if m.Status == "0" {
					m.Data.receipt, m.Data.date = fmt.Sprintf("SIM%07d", m.Seq%10000000), m.Ended.In(eat).Format(timestampLayout)
				}
			},
			Notify: func(m *sim.Movement[simPayment], claim string) sim.Note {
				if s.LoseCallbacks.Load() && claim == "" {
					return sim.Note{} // lost: only the status query tells
				}
				code, _ := strconv.Atoi(m.Status)
				if claim != "" || m.Status == processing { // claimed, or early: as its number asks
					code = resultCode(claim, m.Phone)
				}
				return sim.Note{URL: m.Data.callbackURL, Body: callback(m, code)}
			},
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// Pushes counts the STK pushes the simulator accepted: each is a prompt on
// a customer's phone.
func (s *Simulator) Pushes() int {
	return len(s.Find(func(*sim.Movement[simPayment]) bool { return true }))
}

// refuse answers an error in Daraja's {requestId, errorCode, errorMessage}.
func refuse(w http.ResponseWriter, status int, code, message string) {
	b := make([]byte, 8)
	rand.Read(b)
	sim.Reply(w, status, map[string]string{"requestId": hex.EncodeToString(b), "errorCode": code, "errorMessage": message})
}

// badRequest is Daraja's 400.002.02 for a field it refuses.
func badRequest(w http.ResponseWriter, field string) {
	refuse(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid "+field)
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	if r.URL.Path == "/oauth/v1/generate" {
		s.Count()
		s.issueToken(w, r)
		return
	}
	faulted := r
	if r.URL.Path == queryPath || r.URL.Path == statusPath {
		// A status read, not an initiation, though a POST.
		faulted = r.Clone(r.Context())
		faulted.Method = http.MethodGet
	}
	if strings.HasPrefix(r.URL.Path, "/_sim/settle/") && (s.b2cControl(w, r) || s.reversalControl(w, r)) {
		return
	}
	if s.Intercept(w, faulted) {
		return
	}
	switch {
	case r.URL.Path != pushPath && r.URL.Path != queryPath && r.URL.Path != b2cPath && r.URL.Path != statusPath && r.URL.Path != reversalPath:
		refuse(w, http.StatusNotFound, "404.001.01", "Resource not found")
	case r.Method != http.MethodPost:
		refuse(w, http.StatusMethodNotAllowed, "405.001", "Method Not Allowed")
	case !s.authorized(r):
		refuse(w, http.StatusNotFound, invalidToken, "Invalid Access Token")
	case r.URL.Path == pushPath:
		s.push(w, r)
	case r.URL.Path == b2cPath:
		s.b2cPayment(w, r)
	case r.URL.Path == statusPath:
		s.transactionStatus(w, r)
	case r.URL.Path == reversalPath:
		s.reversal(w, r)
	default:
		s.query(w, r)
	}
}

// issueToken is GET /oauth/v1/generate?grant_type=client_credentials with
// the consumer key and secret.
func (s *Simulator) issueToken(w http.ResponseWriter, r *http.Request) {
	key, secret, ok := r.BasicAuth()
	switch {
	case r.Method != http.MethodGet:
		refuse(w, http.StatusMethodNotAllowed, "405.001", "Method Not Allowed")
		return
	case r.URL.Query().Get("grant_type") != "client_credentials":
		refuse(w, http.StatusBadRequest, "400.008.02", "Invalid grant type passed")
		return
	case !ok || s.ConsumerKey == "" || key != s.ConsumerKey || secret != s.ConsumerSecret:
		refuse(w, http.StatusBadRequest, "400.008.01", "Invalid Authentication passed")
		return
	}
	b := make([]byte, 14)
	rand.Read(b)
	tok, now := hex.EncodeToString(b), time.Now()
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]time.Time{}
	}
	for t, exp := range s.tokens {
		if now.After(exp) {
			delete(s.tokens, t)
		}
	}
	s.tokens[tok] = now.Add(TokenLifetime)
	s.issued++
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]string{"access_token": tok, "expires_in": strconv.Itoa(int(TokenLifetime / time.Second))})
}

// authorized reports whether r carries a valid token.
func (s *Simulator) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	exp, known := s.tokens[tok]
	s.mu.Unlock()
	return ok && known && time.Now().Before(exp)
}

// simPush is the body of a push as the simulator reads it: its numbers as
// strings or JSON numbers, which Daraja both takes.
type simPush struct {
	BusinessShortCode, Password, Timestamp, TransactionType text
	Amount, PartyA, PartyB, PhoneNumber                     text
	CallBackURL, AccountReference, TransactionDesc          text
	CheckoutRequestID                                       text // the query's
}

// signed checks a request's shortcode, Timestamp and Password, answering
// Daraja's refusal when they are wrong.
func (s *Simulator) signed(w http.ResponseWriter, p simPush) bool {
	_, tsErr := time.ParseInLocation(timestampLayout, string(p.Timestamp), eat)
	switch {
	case p.BusinessShortCode != text(s.ShortCode) || s.ShortCode == "":
		badRequest(w, "BusinessShortCode")
	case !simTimestampRE.MatchString(string(p.Timestamp)) || tsErr != nil:
		badRequest(w, "Timestamp")
	case string(p.Password) != (&Client{ShortCode: s.ShortCode, PassKey: s.PassKey}).password(string(p.Timestamp)):
		refuse(w, http.StatusInternalServerError, processing, "Wrong credentials")
	default:
		return true
	}
	return false
}

// decode reads a request's body, answering Daraja's refusal when it is not
// JSON.
func decode(w http.ResponseWriter, r *http.Request) (simPush, bool) {
	var p simPush
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&p); err != nil {
		refuse(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid JSON")
		return p, false
	}
	return p, true
}

// push is POST /mpesa/stkpush/v1/processrequest: checked, given a
// CheckoutRequestID, answered ResponseCode "0".
func (s *Simulator) push(w http.ResponseWriter, r *http.Request) {
	p, ok := decode(w, r)
	if !ok || !s.signed(w, p) {
		return
	}
	amount, _ := strconv.ParseInt(string(p.Amount), 10, 64)
	switch {
	case p.TransactionType != PayBill && p.TransactionType != BuyGoods:
		badRequest(w, "TransactionType")
	case !simAmountRE.MatchString(string(p.Amount)) || amount < 1:
		badRequest(w, "Amount")
	case !simPhoneRE.MatchString(string(p.PartyA)):
		badRequest(w, "PartyA")
	case p.TransactionType == PayBill && p.PartyB != text(s.ShortCode), !simShortCodeRE.MatchString(string(p.PartyB)):
		badRequest(w, "PartyB")
	case !simPhoneRE.MatchString(string(p.PhoneNumber)):
		badRequest(w, "PhoneNumber")
	case !webURL(string(p.CallBackURL)):
		badRequest(w, "CallBackURL")
	case len(p.AccountReference) == 0 || len(p.AccountReference) > accountReferenceMax:
		badRequest(w, "AccountReference")
	case len(p.TransactionDesc) == 0 || len(p.TransactionDesc) > transactionDescMax:
		badRequest(w, "TransactionDesc")
	default:
		if refused, _, _ := sim.Outcome(string(p.PhoneNumber)); refused {
			badRequest(w, "PhoneNumber")
			return
		}
		s.accept(w, &sim.Movement[simPayment]{Phone: string(p.PhoneNumber), Data: simPayment{amount: amount, callbackURL: string(p.CallBackURL)}})
	}
}

// accept records a push and answers Daraja's acknowledgement.
func (s *Simulator) accept(w http.ResponseWriter, m *sim.Movement[simPayment]) {
	n := s.Next()
	m.Data.merchantRequestID = fmt.Sprintf("%d-%d-1", 10000+n, time.Now().UnixNano()%100000000)
	m.ID = fmt.Sprintf("ws_CO_%s%06d", time.Now().In(eat).Format("02012006150405"), n)
	s.Add(m)
	const accepted = "Success. Request accepted for processing"
	sim.Reply(w, http.StatusOK, map[string]string{"MerchantRequestID": m.Data.merchantRequestID, "CheckoutRequestID": m.ID,
		"ResponseCode": "0", "ResponseDescription": accepted, "CustomerMessage": accepted})
}

// query is POST /mpesa/stkpushquery/v1/query.
func (s *Simulator) query(w http.ResponseWriter, r *http.Request) {
	q, ok := decode(w, r)
	if !ok || !s.signed(w, q) {
		return
	}
	m, ok := s.View(string(q.CheckoutRequestID))
	code, _ := strconv.Atoi(m.Status)
	switch {
	case !ok:
		badRequest(w, "CheckoutRequestID")
	case m.Status == processing:
		refuse(w, http.StatusInternalServerError, processing, "The transaction is being processed")
	default:
		sim.Reply(w, http.StatusOK, map[string]string{"ResponseCode": "0", "ResponseDescription": "The service request has been accepted successfully",
			"MerchantRequestID": m.Data.merchantRequestID, "CheckoutRequestID": m.ID,
			"ResultCode": m.Status, "ResultDesc": resultDesc(code)})
	}
}

func resultDesc(code int) string {
	if d, ok := simResultDescs[code]; ok {
		return d
	}
	return "The transaction failed"
}

// resultCode is the ResultCode a control call's status asks for: none, the
// one the payer's number asks for; FAILED, 1032; a number, itself; any
// other word, 0.
func resultCode(status, phone string) int {
	status = strings.ToUpper(strings.TrimSpace(status))
	if n, err := strconv.Atoi(status); err == nil && n >= 0 {
		return n
	}
	_, fails, _ := sim.Outcome(phone)
	switch {
	case status == "FAILED", status == "" && fails && !sim.LowBalance(phone):
		return 1032
	case status == "" && fails:
		return 1
	case status == "" && (strings.HasSuffix(phone, "1037") || strings.HasSuffix(phone, "2001")):
		// Daraja publishes no test numbers: these are the simulator's, for
		// the failures integrators meet most after 1032 and 1 (the research
		// notes' section 7; api-evangelist/mpesa errors/mpesa-result-codes.yml:
		// 1037 the phone did not answer, 2001 a wrong PIN).
		return resultCode(phone[len(phone)-4:], "")
	}
	return 0
}

// callback is m's stkCallback claiming ResultCode code, with its
// CallbackMetadata for a payment.
func callback(m *sim.Movement[simPayment], code int) []byte {
	p := &m.Data
	var cb callbackBody
	cb.Body.STKCallback = stkCallback{MerchantRequestID: p.merchantRequestID, CheckoutRequestID: m.ID,
		ResultCode: json.Number(strconv.Itoa(code)), ResultDesc: resultDesc(code)}
	if code == 0 {
		receipt, date := p.receipt, p.date
		if receipt == "" {
			receipt, date = "SIM0000000", time.Now().In(eat).Format(timestampLayout)
		}
		cb.Body.STKCallback.CallbackMetadata = &callbackMetadata{Item: []callbackItem{
			{Name: "Amount", Value: json.Number(strconv.FormatInt(p.amount, 10) + ".00")},
			{Name: "MpesaReceiptNumber", Value: receipt},
			{Name: "TransactionDate", Value: json.Number(date)},
			{Name: "PhoneNumber", Value: json.Number(m.Phone)},
		}}
	}
	b, _ := json.Marshal(cb)
	return b
}
