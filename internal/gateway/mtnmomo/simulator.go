package mtnmomo

import (
	"bytes"
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
// RESOURCE_ALREADY_EXIST, never a second payment or payout. The
// customer's number decides the outcome (sim.Outcome):
//
//	...0039  refused at initiation (400 PAYER_NOT_FOUND, PAYEE_NOT_FOUND)
//	...0029  fails once settled (APPROVAL_REJECTED; a payout
//	         PAYEE_NOT_ALLOWED_TO_RECEIVE)
//	...0049  a request to pay fails once settled (NOT_ENOUGH_FUNDS); a
//	         payout is refused at initiation (400 NOT_ENOUGH_FUNDS): the
//	         merchant's account lacks the funds
//	...0129  never settles, no callback (a lost payment, for the reconciler)
//	other    succeeds
//
// A transaction settles after SettleAfter, or when POST
// /_sim/settle/{reference}[?status=SUCCESSFUL|FAILED] says so; it is then
// PUT, as its status read shows it, to the X-Callback-Url given with it
// (none without one). POST /_sim/callback/{reference}[?status=] sends it
// again, claiming status when given (a duplicate, a stale or an early
// callback); POST /_sim/fault?mode= injects faults into the API (the
// token endpoints aside).
type Simulator struct {
	APIUser         string
	APIKey          string
	CollectionKey   string
	DisbursementKey string        // none: every disbursement call is refused (401)
	SettleAfter     time.Duration // 0: only the control call settles

	mu       sync.Mutex
	tokens   map[string]simToken    // by access token
	payments map[string]*simPayment // requests to pay and transfers, by X-Reference-Id
	faults   sim.Faults
	seq      int // financial transaction ids
	calls    int
	payouts  int // transfers accepted: money sent
	issued   int // tokens given
}

// TokenLifetime is how long a simulated token is valid (expires_in).
const TokenLifetime = time.Hour

type simToken struct {
	product string
	expires time.Time
}

// simPayment is a request to pay or a transfer (kind).
type simPayment struct {
	kind                         string // "requesttopay" or "transfer"
	amount, currency, externalID string
	party                        party
	payerMessage, payeeNote      string
	status                       string // PENDING, SUCCESSFUL, FAILED
	financialTransactionID       string
	reason                       string
	callbackURL                  string
}

// object is the transaction as its status read and its callback show it.
func (p *simPayment) object() map[string]any {
	o := map[string]any{"amount": p.amount, "currency": p.currency, "externalId": p.externalID,
		"payerMessage": p.payerMessage, "payeeNote": p.payeeNote, "status": p.status}
	if p.kind == "transfer" {
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

// Calls counts the API requests the simulator answered, token requests
// included (control calls aside).
func (s *Simulator) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Payouts counts the transfers the simulator accepted (one per
// X-Reference-Id): each is money sent.
func (s *Simulator) Payouts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payouts
}

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
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		sim.ServeSimControl(w, r, &s.faults, s.settle, s.resend)
		return
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rest = "/" + rest
	key := s.CollectionKey
	switch name {
	case "collection":
	case "disbursement":
		key = s.DisbursementKey
	default:
		gatewayRefusal(w, http.StatusNotFound, "Resource not found")
		return
	}
	if k := r.Header.Get("Ocp-Apim-Subscription-Key"); key == "" || k != key {
		gatewayRefusal(w, http.StatusUnauthorized, "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.")
		return
	}
	if rest == "/token/" && r.Method == http.MethodPost {
		s.issueToken(w, r, name)
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	if !s.authorized(r, name) {
		gatewayRefusal(w, http.StatusUnauthorized, "Unauthorized. Access token is missing or invalid.")
		return
	}
	if env := r.Header.Get("X-Target-Environment"); !slices.Contains(Environments, env) {
		refuse(w, http.StatusForbidden, "NOT_ALLOWED_TARGET_ENVIRONMENT", "Access to target environment "+strconv.Quote(env)+" is forbidden.")
		return
	}
	kind, path := "requesttopay", "/v1_0/requesttopay"
	if name == "disbursement" {
		kind, path = "transfer", "/v1_0/transfer"
	}
	switch {
	case r.Method == http.MethodPost && rest == path:
		s.initiate(w, r, kind)
	case r.Method == http.MethodGet && strings.HasPrefix(rest, path+"/"):
		s.read(w, kind, strings.TrimPrefix(rest, path+"/"))
	default:
		gatewayRefusal(w, http.StatusNotFound, "Resource not found")
	}
}

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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.payments == nil {
		s.payments = map[string]*simPayment{}
	}
	switch {
	case s.payments[ref] != nil:
		refuse(w, http.StatusConflict, "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.")
		return
	case refused:
		refuse(w, http.StatusBadRequest, who+"_NOT_FOUND", strings.ToLower(who[:1])+strings.ToLower(who[1:])+" does not exist.")
		return
	case kind == "transfer" && sim.LowBalance(p.PartyID):
		refuse(w, http.StatusBadRequest, notEnoughFunds, "The payer does not have enough funds.")
		return
	}
	s.payments[ref] = &simPayment{kind: kind, amount: req.Amount, currency: req.Currency, externalID: req.ExternalID, party: *p,
		payerMessage: req.PayerMessage, payeeNote: req.PayeeNote, status: "PENDING", callbackURL: callback}
	if kind == "transfer" {
		s.payouts++
	}
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(ref, "") })
	}
	w.WriteHeader(http.StatusAccepted)
}

