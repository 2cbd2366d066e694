package mtnmomo

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// Simulator stands in for MTN's MoMo Open API (Collection's request to pay
// and Disbursement's transfer) in tests and on a developer's machine, for
// one API user: the token endpoints (Basic auth with the API user and key,
// the product's subscription key; tokens that expire after TokenLifetime),
// the subscription key and bearer token on every call (401 otherwise), a
// known X-Target-Environment (403 NOT_ALLOWED_TARGET_ENVIRONMENT
// otherwise), input checks answering MTN's {code, message}, and the
// X-Reference-Id as the transaction's id: the same one again is 409
// RESOURCE_ALREADY_EXIST, never a second payment or payout. A transaction
// is PENDING until it ends SUCCESSFUL or FAILED with a reason. The
// customer's number decides the outcome (sim.Outcome):
//
//	...0039  refused at initiation (400 PAYER_NOT_FOUND, PAYEE_NOT_FOUND)
//	...0029  fails once settled (APPROVAL_REJECTED; a payout
//	         PAYEE_NOT_ALLOWED_TO_RECEIVE)
//	...0049  a request to pay fails once settled (NOT_ENOUGH_FUNDS); a
//	         payout is refused at initiation (400 NOT_ENOUGH_FUNDS): the
//	         merchant's account lacks the funds
//	...0129  never settles, no callback (a lost payment, for the reconciler)
//
// then MTN's own sandbox numbers (sandboxPayers, sandboxPayees); any
// other number succeeds.
//
// Disbursement also refunds a successful request to pay, in parts, never
// more than is left (POST /disbursement/v1_0/refund, GET .../refund/{ref}:
// the refund goes to the payer's number and settles as a transfer does).
//
// Both products also answer an account holder's basic user info (names.go:
// SimHolders by the number's last four digits, "Sand Box" for MTN's
// sandbox numbers, 404 for any other number).
//
// A transaction settles after SettleAfter, or when POST
// /_sim/settle/{reference}[?status=SUCCESSFUL|FAILED] says so; it is then
// PUT, as its status read shows it, to the X-Callback-Url given with it
// (none without one). POST /_sim/callback/{reference}[?status=] sends it
// again, claiming status when given (a duplicate, a stale or an early
// callback); POST /_sim/fault?mode= injects faults into the API (the
// token endpoints aside). Calls counts the API's requests, the token
// endpoints' too.
type Simulator struct {
	APIUser         string
	APIKey          string
	CollectionKey   string
	DisbursementKey string        // none: every disbursement call is refused (401)
	SettleAfter     time.Duration // 0: only the control call settles

	// Book holds the requests to pay and the transfers, by X-Reference-Id
	// (our reference).
	sim.Book[simPayment]
	once    sync.Once
	mu      sync.Mutex
	tokens  map[string]simToken // by access token
	issued  int                 // tokens given
	lookups int                 // basic user info requests

	refunding sync.Mutex // one refund at a time: what is left sees the others
}

// TokenLifetime is how long a simulated token is valid (expires_in).
const TokenLifetime = time.Hour

type simToken struct {
	product string
	expires time.Time
}

// simPayment is MTN's own of a request to pay or a transfer (kind).
type simPayment struct {
	kind                         string // "requesttopay", "transfer" or "refund"
	refundOf                     string // a refund's request to pay (its X-Reference-Id)
	amount, currency, externalID string
	party                        party
	payerMessage, payeeNote      string
	financialTransactionID       string
	reason                       string
	callbackURL                  string
}

// MTN's statuses of a transaction.
const (
	simPending    = "PENDING"
	simSuccessful = "SUCCESSFUL"
	simFailed     = "FAILED"
)

