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
// (sim.Outcome; a stuck number waits PENDING, unnotified); settlement
// after SettleAfter or on POST /_sim/settle/{id}[?status=SUCCESS|FAILED|
// INSUFFICIENT_BALANCE|EXPIRED|PENDING]; each change is notified to
// notify_url (JSON {merchant_transaction_id, transaction_id, status}: the
// v1 notification's shape is not documented); POST /_sim/callback/{id}
// sends it again; /_sim/fault injects faults.
type V1Simulator struct {
	APIKey, APIPassword string
	SettleAfter         time.Duration
	TokenLife           time.Duration    // 24 hours when 0
	Now                 func() time.Time // the tokens' clock; time.Now when nil

	// Book holds the payments, by merchant_transaction_id.
	sim.Book[v1SimPayment]
	once sync.Once

	mu     sync.Mutex
	tokens map[string]time.Time // when each token expires
	logins int
}

// v1SimPayment is CinetPay's own of an API v1 payment.
type v1SimPayment struct {
	successURL, failedURL, notifyURL string
}

// v1SimCodes are the statuses' codes (cinetpay-seamless src/checkout.ts).
var v1SimCodes = map[string]int{"SUCCESS": 100, "INITIATED": 2001, "PENDING": 2002, "EXPIRED": 2003, "INSUFFICIENT_BALANCE": 2005, "FAILED": 2010}

// ready sets the book to the API v1's lifecycle on the first request.
func (s *V1Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[v1SimPayment]{
			Pending: "INITIATED", Steps: []string{"PENDING"}, NotifySteps: true, Stuck: "PENDING",
			Succeeded: "SUCCESS", Failed: "FAILED", Finals: []string{"INSUFFICIENT_BALANCE", "EXPIRED"},
			Outcome: func(m *sim.Movement[v1SimPayment]) (string, bool) {
				_, fails, stuck := sim.Outcome(m.Phone)
				switch {
				case fails && sim.LowBalance(m.Phone):
					return "INSUFFICIENT_BALANCE", stuck
				case fails:
					return "FAILED", stuck
				}
				return "", stuck
			},
			Notify: func(m *sim.Movement[v1SimPayment], claim string) sim.Note {
				body := map[string]any{"merchant_transaction_id": m.ID, "transaction_id": v1TransactionID(m), "status": m.Status}
				if claim != "" {
					body["status"] = claim
				}
				b, _ := json.Marshal(body)
				return sim.Note{URL: m.Data.notifyURL, Body: b}
			},
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// v1TransactionID is CinetPay's transaction_id of a payment.
func v1TransactionID(m *sim.Movement[v1SimPayment]) string { return fmt.Sprintf("%032x", m.Seq) }

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

// ServeHTTP answers the API v1, the payment page and the control calls.
func (s *V1Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	switch {
	case strings.HasPrefix(r.URL.Path, "/_sim/pay/"):
		sim.Page{Settle: func(id, status string) bool { return s.Settle(id, status) == nil }, Declined: "FAILED", Return: s.returnTo}.Serve(w, r)
		return
	}
	if s.Intercept(w, r) {
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
	m, added := s.Add(&sim.Movement[v1SimPayment]{ID: in.MerchantTransactionID, Phone: in.ClientPhoneNumber,
		Data: v1SimPayment{successURL: in.SuccessURL, failedURL: in.FailedURL, notifyURL: in.NotifyURL}})
	if !added {
		bad("merchant_transaction_id already used")
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"code": 200, "status": "OK", "payment_token": fmt.Sprintf("simpt%010d", m.Seq),
		"payment_url": "http://" + r.Host + "/_sim/pay/" + url.PathEscape(m.ID)})
}

func (s *V1Simulator) check(w http.ResponseWriter, id string) {
	id, _ = url.PathUnescape(id)
	m, ok := s.View(id)
	if !ok {
		sim.Reply(w, http.StatusNotFound, map[string]any{"code": 404, "status": "NOT_FOUND", "description": "No payment with this merchant_transaction_id"})
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"code": v1SimCodes[m.Status], "status": m.Status, "merchant_transaction_id": m.ID,
		"transaction_id": v1TransactionID(&m)})
}

func (s *V1Simulator) returnTo(id string) (string, url.Values) {
	m, ok := s.View(id)
	switch {
	case !ok:
		return "", nil
	case m.Status == "SUCCESS" || !s.Final(m.Status):
		return m.Data.successURL, nil
	}
	return m.Data.failedURL, nil
}
