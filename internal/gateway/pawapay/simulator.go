package pawapay

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/sim"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// Simulator stands in for pawaPay's Merchant API v2 (deposits, payouts,
// refunds, active configuration) in tests and on a developer's machine (cauri
// simulate pawapay). It accepts and refuses as pawaPay's docs say: bearer
// auth; input checks (HTTP 400, failureCode INVALID_INPUT,
// MISSING_PARAMETER, INVALID_PARAMETER); idempotent depositId and payoutId
// (DUPLICATE_IGNORED); rejections with HTTP 200 and status REJECTED
// (INVALID_PROVIDER, INVALID_CURRENCY, INVALID_PHONE_NUMBER,
// INVALID_AMOUNT for decimals the provider does not take,
// AMOUNT_OUT_OF_BOUNDS outside its limits); the configuration it serves at
// GET /v2/active-conf is the one it enforces.
//
// Authorisation flows: ORANGE_BFA deposits need a preAuthorisationCode
// (missing: HTTP 400 MISSING_PARAMETER; not 4 to 10 digits: 400
// INVALID_PARAMETER; "000000": accepted, then FAILED PAYMENT_NOT_APPROVED).
// Wave deposits (WAVE_SEN, WAVE_CIV) are answered ACCEPTED with nextStep
// GET_AUTH_URL; their status shows PROCESSING with nextStep
// REDIRECT_TO_AUTH_URL and an authorizationUrl (after AuthURLDelay),
// which is a page of the simulator's (GET /_sim/pay/{id}) where the
// customer pays or declines and is sent to successfulUrl or failedUrl.
// Other deposits and payouts show ACCEPTED, then PROCESSING once read.
//
// The customer's number decides the outcome. The numbers every simulator
// shares come first:
//
//	...0039  refused at initiation (INVALID_PHONE_NUMBER)
//	...0029  fails once settled (PAYER_NOT_FOUND, RECIPIENT_NOT_FOUND)
//	...0049  a deposit fails once settled (INSUFFICIENT_BALANCE); a payout
//	         is refused at initiation (PAWAPAY_WALLET_OUT_OF_FUNDS)
//	...0129  never settles, no callback (a lost payment, for the reconciler)
//
// then pawaPay's sandbox test numbers, by their last three digits
// (docs.pawapay.io/v2/docs/test_numbers): a deposit from ...019 fails
// PAYER_LIMIT_REACHED, ...029 PAYER_NOT_FOUND, ...039 PAYMENT_NOT_APPROVED,
// ...049 INSUFFICIENT_BALANCE, ...069 UNSPECIFIED_FAILURE; a payout to
// ...089 fails RECIPIENT_NOT_FOUND, ...119 UNSPECIFIED_FAILURE; ...129
// stays PROCESSING with no callback; any other number completes.
//
// A payment settles after SettleAfter, or when POST /_sim/settle/{id}
// says so: with ?status=COMPLETED or FAILED it ends so, with ?status=
// ENQUEUED, PROCESSING or IN_RECONCILIATION it only moves there (no
// callback, as pawaPay calls back on final statuses). Final payments are
// POSTed to CallbackURL. POST /_sim/fault?mode=slow|500|500-initiate|
// malformed|none injects faults into the API (500-initiate: new payments
// fail and are not recorded); POST /_sim/callback/{id} sends a payment's
// callback again (a duplicate), or, with ?status=, one claiming that
// status whatever the payment's (a stale, early or out-of-order callback).
type Simulator struct {
	Token       string
	CallbackURL string
	SettleAfter time.Duration // 0: only the control call settles
	// AuthURLDelay is how long a Wave deposit waits for its
	// authorizationUrl (its status says nextStep GET_AUTH_URL meanwhile);
	// 0: at once.
	AuthURLDelay time.Duration
	// AuthURLCallback sends the callback pawaPay sends when a Wave
	// deposit's authorizationUrl is ready (status PROCESSING). Off unless
	// set, so that tests counting callbacks see only final ones.
	AuthURLCallback bool

	// Book holds the deposits, payouts and refunds, by their id.
	sim.Book[simPayment]
	once      sync.Once
	confCalls atomic.Int64
	refunds   sync.Mutex // one refund initiation at a time: the over-refund check sees the others
}

