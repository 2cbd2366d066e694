package cinetpay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// V1Simulator stands in for CinetPay's API v1 (v1.go): POST
// /v1/oauth/login with the api_key and api_password (code 200 and an
// access_token living TokenLife of Now, 401 otherwise), POST /v1/payment
// with the token (401 without a valid one; 400 for a missing field or a
// merchant_transaction_id already used) answering payment_token and
// payment_url, GET /v1/payment/{merchant_transaction_id} (404 when
// unknown) with the statuses of CinetPay's SDKs: INITIATED (2001) until
// the customer pays, PENDING (2002) while the operator works, then
// SUCCESS (100), FAILED (2010), INSUFFICIENT_BALANCE (2005) or EXPIRED
// (2003). The page /_sim/pay/{id} pays or declines and sends the customer
// to success_url or failed_url; outcomes follow the client's number
// (sim.Outcome); settlement after SettleAfter or on POST
// /_sim/settle/{id}[?status=FAILED|EXPIRED|PENDING]; each change is
// notified to notify_url (JSON {merchant_transaction_id,
// transaction_id, status}: the v1 notification's shape is not
// documented); POST /_sim/callback/{id} sends it again; /_sim/fault
// injects faults.
type V1Simulator struct {
	APIKey, APIPassword string
	SettleAfter         time.Duration
	TokenLife           time.Duration    // 24 hours when 0
	Now                 func() time.Time // the tokens' clock; time.Now when nil

	mu       sync.Mutex
	payments map[string]*v1SimPayment
	tokens   map[string]time.Time // when each token expires
	nextID   int
	logins   int
	faults   sim.Faults
}

type v1SimPayment struct {
	id, transactionID, token string
	phone                    string
	successURL, failedURL    string
	notifyURL                string
	status                   string // INITIATED, PENDING, SUCCESS, FAILED, INSUFFICIENT_BALANCE, EXPIRED
}

// v1SimCodes are the statuses' codes (cinetpay-seamless src/checkout.ts).
var v1SimCodes = map[string]int{"SUCCESS": 100, "INITIATED": 2001, "PENDING": 2002, "EXPIRED": 2003, "INSUFFICIENT_BALANCE": 2005, "FAILED": 2010}

// Logins counts the tokens the simulator gave.
func (s *V1Simulator) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

func (s *V1Simulator) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *V1Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		sim.Page{Settle: s.settle, Declined: "FAILED", Return: s.returnTo}.Serve(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/_sim/"):
		sim.ServeSimControl(w, r, &s.faults, s.settle, func(id, status string) bool {
			return sim.ResendCallback(&s.mu, s.payments, id, status, s.notify)
		})
		return
	}
	if s.faults.Apply(w, r) {
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/oauth/login":
		s.login(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/payment":
		if s.authorized(w, r) {
			s.create(w, r)
		}
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/payment/"):
		if s.authorized(w, r) {
			s.check(w, strings.TrimPrefix(r.URL.Path, "/v1/payment/"))
		}
	default:
		http.NotFound(w, r)
	}
}

func (s *V1Simulator) login(w http.ResponseWriter, r *http.Request) {
	var in v1Login
	if json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in) != nil || s.APIKey == "" ||
		in.APIKey != s.APIKey || in.APIPassword != s.APIPassword {
		sim.Reply(w, http.StatusUnauthorized, map[string]any{"code": 401, "status": "UNAUTHORIZED", "description": "Invalid api_key or api_password"})
		return
	}
	life := s.TokenLife
	if life == 0 {
		life = 24 * time.Hour
	}
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]time.Time{}
	}
	s.logins++
	token := fmt.Sprintf("simjwt%08d", s.logins)
	s.tokens[token] = s.now().Add(life)
	s.mu.Unlock()
	sim.Reply(w, http.StatusOK, map[string]any{"code": 200, "status": "OK", "access_token": token, "token_type": "Bearer",
		"expires_in": int64(life / time.Second)})
}

func (s *V1Simulator) authorized(w http.ResponseWriter, r *http.Request) bool {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	until, ok := s.tokens[token]
	ok = ok && s.now().Before(until)
	s.mu.Unlock()
	if !ok {
		sim.Reply(w, http.StatusUnauthorized, map[string]any{"code": 401, "status": "UNAUTHORIZED", "description": "Invalid or expired token"})
	}
	return ok
}