// ready sets the book to MTN's lifecycle (PENDING, ending SUCCESSFUL or
// FAILED with its callback) on the first request.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simPayment]{
			Pending: simPending, Succeeded: simSuccessful, Failed: simFailed,
			Outcome: simOutcome, End: simEnd,
			Notify: func(m *sim.Movement[simPayment], claim string) sim.Note {
				if m.Data.callbackURL == "" {
					return sim.Note{}
				}
				o := object(m)
				if claim != "" {
					o["status"] = strings.ToUpper(claim)
				}
				body, _ := json.Marshal(o)
				return sim.Note{Method: http.MethodPut, URL: m.Data.callbackURL, Body: body}
			},
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// object is the transaction as its status read and its callback show it.
func object(m *sim.Movement[simPayment]) map[string]any {
	p := &m.Data
	o := map[string]any{"amount": p.amount, "currency": p.currency, "externalId": p.externalID,
		"payerMessage": p.payerMessage, "payeeNote": p.payeeNote, "status": m.Status}
	if m.Payout {
		o["payee"] = p.party
	} else {
		o["payer"] = p.party
	}
	if p.financialTransactionID != "" {
		o["financialTransactionId"] = p.financialTransactionID
	}
	if p.reason != "" {
		o["reason"] = p.reason
	}
	return o
}

var (
	simAmountRE   = regexp.MustCompile(`^[0-9]{1,15}(\.[0-9]{1,2})?$`)
	simCurrencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// refuse answers an error in MTN's {code, message} shape.
func refuse(w http.ResponseWriter, status int, code, message string) {
	sim.Reply(w, status, map[string]string{"code": code, "message": message})
}

// gatewayRefusal answers as MTN's API gateway does, before the API:
// {statusCode, message}.
func gatewayRefusal(w http.ResponseWriter, status int, message string) {
	sim.Reply(w, status, map[string]any{"statusCode": status, "message": message})
}

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rest = "/" + rest
	key := s.CollectionKey
	if name == "disbursement" {
		key = s.DisbursementKey
	}
	subscribed := key != "" && r.Header.Get("Ocp-Apim-Subscription-Key") == key
	if (name == "collection" || name == "disbursement") && rest == "/token/" && r.Method == http.MethodPost {
		s.Count()
		if !subscribed {
			gatewayRefusal(w, http.StatusUnauthorized, badSubscription)
			return
		}
		s.issueToken(w, r, name)
		return
	}
	if s.Intercept(w, r) {
		return
	}
	switch {
	case name != "collection" && name != "disbursement":
		gatewayRefusal(w, http.StatusNotFound, "Resource not found")
		return
	case !subscribed:
		gatewayRefusal(w, http.StatusUnauthorized, badSubscription)
		return
	case !s.authorized(r, name):
		gatewayRefusal(w, http.StatusUnauthorized, "Unauthorized. Access token is missing or invalid.")
		return
	}
	if env := r.Header.Get("X-Target-Environment"); !slices.Contains(Environments, env) {
		refuse(w, http.StatusForbidden, "NOT_ALLOWED_TARGET_ENVIRONMENT", "Access to target environment "+strconv.Quote(env)+" is forbidden.")
		return
	}
	if holder, ok := strings.CutPrefix(rest, "/v1_0/accountholder/msisdn/"); ok && r.Method == http.MethodGet {
		if number, ok := strings.CutSuffix(holder, "/basicuserinfo"); ok {
			s.basicUserInfo(w, number)
			return
		}
	}
	kind, path := "requesttopay", "/v1_0/requesttopay"
	if name == "disbursement" {
		kind, path = "transfer", "/v1_0/transfer"
	}
	if name == "disbursement" && (rest == "/v1_0/refund" || strings.HasPrefix(rest, "/v1_0/refund/")) {
		kind, path = "refund", "/v1_0/refund"
	}
	switch {
	case r.Method == http.MethodPost && rest == path && kind == "refund":
		s.refund(w, r)
	case r.Method == http.MethodPost && rest == path:
		s.initiate(w, r, kind)
	case r.Method == http.MethodGet && strings.HasPrefix(rest, path+"/"):
		s.read(w, kind, strings.TrimPrefix(rest, path+"/"))
	default:
		gatewayRefusal(w, http.StatusNotFound, "Resource not found")
	}
}

const badSubscription = "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription."