// simPayment is pawaPay's own of a deposit, a payout or a refund.
type simPayment struct {
	kind                         string // "deposit", "payout" or "refund"
	depositID                    string // the refunded deposit, for a refund
	provider                     string
	amount, currency, country    string
	message, code                string
	providerTransactionID        string
	failureReason                *failureReason
	redirect                     bool // authorised on the provider's page
	authURL, successURL, failURL string
}

// ready sets the book to pawaPay's lifecycle (ACCEPTED, then ENQUEUED,
// PROCESSING or IN_RECONCILIATION, ending COMPLETED or FAILED with a
// callback) on the first request.
func (s *Simulator) ready() {
	s.once.Do(func() {
		s.Book.Lifecycle = sim.Lifecycle[simPayment]{
			Pending: "ACCEPTED", Succeeded: statusCompleted, Failed: statusFailed,
			Steps: []string{"ENQUEUED", "PROCESSING", "IN_RECONCILIATION"}, Stuck: "PROCESSING",
			Outcome: simOutcome, End: simEnd,
			Notify: func(m *sim.Movement[simPayment], claim string) sim.Note {
				o := object(m)
				if claim != "" {
					o["status"] = claim
				}
				body, _ := json.Marshal(o)
				return sim.Note{URL: s.CallbackURL, Body: body}
			},
		}
		s.Book.SettleAfter = s.SettleAfter
	})
}

// object is the payment as pawaPay shows it (status reads, callbacks).
func object(m *sim.Movement[simPayment]) map[string]any {
	p := &m.Data
	party := "payer"
	if m.Payout || p.kind == "refund" { // a refund goes to the deposit's payer
		party = "recipient"
	}
	o := map[string]any{p.kind + "Id": m.ID, "status": m.Status, "amount": p.amount, "currency": p.currency, "country": p.country,
		party:     payer{Type: "MMO", AccountDetails: accountDetails{PhoneNumber: m.Phone, Provider: p.provider}},
		"created": m.Created.UTC().Format(time.RFC3339)}
	if p.message != "" {
		o["customerMessage"] = p.message
	}
	if p.providerTransactionID != "" {
		o["providerTransactionId"] = p.providerTransactionID
	}
	if p.failureReason != nil {
		o["failureReason"] = p.failureReason
	}
	if p.redirect {
		if p.successURL != "" {
			o["successfulUrl"], o["failedUrl"] = p.successURL, p.failURL
		}
		switch {
		case final(m.Status):
		case p.authURL == "":
			o["nextStep"] = "GET_AUTH_URL"
		default:
			o["nextStep"], o["authorizationUrl"] = "REDIRECT_TO_AUTH_URL", p.authURL
		}
	}
	return o
}

func final(status string) bool { return status == statusCompleted || status == statusFailed }

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// otpRE is a pre-authorisation code the simulator takes (pawaPay's guide
// shows a six-digit one).
var otpRE = regexp.MustCompile(`^[0-9]{4,10}$`)

// simProvider is a provider as the simulator configures it.
type simProvider struct {
	code, country string // country: ISO 3166-1 alpha-3
	prefix        string // the country's calling code
	currencies    []string
	authType      string
}

// simProviders are pawaPay's providers of providers.json: country and
// currency from the catalog (pawaPay's codes end with the country's
// alpha-3; DRC also takes USD, as pawaPay's deposits guide says), the
// authorisation types of docs.pawapay.io/v2/docs/deposits ("Other payment
// authorisation flows"). REDIRECT_AUTH is the simulator's name for Wave's
// type: pawaPay's own pages seen do not spell it.
var simProviders = func() map[string]simProvider {
	p, _ := gateway.Lookup("pawapay")
	out := map[string]simProvider{}
	for iso2, ops := range p.Operators {
		c, _ := catalog.LookupCountry(iso2)
		for _, code := range ops {
			sp := simProvider{code: code, country: code[len(code)-3:], prefix: fmt.Sprint(c.CallingCode),
				currencies: []string{string(c.Currency)}, authType: authProvider}
			if iso2 == "CD" {
				sp.currencies = append(sp.currencies, "USD")
			}
			switch {
			case p.Preauth[code] != nil:
				sp.authType = authPreauth
			case redirectProviders[code]:
				sp.authType = "REDIRECT_AUTH"
			}
			out[code] = sp
		}
	}
	return out
}()