func (s *V1Simulator) create(w http.ResponseWriter, r *http.Request) {
	var in v1PaymentRequest
	bad := func(why string) {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"code": 400, "status": "BAD_REQUEST", "description": why})
	}
	if json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in) != nil {
		bad("The body is not JSON")
		return
	}
	switch {
	case in.MerchantTransactionID == "" || in.Currency == "" || in.Designation == "" || in.NotifyURL == "" ||
		in.SuccessURL == "" || in.FailedURL == "" || in.Channel == "":
		bad("A required field is missing")
		return
	case in.Amount <= 0:
		bad("The amount is invalid")
		return
	}
	s.mu.Lock()
	if s.payments == nil {
		s.payments = map[string]*v1SimPayment{}
	}
	if s.payments[in.MerchantTransactionID] != nil {
		s.mu.Unlock()
		bad("merchant_transaction_id already used")
		return
	}
	s.nextID++
	p := &v1SimPayment{id: in.MerchantTransactionID, transactionID: fmt.Sprintf("%032x", s.nextID), token: fmt.Sprintf("simpt%010d", s.nextID),
		phone: in.ClientPhoneNumber, successURL: in.SuccessURL, failedURL: in.FailedURL, notifyURL: in.NotifyURL, status: "INITIATED"}
	s.payments[p.id] = p
	s.mu.Unlock()
	if s.SettleAfter > 0 {
		time.AfterFunc(s.SettleAfter, func() { s.settle(p.id, "") })
	}
	sim.Reply(w, http.StatusOK, map[string]any{"code": 200, "status": "OK", "payment_token": p.token,
		"payment_url": "http://" + r.Host + "/_sim/pay/" + url.PathEscape(p.id)})
}

func (s *V1Simulator) check(w http.ResponseWriter, id string) {
	id, _ = url.PathUnescape(id)
	s.mu.Lock()
	p := s.payments[id]
	var out map[string]any
	if p != nil {
		out = map[string]any{"code": v1SimCodes[p.status], "status": p.status, "merchant_transaction_id": p.id, "transaction_id": p.transactionID}
	}
	s.mu.Unlock()
	if out == nil {
		sim.Reply(w, http.StatusNotFound, map[string]any{"code": 404, "status": "NOT_FOUND", "description": "No payment with this merchant_transaction_id"})
		return
	}
	sim.Reply(w, http.StatusOK, out)
}

func (s *V1Simulator) returnTo(id string) (string, url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.payments[id]
	switch {
	case p == nil:
		return "", nil
	case p.status == "SUCCESS" || p.status == "INITIATED" || p.status == "PENDING":
		return p.successURL, nil
	}
	return p.failedURL, nil
}

// settle moves a waiting payment on: as the number asks, or as status
// (FAILED, EXPIRED, PENDING) says. It reports whether the payment exists.
func (s *V1Simulator) settle(id, status string) bool {
	s.mu.Lock()
	p := s.payments[id]
	if p == nil {
		s.mu.Unlock()
		return false
	}
	_, fails, stuck := sim.Outcome(p.phone)
	if p.status != "INITIATED" && p.status != "PENDING" {
		s.mu.Unlock()
		return true
	}
	switch {
	case status == "PENDING" || status == "" && stuck:
		p.status = "PENDING"
	case status == "FAILED" || status == "EXPIRED":
		p.status = status
	case status == "" && fails && sim.LowBalance(p.phone):
		p.status = "INSUFFICIENT_BALANCE"
	case status == "" && fails:
		p.status = "FAILED"
	default:
		p.status = "SUCCESS"
	}
	s.mu.Unlock()
	s.notify(p, "")
	return true
}

// notify posts the payment's state to its notify_url (claiming status
// when given).
func (s *V1Simulator) notify(p *v1SimPayment, status string) {
	s.mu.Lock()
	body := map[string]any{"merchant_transaction_id": p.id, "transaction_id": p.transactionID, "status": p.status}
	s.mu.Unlock()
	if status != "" {
		body["status"] = status
	}
	b, _ := json.Marshal(body)
	sim.PostCallback(p.notifyURL, b, http.Header{"Content-Type": {"application/json"}})
}