func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// read is GET /collection/v1_0/requesttopay/{ref} or
// /disbursement/v1_0/transfer/{ref} (kind).
func (s *Simulator) read(w http.ResponseWriter, kind, ref string) {
	s.mu.Lock()
	var obj map[string]any
	if p := s.payments[ref]; p != nil && p.kind == kind {
		obj = p.object()
	}
	s.mu.Unlock()
	if obj == nil {
		refuse(w, http.StatusNotFound, notFound, "Requested resource was not found.")
		return
	}
	sim.Reply(w, http.StatusOK, obj)
}

// settle ends a pending transaction as status says (SUCCESSFUL, FAILED)
// or as its number asks, and sends its callback. It reports whether the
// transaction exists.
func (s *Simulator) settle(ref, status string) bool {
	s.mu.Lock()
	p := s.payments[ref]
	if p == nil {
		s.mu.Unlock()
		return false
	}
	status = strings.ToUpper(status)
	_, fails, stuck := sim.Outcome(p.party.PartyID)
	if p.status != "PENDING" || status == "" && stuck {
		s.mu.Unlock()
		return true
	}
	switch {
	case status == "FAILED" || status == "" && fails:
		p.status, p.reason = "FAILED", "APPROVAL_REJECTED"
		if p.kind == "transfer" {
			p.reason = "PAYEE_NOT_ALLOWED_TO_RECEIVE"
		} else if status == "" && sim.LowBalance(p.party.PartyID) {
			p.reason = notEnoughFunds
		}
	default:
		s.seq++
		p.status, p.financialTransactionID = "SUCCESSFUL", strconv.Itoa(400000000+s.seq)
	}
	body, _ := json.Marshal(p.object())
	callback := p.callbackURL
	s.mu.Unlock()
	put(callback, body)
	return true
}

// resend sends a transaction's callback again, claiming status when given.
func (s *Simulator) resend(ref, status string) bool {
	return sim.ResendCallback(&s.mu, s.payments, ref, status, func(p *simPayment, status string) {
		s.mu.Lock()
		o := p.object()
		if status != "" {
			o["status"] = strings.ToUpper(status)
		}
		body, _ := json.Marshal(o)
		callback := p.callbackURL
		s.mu.Unlock()
		put(callback, body)
	})
}

// put sends a callback as MTN does: a PUT of the transaction's JSON to the
// X-Callback-Url, once, giving up after 5 seconds.
func put(callback string, body []byte) {
	if callback == "" {
		return
	}
	req, err := http.NewRequest(http.MethodPut, callback, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req); err == nil {
		res.Body.Close()
	}
}