// issueToken is POST /{product}/token/ with the API user and key.
func (s *Simulator) issueToken(w http.ResponseWriter, r *http.Request, product string) {
	user, key, ok := r.BasicAuth()
	if !ok || s.APIUser == "" || user != s.APIUser || key != s.APIKey {
		sim.Reply(w, http.StatusUnauthorized, map[string]string{"error": "login_failed"})
		return
	}
	b := make([]byte, 24)
	rand.Read(b)
	tok, now := "sim."+hex.EncodeToString(b), time.Now()
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]simToken{}
	}
	for t, st := range s.tokens {
		if now.After(st.expires) {
			delete(s.tokens, t)
		}
	}
	s.tokens[tok] = simToken{product: product, expires: now.Add(TokenLifetime)}
	s.issued++
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "access_token", "expires_in": int(TokenLifetime / time.Second)})
}

// authorized reports whether r carries a valid token of the product.
func (s *Simulator) authorized(r *http.Request, product string) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	t, known := s.tokens[tok]
	s.mu.Unlock()
	return ok && known && t.product == product && time.Now().Before(t.expires)
}

// simRequest is the body of a request to pay or a transfer.
type simRequest struct {
	Amount       string `json:"amount"`
	Currency     string `json:"currency"`
	ExternalID   string `json:"externalId"`
	Payer        *party `json:"payer"`
	Payee        *party `json:"payee"`
	PayerMessage string `json:"payerMessage"`
	PayeeNote    string `json:"payeeNote"`
}

// initiate is POST /collection/v1_0/requesttopay or
// /disbursement/v1_0/transfer (kind): checked, recorded under its
// X-Reference-Id, answered 202 with no body.
func (s *Simulator) initiate(w http.ResponseWriter, r *http.Request, kind string) {
	ref, callback := r.Header.Get("X-Reference-Id"), r.Header.Get("X-Callback-Url")
	var req simRequest
	decodeErr := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req)
	who, p := "PAYER", req.Payer
	if kind == "transfer" {
		who, p = "PAYEE", req.Payee
	}
	switch {
	case !isUUID(ref):
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "X-Reference-Id must be a UUID version 4.")
		return
	case callback != "" && !webURL(callback):
		refuse(w, http.StatusBadRequest, "INVALID_CALLBACK_URL_HOST", "Callback URL is not an absolute http or https URL.")
		return
	case decodeErr != nil:
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "The body is not a "+kind+" (amount is a string).")
		return
	case !simAmountRE.MatchString(req.Amount) || strings.Trim(req.Amount, "0.") == "":
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "amount must be a positive decimal number, as a string.")
		return
	case !simCurrencyRE.MatchString(req.Currency):
		refuse(w, http.StatusBadRequest, "INVALID_CURRENCY", "Currency not supported.")
		return
	case p == nil || p.PartyIDType != "MSISDN":
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", strings.ToLower(who)+".partyIdType must be MSISDN.")
		return
	}
	if _, ok := msisdn(p.PartyID); !ok || strings.HasPrefix(p.PartyID, "+") {
		refuse(w, http.StatusBadRequest, who+"_NOT_FOUND", strings.ToLower(who)+".partyId must be an MSISDN with its country code, digits only.")
		return
	}
	refused, _, _ := sim.Outcome(p.PartyID)
	switch {
	case s.has(ref):
		refuse(w, http.StatusConflict, "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.")
		return
	case refused:
		refuse(w, http.StatusBadRequest, who+"_NOT_FOUND", strings.ToLower(who[:1])+strings.ToLower(who[1:])+" does not exist.")
		return
	case kind == "transfer" && sim.LowBalance(p.PartyID):
		refuse(w, http.StatusBadRequest, notEnoughFunds, "The payer does not have enough funds.")
		return
	}
	m := &sim.Movement[simPayment]{ID: ref, Payout: kind == "transfer", Phone: p.PartyID, Data: simPayment{kind: kind,
		amount: req.Amount, currency: req.Currency, externalID: req.ExternalID, party: *p,
		payerMessage: req.PayerMessage, payeeNote: req.PayeeNote, callbackURL: callback}}
	if _, added := s.Add(m); !added { // the same reference in between
		refuse(w, http.StatusConflict, "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.")
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *Simulator) has(ref string) bool {
	_, ok := s.View(ref)
	return ok
}