// simOp is the configuration the simulator serves and enforces for an
// operation of a provider in a currency: whole amounts in currencies
// without minor units (pawaPay's providers page: "Not supported" for
// XAF), two decimals otherwise; the limits of the deposits guide's example
// (100 to 2,000,000) in those currencies, 1 to 1,000,000 otherwise (the
// simulator's own).
func simOp(sp simProvider, currency, op string) map[string]any {
	o := map[string]any{"decimalsInAmount": "TWO_PLACES", "minAmount": "1", "maxAmount": "1000000", "status": "OPERATIONAL"}
	if cauri.Currency(currency).Exponent() == 0 {
		o["decimalsInAmount"], o["minAmount"], o["maxAmount"] = "NONE", "100", "2000000"
	}
	if op == opDeposit {
		o["authType"] = sp.authType
		if sp.authType == authProvider {
			o["pinPrompt"], o["pinPromptRevivable"] = "AUTOMATIC", false
		}
	}
	return o
}

// ConfCalls counts the GET /v2/active-conf requests it answered.
func (s *Simulator) ConfCalls() int { return int(s.confCalls.Load()) }

func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.ready()
	if strings.HasPrefix(r.URL.Path, "/_sim/pay/") {
		s.page(w, r)
		return
	}
	if s.Intercept(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		code, fc := http.StatusForbidden, "AUTHENTICATION_ERROR"
		if r.Header.Get("Authorization") == "" {
			code, fc = http.StatusUnauthorized, "NO_AUTHENTICATION"
		}
		sim.Reply(w, code, map[string]any{"failureReason": &failureReason{fc, "The API token is missing or not valid"}})
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v2/active-conf":
		s.activeConf(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v2/deposits":
		s.initiate(w, r, "deposit")
	case r.Method == http.MethodPost && r.URL.Path == "/v2/payouts":
		s.initiate(w, r, "payout")
	case r.Method == http.MethodPost && r.URL.Path == "/v2/refunds":
		s.refund(w, r)
	case r.Method == http.MethodGet && (strings.HasPrefix(r.URL.Path, "/v2/deposits/") || strings.HasPrefix(r.URL.Path, "/v2/payouts/") ||
		strings.HasPrefix(r.URL.Path, "/v2/refunds/")):
		kind, id := "deposit", strings.TrimPrefix(r.URL.Path, "/v2/deposits/")
		switch {
		case strings.HasPrefix(r.URL.Path, "/v2/payouts/"):
			kind, id = "payout", strings.TrimPrefix(r.URL.Path, "/v2/payouts/")
		case strings.HasPrefix(r.URL.Path, "/v2/refunds/"):
			kind, id = "refund", strings.TrimPrefix(r.URL.Path, "/v2/refunds/")
		}
		var out any = map[string]any{"status": "NOT_FOUND"}
		s.Update(id, func(m *sim.Movement[simPayment]) {
			if m.Data.kind != kind {
				return
			}
			out = map[string]any{"status": "FOUND", "data": object(m)}
			// Once read, a payment the provider works on is PROCESSING:
			// the first read shows ACCEPTED, as pawaPay's own would.
			if m.Status == "ACCEPTED" && !m.Data.redirect {
				m.Status = "PROCESSING"
			}
		})
		sim.Reply(w, http.StatusOK, out)
	default:
		sim.Reply(w, http.StatusNotFound, map[string]any{"failureReason": &failureReason{"INVALID_INPUT", "No such endpoint"}})
	}
}