func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// read is GET /collection/v1_0/requesttopay/{ref} or
// /disbursement/v1_0/transfer/{ref} (kind).
func (s *Simulator) read(w http.ResponseWriter, kind, ref string) {
	m, ok := s.View(ref)
	if !ok || m.Data.kind != kind {
		refuse(w, http.StatusNotFound, notFound, "Requested resource was not found.")
		return
	}
	sim.Reply(w, http.StatusOK, object(&m))
}

// sandboxPayers are MTN's sandbox numbers for a request to pay and the
// reason each fails with once settled ("Sandbox Use Cases",
// momodeveloper.mtn.com/api-documentation/testing, served as
// momodeveloper.mtn.com/content/html_widgets/881wm.html: the
// RequestToPayPayer... rows). The table names each case only; the reasons
// are MTN's codes for them (testdata/SOURCES.md). PENDING: it stays
// pending, no callback. 46733123453 ("Ongoing") succeeds: MTN's earlier
// Testing page says it answers pending first, then successful.
var sandboxPayers = map[string]string{
	"46733123450": "INTERNAL_PROCESSING_ERROR", // Failed
	"46733123451": "APPROVAL_REJECTED",         // Rejected
	"46733123452": "EXPIRED",                   // Expired
	"46733123454": simPending,                  // Delayed
	"46733123455": "PAYER_NOT_FOUND",
	"46733123456": "PAYEE_NOT_ALLOWED_TO_RECEIVE",
	"46733123457": "NOT_ALLOWED",
	"46733123461": "INTERNAL_PROCESSING_ERROR",
	"46733123462": "SERVICE_UNAVAILABLE",
	"46733123463": "COULD_NOT_PERFORM_TRANSACTION",
}

// sandboxPayees are the same page's numbers for a transfer (its
// TransferPayee... rows), which differ from 46733123455 on.
var sandboxPayees = map[string]string{
	"46733123450": "INTERNAL_PROCESSING_ERROR", // Failed
	"46733123451": "APPROVAL_REJECTED",         // Rejected
	"46733123452": "EXPIRED",                   // Expired
	"46733123454": simPending,                  // Delayed
	"46733123455": notEnoughFunds,
	"46733123456": "PAYER_LIMIT_REACHED",
	"46733123457": "PAYEE_NOT_FOUND",
	"46733123458": "NOT_ALLOWED",
	"46733123462": "INTERNAL_PROCESSING_ERROR",
	"46733123463": "SERVICE_UNAVAILABLE",
}

// simOutcome is how a transaction ends as its number asks: FAILED with
// its reason, or stuck.
func simOutcome(m *sim.Movement[simPayment]) (string, bool) {
	_, fails, stuck := sim.Outcome(m.Phone)
	reason := ""
	switch {
	case stuck:
		return "", true
	case fails && m.Payout:
		reason = "PAYEE_NOT_ALLOWED_TO_RECEIVE"
	case fails && sim.LowBalance(m.Phone):
		reason = notEnoughFunds
	case fails:
		reason = "APPROVAL_REJECTED"
	case m.Payout:
		reason = sandboxPayees[m.Phone]
	default:
		reason = sandboxPayers[m.Phone]
	}
	switch reason {
	case "":
		return "", false
	case simPending:
		return "", true
	}
	m.Data.reason = reason
	return simFailed, false
}

// simEnd completes a transaction as it ends: a success has its financial
// transaction id, a failure its reason (one settled FAILED on a control
// call: the payer declined, or the payee may not receive).
func simEnd(m *sim.Movement[simPayment]) {
	switch {
	case m.Status == simSuccessful:
		m.Data.financialTransactionID = strconv.Itoa(400000000 + m.Seq)
	case m.Data.reason == "" && m.Payout:
		m.Data.reason = "PAYEE_NOT_ALLOWED_TO_RECEIVE"
	case m.Data.reason == "":
		m.Data.reason = "APPROVAL_REJECTED"
	}
}

// simRefund is the body of a refund (refundV1.Readme.md).
type simRefund struct {
	Amount              string `json:"amount"`
	Currency            string `json:"currency"`
	ExternalID          string `json:"externalId"`
	PayerMessage        string `json:"payerMessage"`
	PayeeNote           string `json:"payeeNote"`
	ReferenceIDToRefund string `json:"referenceIdToRefund"`
}

// refund is POST /disbursement/v1_0/refund (MTN's JavaScript SDK,
// refund-v1.js and refundV1.Readme.md): checked as a transfer is (its
// X-Reference-Id a UUID, the same one again 409 RESOURCE_ALREADY_EXIST;
// amount a string; a callback address), then referenceIdToRefund must be
// a request to pay that succeeded (404 RESOURCE_NOT_FOUND otherwise; 400
// NOT_ALLOWED while it has not), in its currency, and the amount at most
// what is left of it (its amount less its refunds that have not failed).
// The sources are silent about refusals, partial refunds and over-refunds:
// a part is taken (the request carries an amount), more than is left is
// refused (400 NOT_ALLOWED, the conservative reading), in the simulator's
// own words. The refund goes to the request to pay's payer, PENDING until
// settled as a transfer is (its number decides), with its callback.
func (s *Simulator) refund(w http.ResponseWriter, r *http.Request) {
	ref, callback := r.Header.Get("X-Reference-Id"), r.Header.Get("X-Callback-Url")
	var req simRefund
	decodeErr := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req)
	switch {
	case !isUUID(ref):
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "X-Reference-Id must be a UUID version 4.")
		return
	case callback != "" && !webURL(callback):
		refuse(w, http.StatusBadRequest, "INVALID_CALLBACK_URL_HOST", "Callback URL is not an absolute http or https URL.")
		return
	case decodeErr != nil:
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "The body is not a refund (every field is a string).")
		return
	case !simAmountRE.MatchString(req.Amount) || strings.Trim(req.Amount, "0.") == "":
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "amount must be a positive decimal number, as a string.")
		return
	case !simCurrencyRE.MatchString(req.Currency):
		refuse(w, http.StatusBadRequest, "INVALID_CURRENCY", "Currency not supported.")
		return
	case !isUUID(req.ReferenceIDToRefund):
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "referenceIdToRefund must be the X-Reference-Id of a request to pay.")
		return
	}
	s.refunding.Lock()
	defer s.refunding.Unlock()
	if s.has(ref) {
		refuse(w, http.StatusConflict, "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.")
		return
	}
	paid, ok := s.View(req.ReferenceIDToRefund)
	switch {
	case !ok || paid.Data.kind != "requesttopay":
		refuse(w, http.StatusNotFound, notFound, "The request to pay to refund was not found.")
		return
	case paid.Status != simSuccessful:
		refuse(w, http.StatusBadRequest, "NOT_ALLOWED", "Only a successful request to pay can be refunded.")
		return
	case req.Currency != paid.Data.currency:
		refuse(w, http.StatusBadRequest, "INVALID_CURRENCY", "The currency is not the request to pay's.")
		return
	}
	cur := cauri.Currency(paid.Data.currency)
	left, _ := cauri.ParseAmount("amount", paid.Data.amount, cur)
	for _, o := range s.Find(func(m *sim.Movement[simPayment]) bool {
		return m.Data.kind == "refund" && m.Data.refundOf == req.ReferenceIDToRefund && m.Status != simFailed
	}) {
		a, _ := cauri.ParseAmount("amount", o.Data.amount, cur)
		left -= a
	}
	if amount, err := cauri.ParseAmount("amount", req.Amount, cur); err != nil || amount > left {
		refuse(w, http.StatusBadRequest, "NOT_ALLOWED", "The amount exceeds what is left to refund of the request to pay: "+
			cauri.FormatAmount(left, cur)+" "+string(cur)+".")
		return
	}
	payee := paid.Data.party
	m := &sim.Movement[simPayment]{ID: ref, Payout: true, Phone: payee.PartyID, Data: simPayment{kind: "refund", refundOf: req.ReferenceIDToRefund,
		amount: req.Amount, currency: req.Currency, externalID: req.ExternalID, party: payee,
		payerMessage: req.PayerMessage, payeeNote: req.PayeeNote, callbackURL: callback}}
	s.Add(m)
	w.WriteHeader(http.StatusAccepted)
}

// Refunds counts the refunds the simulator accepted (each gives money
// back; they count among Payouts too: money sent).
func (s *Simulator) Refunds() int {
	return len(s.Find(func(m *sim.Movement[simPayment]) bool { return m.Data.kind == "refund" }))
}