// activeConf is GET /v2/active-conf[?country=&operationType=], in the
// shape of pawaPay's guides (operationTypes keyed by type).
func (s *Simulator) activeConf(w http.ResponseWriter, r *http.Request) {
	s.confCalls.Add(1)
	wantCountry, wantOp := r.URL.Query().Get("country"), r.URL.Query().Get("operationType")
	byCountry := map[string][]any{}
	for _, sp := range simProviders {
		if wantCountry != "" && sp.country != wantCountry {
			continue
		}
		var currencies []any
		for _, cur := range sp.currencies {
			ops := map[string]any{}
			for _, op := range []string{opDeposit, opPayout} {
				if wantOp == "" || wantOp == op {
					ops[op] = simOp(sp, cur, op)
				}
			}
			currencies = append(currencies, map[string]any{"currency": cur, "operationTypes": ops})
		}
		byCountry[sp.country] = append(byCountry[sp.country], map[string]any{"provider": sp.code, "currencies": currencies})
	}
	var countries []any
	for _, c := range sortedKeys(byCountry) {
		countries = append(countries, map[string]any{"country": c, "providers": byCountry[c]})
	}
	sim.Reply(w, http.StatusOK, map[string]any{"companyName": "Cauri simulator", "countries": countries})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// initiate is POST /v2/deposits or /v2/payouts (kind).
func (s *Simulator) initiate(w http.ResponseWriter, r *http.Request, kind string) {
	var req struct {
		DepositID            string `json:"depositId"`
		PayoutID             string `json:"payoutId"`
		Amount               string `json:"amount"`
		Currency             string `json:"currency"`
		Payer                *payer `json:"payer"`
		Recipient            *payer `json:"recipient"`
		PreAuthorisationCode string `json:"preAuthorisationCode"`
		CustomerMessage      string `json:"customerMessage"`
		SuccessfulURL        string `json:"successfulUrl"`
		FailedURL            string `json:"failedUrl"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"failureReason": &failureReason{"INVALID_INPUT", "Unable to parse the request payload"}})
		return
	}
	id, party := req.DepositID, req.Payer
	if kind == "payout" {
		id, party = req.PayoutID, req.Recipient
	}
	reject := func(code int, fc, msg string) {
		sim.Reply(w, code, map[string]any{kind + "Id": id, "status": "REJECTED", "failureReason": &failureReason{fc, msg}})
	}
	minor, amountErr := cauri.ParseAmount("amount", req.Amount, cauri.Currency("USD")) // two places at most
	switch {
	case !uuidRE.MatchString(id):
		reject(http.StatusBadRequest, "INVALID_PARAMETER", kind+"Id must be a UUIDv4")
		return
	case party == nil:
		reject(http.StatusBadRequest, "MISSING_PARAMETER", "The payer or recipient is missing")
		return
	case party.Type != "MMO" || len(req.Currency) != 3:
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "The payer or recipient type must be MMO and currency an ISO 4217 code")
		return
	case amountErr != nil || strings.ContainsAny(req.Amount, "eE+- ") || len(req.Amount) > 23:
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "The amount must be a positive number with at most two decimal places")
		return
	}
	phone, provider := party.AccountDetails.PhoneNumber, party.AccountDetails.Provider
	sp, known := simProviders[provider]
	if kind == "deposit" && known && sp.authType == authPreauth {
		switch code := req.PreAuthorisationCode; {
		case code == "":
			reject(http.StatusBadRequest, "MISSING_PARAMETER", "preAuthorisationCode is mandatory for provider '"+provider+"'")
			return
		case !otpRE.MatchString(code):
			reject(http.StatusBadRequest, "INVALID_PARAMETER", "preAuthorisationCode is not valid for provider '"+provider+"'")
			return
		}
	}
	var op map[string]any
	if known {
		for _, c := range sp.currencies {
			if c == req.Currency {
				op = simOp(sp, c, strings.ToUpper(kind))
			}
		}
	}
	if old, ok := s.View(id); ok {
		sim.Reply(w, http.StatusOK, map[string]any{kind + "Id": old.ID, "status": "DUPLICATE_IGNORED"})
		return
	}
	switch {
	case !known:
		reject(http.StatusOK, "INVALID_PROVIDER", "The provider '"+provider+"' is not valid for the request")
		return
	case op == nil:
		reject(http.StatusOK, "INVALID_CURRENCY", fmt.Sprintf("The currency '%s' is not supported with provider '%s'.", req.Currency, provider))
		return
	case len(phone) < 9 || len(phone) > 15 || strings.Trim(phone, "0123456789") != "" || !strings.HasPrefix(phone, sp.prefix) || refused(phone):
		reject(http.StatusOK, "INVALID_PHONE_NUMBER", "The phone number is not valid for the provider '"+provider+"'")
		return
	case op["decimalsInAmount"] == "NONE" && strings.Contains(strings.TrimRight(strings.TrimRight(req.Amount, "0"), "."), "."):
		reject(http.StatusOK, "INVALID_AMOUNT", fmt.Sprintf("The provider %s only supports up to '0' decimal places in amount.", provider))
		return
	}
	lo, _ := cauri.ParseAmount("min", op["minAmount"].(string), "USD")
	hi, _ := cauri.ParseAmount("max", op["maxAmount"].(string), "USD")
	if minor < lo || minor > hi {
		reject(http.StatusOK, "AMOUNT_OUT_OF_BOUNDS", fmt.Sprintf("The amount needs to be more than '%s' and less than '%s' for provider '%s'.", op["minAmount"], op["maxAmount"], provider))
		return
	}
	if kind == "payout" && sim.LowBalance(phone) {
		reject(http.StatusOK, "PAWAPAY_WALLET_OUT_OF_FUNDS", "The balance of the wallet does not have the funds for this payout")
		return
	}
	m := &sim.Movement[simPayment]{ID: id, Payout: kind == "payout", Phone: phone, Data: simPayment{kind: kind, provider: provider,
		amount: req.Amount, currency: req.Currency, country: sp.country, message: req.CustomerMessage, code: req.PreAuthorisationCode}}
	authURL := "http://" + r.Host + "/_sim/pay/" + id
	redirect := kind == "deposit" && sp.authType == "REDIRECT_AUTH"
	if redirect {
		m.Data.redirect, m.Data.successURL, m.Data.failURL = true, req.SuccessfulURL, req.FailedURL
		if s.AuthURLDelay == 0 {
			m.Status, m.Data.authURL = "PROCESSING", authURL
		}
	}
	if old, added := s.Add(m); !added { // a request with the same id in between
		sim.Reply(w, http.StatusOK, map[string]any{kind + "Id": old.ID, "status": "DUPLICATE_IGNORED"})
		return
	}
	answer := map[string]any{kind + "Id": id, "status": "ACCEPTED", "created": m.Created.UTC().Format(time.RFC3339)}
	if kind == "deposit" {
		answer["nextStep"] = "FINAL_STATUS"
	}
	if redirect {
		answer["nextStep"] = "GET_AUTH_URL"
		switch {
		case s.AuthURLDelay > 0:
			time.AfterFunc(s.AuthURLDelay, func() { s.authURLReady(id, authURL) })
		case s.AuthURLCallback:
			go s.Notify(id, "")
		}
	}
	sim.Reply(w, http.StatusOK, answer)
}

// authURLReady makes a Wave deposit's authorizationUrl available.
func (s *Simulator) authURLReady(id, authURL string) {
	ready := false
	s.Update(id, func(m *sim.Movement[simPayment]) {
		if ready = !final(m.Status); ready {
			m.Status, m.Data.authURL = "PROCESSING", authURL
		}
	})
	if ready && s.AuthURLCallback {
		s.Notify(id, "")
	}
}

// simOutcome is how a payment ends as its number (or a deposit's
// pre-authorisation code) asks: the failure it gets, or stuck.
func simOutcome(m *sim.Movement[simPayment]) (string, bool) {
	f, stuck := simFailure(m)
	if f != nil {
		m.Data.failureReason = f
		return statusFailed, false
	}
	return "", stuck
}

// simEnd completes a payment as it ends: a failure has its reason, a
// success the provider's transaction id.
func simEnd(m *sim.Movement[simPayment]) {
	switch {
	case m.Status == statusFailed && m.Data.failureReason == nil:
		m.Data.failureReason = &failureReason{"PAYMENT_NOT_APPROVED", "The payer did not approve the payment"}
		switch {
		case m.Data.kind == "refund": // the Postman collection's failed refund
			m.Data.failureReason = &failureReason{"RECIPIENT_NOT_FOUND", "The recipient's wallet was not found"}
		case m.Payout:
			m.Data.failureReason = &failureReason{"UNSPECIFIED_FAILURE", "The provider gave no reason"}
		}
	case m.Status == statusCompleted:
		b := make([]byte, 6)
		rand.Read(b)
		m.Data.providerTransactionID = "SIM" + strings.ToUpper(hex.EncodeToString(b))
	}
}

// simFailure is the failure a number (or a deposit's pre-authorisation
// code) asks for once settled, nil for none; stuck: it never settles.
func simFailure(m *sim.Movement[simPayment]) (f *failureReason, stuck bool) {
	phone := m.Phone
	if _, fails, stuck := sim.Outcome(phone); stuck {
		return nil, true
	} else if fails {
		switch {
		case m.Payout:
			return &failureReason{"RECIPIENT_NOT_FOUND", "The recipient's wallet was not found"}, false
		case sim.LowBalance(phone):
			return &failureReason{"INSUFFICIENT_BALANCE", "The payer does not have enough funds"}, false
		}
		return &failureReason{"PAYER_NOT_FOUND", "The payer's wallet was not found"}, false
	}
	if m.Data.code == "000000" {
		return &failureReason{"PAYMENT_NOT_APPROVED", "The pre-authorisation code was not accepted"}, false
	}
	suffix := phone[max(0, len(phone)-3):]
	if suffix == "129" {
		return nil, true
	}
	byDeposit := map[string]failureReason{
		"019": {"PAYER_LIMIT_REACHED", "The payer has reached a limit of the wallet"},
		"029": {"PAYER_NOT_FOUND", "The payer's wallet was not found"},
		"039": {"PAYMENT_NOT_APPROVED", "The payer did not approve the payment"},
		"049": {"INSUFFICIENT_BALANCE", "The payer does not have enough funds"},
		"069": {"UNSPECIFIED_FAILURE", "The provider gave no reason"},
	}
	byPayout := map[string]failureReason{
		"089": {"RECIPIENT_NOT_FOUND", "The recipient's wallet was not found"},
		"119": {"UNSPECIFIED_FAILURE", "The provider gave no reason"},
	}
	table := byDeposit
	if m.Payout {
		table = byPayout
	}
	if r, ok := table[suffix]; ok {
		return &r, false
	}
	return nil, false
}

// page stands in for Wave's authorisation page: GET shows it, POST with
// do=pay or do=decline settles the deposit so and sends the customer to
// its successfulUrl or failedUrl.
func (s *Simulator) page(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/_sim/pay/")
	if m, ok := s.View(id); !ok || !m.Data.redirect {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method != http.MethodPost {
		fmt.Fprint(w, `<!doctype html><title>Simulated Wave page</title><form method="post">
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="decline" id="sim-decline">Decline</button></form>`)
		return
	}
	status := statusCompleted
	if r.FormValue("do") == "decline" {
		status = statusFailed
	}
	s.Settle(id, status)
	m, _ := s.View(id)
	back := m.Data.successURL
	if m.Status == statusFailed {
		back = m.Data.failURL
	}
	if back == "" {
		fmt.Fprintf(w, `<!doctype html><title>Done</title><p>%s</p>`, html.EscapeString(strings.ToLower(status)))
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

func refused(phone string) bool { r, _, _ := sim.Outcome(phone); return r }

// refund is POST /v2/refunds (API reference, initiate refund; the refunds
// guide; the Postman collection's examples, testdata/SOURCES.md): input
// checks answer 400 (INVALID_INPUT, MISSING_PARAMETER, INVALID_PARAMETER);
// a refundId seen before is DUPLICATE_IGNORED; then REJECTED with HTTP 200:
// NOT_FOUND (no such deposit), INVALID_STATE (the deposit is not
// COMPLETED), INVALID_CURRENCY (not the deposit's), INVALID_AMOUNT
// (decimals the provider does not take), AMOUNT_TOO_LARGE (more than is
// left of the deposit, counting the refunds that have not failed: the
// guide says over-refunding is REJECTED without naming the code; this one
// is from the pawaPay-authored notes SOURCES.md cites). Without amount, the
// rest of the deposit is refunded (the guide's "100 - 20 - 20 = 60").
// Accepted refunds go to the deposit's payer and complete as a payment
// does (SettleAfter, /_sim/settle/{refundId}; a failed one fails
// RECIPIENT_NOT_FOUND, the collection's example), with a callback.
func (s *Simulator) refund(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RefundID  string `json:"refundId"`
		DepositID string `json:"depositId"`
		Amount    string `json:"amount"`
		Currency  string `json:"currency"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		sim.Reply(w, http.StatusBadRequest, map[string]any{"failureReason": &failureReason{"INVALID_INPUT", "Unable to parse the request payload"}})
		return
	}
	reject := func(code int, fc, msg string) {
		sim.Reply(w, code, map[string]any{"refundId": req.RefundID, "status": "REJECTED", "failureReason": &failureReason{fc, msg}})
	}
	switch {
	case req.RefundID == "":
		reject(http.StatusBadRequest, "MISSING_PARAMETER", "Request does not include the required parameter 'refundId'")
		return
	case !uuidRE.MatchString(req.RefundID):
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "refundId must be a UUIDv4")
		return
	case req.DepositID == "":
		reject(http.StatusBadRequest, "MISSING_PARAMETER", "Request does not include the required parameter 'depositId'")
		return
	case req.Amount != "" && req.Currency == "" || req.Amount == "" && req.Currency != "":
		reject(http.StatusBadRequest, "INVALID_PARAMETER", "amount and currency go together")
		return
	}
	var minor int64
	if req.Amount != "" {
		var err error
		if minor, err = cauri.ParseAmount("amount", req.Amount, "USD"); err != nil || strings.ContainsAny(req.Amount, "eE+- ") || len(req.Amount) > 23 {
			reject(http.StatusBadRequest, "INVALID_PARAMETER", "The amount must be a positive number with at most two decimal places")
			return
		}
	}
	s.refunds.Lock()
	defer s.refunds.Unlock()
	if old, ok := s.View(req.RefundID); ok {
		sim.Reply(w, http.StatusOK, map[string]any{"refundId": old.ID, "status": "DUPLICATE_IGNORED"})
		return
	}
	dep, ok := s.View(req.DepositID)
	switch {
	case !ok || dep.Data.kind != "deposit":
		reject(http.StatusOK, "NOT_FOUND", "Deposit with ID "+req.DepositID+" not found.")
		return
	case dep.Status != statusCompleted:
		reject(http.StatusOK, "INVALID_STATE", "Deposit with ID "+req.DepositID+" has not finished processing.")
		return
	case req.Currency != "" && req.Currency != dep.Data.currency:
		reject(http.StatusOK, "INVALID_CURRENCY", fmt.Sprintf("The currency '%s' is not the deposit's (%s).", req.Currency, dep.Data.currency))
		return
	}
	paid, _ := cauri.ParseAmount("amount", dep.Data.amount, "USD")
	left := paid
	for _, o := range s.Find(func(m *sim.Movement[simPayment]) bool {
		return m.Data.kind == "refund" && m.Data.depositID == req.DepositID && m.Status != statusFailed
	}) {
		a, _ := cauri.ParseAmount("amount", o.Data.amount, "USD")
		left -= a
	}
	if req.Amount == "" {
		minor = left
	}
	sp := simProviders[dep.Data.provider]
	var op map[string]any
	for _, c := range sp.currencies {
		if c == dep.Data.currency {
			op = simOp(sp, c, opDeposit)
		}
	}
	switch {
	case op != nil && op["decimalsInAmount"] == "NONE" && minor%100 != 0:
		reject(http.StatusOK, "INVALID_AMOUNT", fmt.Sprintf("The provider %s only supports up to '0' decimal places in amount.", dep.Data.provider))
		return
	case minor <= 0 || minor > left:
		reject(http.StatusOK, "AMOUNT_TOO_LARGE", fmt.Sprintf("The refund exceeds what is left of deposit %s.", req.DepositID))
		return
	}
	m := &sim.Movement[simPayment]{ID: req.RefundID, Phone: dep.Phone, Data: simPayment{kind: "refund", depositID: req.DepositID,
		provider: dep.Data.provider, amount: cauri.FormatAmount(minor, "USD"), currency: dep.Data.currency, country: dep.Data.country}}
	if old, added := s.Add(m); !added {
		sim.Reply(w, http.StatusOK, map[string]any{"refundId": old.ID, "status": "DUPLICATE_IGNORED"})
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"refundId": req.RefundID, "status": "ACCEPTED", "created": m.Created.UTC().Format(time.RFC3339)})
}
