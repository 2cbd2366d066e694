package orangemoney

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// ref1 is a reference as the service makes them (a UUID); orderID1 its
// order_id, and the documented fixtures' (testdata/SOURCES.md).
const (
	ref1      = "0f8fad5b-d9cb-469f-a165-70867728950e"
	orderID1  = "0f8fad5bd9cb469fa1657086772895"
	payToken1 = "v1h0r5yi7hpjd8rqkdt2guvmdcvoyhzpalvaaqvt3aqs1s3nzqtpkjnvzvlsodok"
)

var (
	webpayCall = "POST " + fmtPath(webpayPath, Sandbox)
	statusCall = "POST " + fmtPath(statusPath, Sandbox)
	tokenCall  = "POST " + tokenPath
)

func fmtPath(p, country string) string { return strings.Replace(p, "%s", country, 1) }

// collection is the documented example's collection: 1200 XOF, paid in
// the sandbox's OUV.
func collection(ref string) gateway.Collection {
	return gateway.Collection{Reference: ref, Amount: 1200, Currency: "XOF", Phone: "+2250701020304", Operator: "orange_money",
		Country: "CI", Description: "Order 42", ReturnURL: "https://pay.cauri.example/s/sess_42/return",
		NotifyURL: "https://api.cauri.example/callbacks/gw_om"}
}

func TestEncodeWebPayment_Golden(t *testing.T) {
	c := &Client{MerchantKey: "a4b7c123", MerchantName: "Boutique Awa"}
	mine, documented := gatewaytest.DocumentedFields(t, c.encodeWebPayment(collection(ref1)), "webpayment_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("web payment = %v; want exactly the documented fields", mine)
	}
	// order_id: 30 letters and digits of our reference, always the same.
	if got := OrderID(ref1); got != orderID1 || len(got) != orderIDMax {
		t.Fatalf("order_id = %q", got)
	}
	if OrderID("FAC-2024-01") != "FAC202401" || OrderID("---") != "" {
		t.Fatal("order_id of short references")
	}
	// The notif_url keeps the callback address's own query.
	col := collection(ref1)
	col.NotifyURL = "https://api.cauri.example/callbacks/gw_om?v=2"
	if wp := c.encodeWebPayment(col); wp.NotifURL != "https://api.cauri.example/callbacks/gw_om?ref="+ref1+"&v=2" {
		t.Fatalf("notif_url = %q", wp.NotifURL)
	}
	// Live: the country's currency; no merchant name, no reference field;
	// a name cut to 30 characters.
	live := &Client{Country: "SN", MerchantKey: "k"}
	wp := live.encodeWebPayment(collection(ref1))
	b, _ := json.Marshal(wp)
	if wp.Currency != "XOF" || wp.Amount != 1200 || strings.Contains(string(b), `"reference"`) {
		t.Fatalf("live web payment = %s", b)
	}
	live.MerchantName = strings.Repeat("é", 40)
	if wp := live.encodeWebPayment(collection(ref1)); len([]rune(wp.Reference)) != referenceMax {
		t.Fatalf("reference = %q", wp.Reference)
	}
}

func TestProviderRef(t *testing.T) {
	if got := providerRef(payToken1, 1200); got != payToken1+"|1200" {
		t.Fatalf("providerRef = %q", got)
	}
	for _, tc := range []struct {
		ref   string
		token string
		whole int64
		ok    bool
	}{
		{payToken1 + "|1200", payToken1, 1200, true},
		{"a|b|5", "a|b", 5, true},
		{payToken1, "", 0, false},
		{"|5", "", 0, false},
		{"tok|", "", 0, false},
		{"tok|0", "", 0, false},
		{"tok|12.5", "", 0, false},
	} {
		token, whole, ok := parseProviderRef(tc.ref)
		if token != tc.token || whole != tc.whole || ok != tc.ok {
			t.Errorf("%q = %q %d %v", tc.ref, token, whole, ok)
		}
	}
}

// newAnswers is a client facing fixed answers, its token documented.
func newAnswers(t *testing.T) (*gatewaytest.Answers, *Client) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set(tokenCall, http.StatusOK, gatewaytest.Golden(t, "token.json"))
	return srv, &Client{BaseURL: srv.URL, ClientID: "cid", ClientSecret: "csecret", MerchantKey: "a4b7c123", MerchantName: "Boutique Awa"}
}

func TestCollect_Wire(t *testing.T) {
	token, created := gatewaytest.Golden(t, "token.json"), gatewaytest.Golden(t, "webpayment_created.json")
	srv := gatewaytest.NewRecorder(t, func(r *http.Request) (int, []byte) {
		if r.URL.Path == tokenPath {
			return http.StatusOK, token
		}
		return http.StatusCreated, created
	})
	c := &Client{BaseURL: srv.URL + "/", ClientID: "cid", ClientSecret: "csecret", MerchantKey: "a4b7c123", MerchantName: "Boutique Awa"}
	var recorded string
	col := collection(ref1)
	col.Created = func(id string) error { recorded = id; return nil }
	st, err := c.Collect(context.Background(), col)
	want := gateway.Status{Outcome: gateway.Pending, ProviderRef: payToken1 + "|1200",
		RedirectURL: "https://webpayment-ow-sb.orange-money.com/payment/pay_token/" + payToken1}
	if err != nil || st != want || recorded != want.ProviderRef {
		t.Fatalf("collect = %+v, %v (recorded %q)", st, err, recorded)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want the token's and the web payment", len(reqs))
	}
	tok, wp := reqs[0], reqs[1]
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("cid:csecret"))
	if tok.Method != http.MethodPost || tok.Path != tokenPath || tok.Header.Get("Authorization") != basic ||
		tok.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || string(tok.Body) != "grant_type=client_credentials" {
		t.Fatalf("token request = %s %s %v %q", tok.Method, tok.Path, tok.Header, tok.Body)
	}
	if wp.Method != http.MethodPost || wp.Path != "/orange-money-webpay/dev/v1/webpayment" ||
		wp.Header.Get("Authorization") != "Bearer "+gatewaytest.DocumentedToken(t) || wp.Header.Get("Content-Type") != "application/json" ||
		wp.Header.Get("Accept") != "application/json" {
		t.Fatalf("web payment = %s %s %v", wp.Method, wp.Path, wp.Header)
	}
	var sent map[string]any
	if err := json.Unmarshal(wp.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if mine, documented := gatewaytest.DocumentedFields(t, sent, "webpayment_request.json"); len(mine) != len(documented) {
		t.Fatalf("sent %v", mine)
	}
	if !strings.Contains(string(wp.Body), `"amount":1200`) {
		t.Fatalf("amount not a JSON integer: %s", wp.Body)
	}

	// A token endpoint of its own (TokenURL), a live country's path.
	tokens := gatewaytest.NewRecorder(t, func(*http.Request) (int, []byte) { return http.StatusOK, token })
	live := &Client{BaseURL: srv.URL, TokenURL: tokens.URL + "/oauth/v3/token", Country: "CI", ClientID: "cid", ClientSecret: "csecret", MerchantKey: "k"}
	if st, err := live.Collect(context.Background(), collection(ref1)); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("live collect = %+v, %v", st, err)
	}
	if r := srv.Requests(); r[len(r)-1].Path != "/orange-money-webpay/ci/v1/webpayment" || len(tokens.Requests()) != 1 || len(r) != 3 {
		t.Fatalf("live calls: %s (%d token requests)", r[len(r)-1].Path, len(tokens.Requests()))
	}
}

// TestStatusRequest_Golden: the status read sends the documented request,
// field for field and no other (the documented answers are
// TestConformance's).
func TestStatusRequest_Golden(t *testing.T) {
	srv, c := newAnswers(t)
	srv.Set(statusCall, http.StatusOK, gatewaytest.Golden(t, "transactionstatus_pending.json"))
	if st, err := c.CollectionStatus(context.Background(), gateway.Ref{Reference: ref1, ProviderRef: payToken1 + "|1200"}); err != nil ||
		st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v", st, err)
	}
	var sent map[string]any
	json.Unmarshal(srv.Body(statusCall), &sent)
	if mine, documented := gatewaytest.DocumentedFields(t, sent, "transactionstatus_request.json"); len(mine) != len(documented) {
		t.Fatalf("status read sent %v", mine)
	}
}

// fakeOrange gives numbered tokens (expires_in 3600) and accepts, on the
// API, only those it has not revoked; it refuses others with Orange's 401.
type fakeOrange struct {
	mu              sync.Mutex
	issued          int
	validFrom       int
	refuseAll       bool
	tokens, answers int
}

func (f *fakeOrange) serve(r *http.Request) (int, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == tokenPath {
		f.issued++
		f.tokens++
		b, _ := json.Marshal(map[string]any{"token_type": "Bearer", "access_token": "tok-" + strconv.Itoa(f.issued), "expires_in": 3600})
		return http.StatusOK, b
	}
	f.answers++
	n, _ := strconv.Atoi(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tok-"))
	if f.refuseAll || n < f.validFrom {
		return http.StatusUnauthorized, []byte(`{"code":42,"message":"Expired credentials","description":"out-of-date"}`)
	}
	if strings.HasSuffix(r.URL.Path, "/transactionstatus") {
		return http.StatusOK, []byte(`{"status":"PENDING","order_id":"` + orderID1 + `"}`)
	}
	return http.StatusCreated, []byte(`{"status":201,"message":"OK","pay_token":"pt","payment_url":"https://pay.example/pt","notif_token":"nt"}`)
}

func TestToken_CachedAndRenewed(t *testing.T) {
	f := &fakeOrange{}
	srv := gatewaytest.NewRecorder(t, f.serve)
	now := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	c := &Client{BaseURL: srv.URL, ClientID: "cid", ClientSecret: "cs", MerchantKey: "mk",
		Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }}
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	ctx := context.Background()
	tokens := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.tokens }
	lastAuth := func() string { r := srv.Requests(); return r[len(r)-1].Header.Get("Authorization") }
	ref := gateway.Ref{Reference: ref1, ProviderRef: "pt|1200"}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				c.Collect(ctx, collection(ref1))
			} else {
				c.CollectionStatus(ctx, ref)
			}
		}()
	}
	wg.Wait()
	if n := tokens(); n < 1 || n > 8 {
		t.Fatalf("%d tokens", n)
	}
	before := tokens()
	for range 3 {
		if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("status = %+v, %v", st, err)
		}
	}
	if tokens() != before {
		t.Fatalf("%d tokens after 3 reads with a fresh one; want %d", tokens(), before)
	}
	held := lastAuth()
	advance(time.Hour - TokenMargin - time.Second)
	c.CollectionStatus(ctx, ref)
	if tokens() != before || lastAuth() != held {
		t.Fatalf("token renewed %v before its margin", TokenMargin)
	}
	advance(2 * time.Second)
	c.CollectionStatus(ctx, ref)
	if tokens() != before+1 || lastAuth() == held {
		t.Fatalf("token not renewed within %v of its expiry (%d tokens)", TokenMargin, tokens())
	}

	// Revoked: the 401 drops it, and the web payment is sent once more
	// with a new one.
	f.mu.Lock()
	f.validFrom = f.issued + 1
	f.mu.Unlock()
	if st, err := c.Collect(ctx, collection(ref1)); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("after a revocation = %+v, %v", st, err)
	}
	reqs := srv.Requests()
	webpay := fmtPath(webpayPath, Sandbox)
	if got := []string{reqs[len(reqs)-3].Path, reqs[len(reqs)-2].Path, reqs[len(reqs)-1].Path}; strings.Join(got, " ") !=
		webpay+" "+tokenPath+" "+webpay || tokens() != before+2 {
		t.Fatalf("calls = %v (%d tokens); want refused, new token, sent again", got, tokens())
	}
	// Refused whatever the token: a lasting error, after one new token.
	f.mu.Lock()
	f.refuseAll = true
	f.mu.Unlock()
	if _, err := c.Collect(ctx, collection(ref1)); err == nil || gateway.IsTransient(err) || !strings.Contains(err.Error(), "Expired credentials") {
		t.Fatalf("refused tokens: %v; want a lasting error in Orange's words", err)
	}
	if tokens() != before+3 {
		t.Fatalf("%d tokens; want exactly one more", tokens())
	}
	f.mu.Lock()
	f.refuseAll = false
	f.mu.Unlock()
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending || tokens() != before+4 {
		t.Fatalf("after the refusal = %+v, %v (%d tokens)", st, err, tokens())
	}
}

func TestCollect_RefusalsAndErrors(t *testing.T) {
	srv, c := newAnswers(t)
	ctx := context.Background()
	col := collection(ref1)
	with := func(change func(*gateway.Collection)) gateway.Collection { c := col; change(&c); return c }

	// Refused before anything is sent.
	for name, bad := range map[string]gateway.Collection{
		"cents":           with(func(c *gateway.Collection) { c.Currency, c.Amount = "GHS", 1250 }),
		"one cent":        with(func(c *gateway.Collection) { c.Currency, c.Amount = "USD", 1 }),
		"zero":            with(func(c *gateway.Collection) { c.Amount = 0 }),
		"negative":        with(func(c *gateway.Collection) { c.Amount = -100 }),
		"a card":          with(func(c *gateway.Collection) { c.Card = true }),
		"no notify":       with(func(c *gateway.Collection) { c.NotifyURL = "" }),
		"relative notify": with(func(c *gateway.Collection) { c.NotifyURL = "/callbacks/gw_om" }),
		"no return":       with(func(c *gateway.Collection) { c.ReturnURL = "" }),
		"no reference":    with(func(c *gateway.Collection) { c.Reference = "--" }),
	} {
		if st, err := c.Collect(ctx, bad); err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "not sent to Orange Money") {
			t.Errorf("%s = %+v, %v; want failed, not sent", name, st, err)
		}
	}
	if st, _ := c.Collect(ctx, with(func(c *gateway.Collection) { c.Currency, c.Amount = "GHS", 1250 })); !strings.Contains(st.Reason, "12.5 GHS has a fractional part") {
		t.Errorf("cents: %q does not say why", st.Reason)
	}
	// A live country collects its own currency only.
	senegal := &Client{BaseURL: srv.URL, Country: "sn", ClientID: "cid", ClientSecret: "cs", MerchantKey: "mk"}
	if st, err := senegal.Collect(ctx, with(func(c *gateway.Collection) { c.Currency = "XAF" })); err != nil || st.Outcome != gateway.Failed ||
		!strings.Contains(st.Reason, "collects XOF in SN, not XAF") {
		t.Errorf("XAF in Senegal = %+v, %v", st, err)
	}
	// No ProviderRef: nothing at Orange to ask about.
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("status without a ProviderRef = %+v, %v", st, err)
	}
	// A ProviderRef without its amount: a lasting error, nothing sent.
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: payToken1}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("a bare pay_token: %v; want a lasting error", err)
	}
	// Credentials missing: lasting, nothing sent.
	for _, bad := range []*Client{{BaseURL: srv.URL, ClientSecret: "cs", MerchantKey: "mk"}, {BaseURL: srv.URL, ClientID: "cid", ClientSecret: "cs"}} {
		if _, err := bad.Collect(ctx, col); gateway.ErrorOf(err) == nil || gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
			t.Errorf("%+v: %v; want a lasting error, not sent", bad, err)
		}
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("calls %v; want none", calls)
	}

	// The token refused: lasting, nothing sent; the token endpoint failing:
	// transient, nothing sent.
	for _, tc := range []struct {
		code      int
		body      string
		transient bool
	}{{http.StatusUnauthorized, `{"error":"invalid_client","error_description":"bad"}`, false}, {http.StatusBadRequest, ``, false},
		{http.StatusInternalServerError, `{}`, true}, {http.StatusOK, `{"access_token": `, true}, {http.StatusOK, `{"expires_in":3600}`, true},
		{http.StatusTooManyRequests, ``, true}} {
		srv.Set(tokenCall, tc.code, []byte(tc.body))
		_, err := c.Collect(ctx, col)
		if e := gateway.ErrorOf(err); e == nil || e.Transient != tc.transient || !e.NotSent {
			t.Errorf("token %d %s: %v; want not sent, transient %v", tc.code, tc.body, err, tc.transient)
		}
	}
	if strings.Contains(strings.Join(srv.Calls(), " "), "webpayment") {
		t.Fatalf("calls %v; want no web payment without a token", srv.Calls())
	}
	srv.Set(tokenCall, http.StatusOK, gatewaytest.Golden(t, "token.json"))

	// Refusals: failed, in Orange's words, nothing recorded.
	for _, tc := range []struct {
		code   int
		body   string
		reason string
	}{
		{http.StatusBadRequest, string(gatewaytest.Golden(t, "error_webpayment_refused.json")), "400 1101: Bad Request (Invalid merchant_key)"},
		{http.StatusBadRequest, ``, "400 Bad Request"},
		{http.StatusCreated, `{"status":201,"message":"OK"}`, "201 201: OK"},
		{http.StatusCreated, `{"pay_token":"pt","payment_url":"not a url"}`, "201 no pay_token or payment_url"},
	} {
		srv.Set(webpayCall, tc.code, []byte(tc.body))
		created := col
		created.Created = func(string) error { t.Error("a refused web payment was recorded"); return nil }
		if st, err := c.Collect(ctx, created); err != nil || st != (gateway.Status{Outcome: gateway.Failed, Reason: tc.reason}) {
			t.Errorf("%d %s = %+v, %v; want failed %q", tc.code, tc.body, st, err, tc.reason)
		}
	}
	// Answers that conclude nothing: the web payment may exist.
	for _, tc := range []struct {
		code  int
		body  string
		words string
	}{{http.StatusInternalServerError, `{"code":1,"message":"Internal error"}`, "Internal error"}, {http.StatusServiceUnavailable, ``, "503"},
		{http.StatusCreated, `{"pay_token": `, "unreadable"}, {http.StatusTooManyRequests, `{"code":53,"message":"Too many requests"}`, "Too many requests"}} {
		srv.Set(webpayCall, tc.code, []byte(tc.body))
		_, err := c.Collect(ctx, col)
		if e := gateway.ErrorOf(err); e == nil || !e.Transient || !e.Answered || e.NotSent || !strings.Contains(e.Message, tc.words) {
			t.Errorf("%d %s: %v; want transient, answered, saying %q", tc.code, tc.body, err, tc.words)
		}
	}
	// Not the payment's fault: lasting errors.
	for _, code := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed} {
		srv.Set(webpayCall, code, []byte(`{"code":60,"message":"Resource not found"}`))
		if st, err := c.Collect(ctx, col); err == nil || gateway.IsTransient(err) || st.Outcome != "" {
			t.Errorf("%d: %+v, %v; want a lasting error", code, st, err)
		}
	}
	// Created but not recorded: never shown, a lasting error.
	srv.Set(webpayCall, http.StatusCreated, gatewaytest.Golden(t, "webpayment_created.json"))
	failing := with(func(c *gateway.Collection) { c.Created = func(string) error { return errors.New("database down") } })
	if st, err := c.Collect(ctx, failing); err == nil || gateway.IsTransient(err) || st.RedirectURL != "" || !strings.Contains(err.Error(), payToken1) {
		t.Fatalf("not recorded = %+v, %v; want a lasting error naming the pay_token, no page", st, err)
	}

	// Status reads that conclude nothing.
	ref := gateway.Ref{Reference: ref1, ProviderRef: payToken1 + "|1200"}
	for _, tc := range []struct {
		code      int
		body      string
		transient bool
	}{
		{http.StatusInternalServerError, `{}`, true},
		{http.StatusOK, `{"status": `, true},
		{http.StatusTooManyRequests, ``, true},
		{http.StatusBadRequest, `{"code":1101,"message":"Bad Request","description":"No transaction"}`, false},
		{http.StatusNotFound, ``, false},
		{http.StatusOK, `{"status":"SUCCESS","order_id":"another"}`, false},
	} {
		srv.Set(statusCall, tc.code, []byte(tc.body))
		st, err := c.CollectionStatus(ctx, ref)
		if e := gateway.ErrorOf(err); e == nil || e.Transient != tc.transient || st.Outcome != "" {
			t.Errorf("status %d %s = %+v, %v; want an error (transient %v)", tc.code, tc.body, st, err, tc.transient)
		}
	}
	// Nobody listening: transient, not sent.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	gone := &Client{BaseURL: closed.URL, ClientID: "cid", ClientSecret: "cs", MerchantKey: "mk"}
	if _, err := gone.Collect(ctx, col); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || !gateway.IsTransient(err) {
		t.Fatalf("no connection: %v; want transient, not sent", err)
	}
	if _, err := (&Client{ClientID: "cid", ClientSecret: "cs", MerchantKey: "mk"}).Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("no address: %v; want a lasting error", err)
	}
}

// newSim starts the simulator on loopback and a client facing it.
func newSim(t *testing.T) (*Simulator, *httptest.Server, *Client) {
	sim := &Simulator{ClientID: "sim-id", ClientSecret: "sim-secret", MerchantKey: "sim-mk"}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, ClientID: sim.ClientID, ClientSecret: sim.ClientSecret, MerchantKey: sim.MerchantKey,
		MerchantName: "Cauri Shop", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return sim, srv, c
}

var formRE = regexp.MustCompile(`<form method="(\w+)" action="([^"]+)"`)

// onPage plays the customer on the payment page: it reads the page,
// submits its form with the button do (and the number msisdn), and follows
// where the page sends it. It answers the last response.
func onPage(t *testing.T, page, do, msisdn string) *http.Response {
	t.Helper()
	res, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := formRE.FindStringSubmatch(string(b))
	if res.StatusCode != http.StatusOK || m == nil || !strings.EqualFold(m[1], "post") ||
		!strings.Contains(string(b), `name="do" value="`+do+`"`) || !strings.Contains(string(b), `name="msisdn"`) {
		t.Fatalf("payment page %d: %s", res.StatusCode, b)
	}
	base, _ := url.Parse(page)
	action, err := base.Parse(m[2])
	if err != nil {
		t.Fatal(err)
	}
	if res, err = http.PostForm(action.String(), url.Values{"do": {do}, "msisdn": {msisdn}}); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// waitNotifications waits until hook received n notifications.
func waitNotifications(t *testing.T, hook *gatewaytest.Receiver, n int) ([]*http.Request, [][]byte) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		reqs, bodies := hook.Received()
		if len(reqs) >= n {
			return reqs, bodies
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications; want %d", len(reqs), n)
		}
	}
}

// callbackHeader is what the service passes CallbackReference for a
// notification r: its headers and its query under CallbackQueryHeader.
func callbackHeader(r *http.Request) http.Header {
	h := r.Header.Clone()
	h.Del(gateway.CallbackQueryHeader)
	if r.URL.RawQuery != "" {
		h.Set(gateway.CallbackQueryHeader, r.URL.RawQuery)
	}
	return h
}

func TestCollect_ThroughPaymentPage(t *testing.T) {
	sim, srv, c := newSim(t)
	hook, shop := gatewaytest.NewReceiver(t), gatewaytest.NewReceiver(t)
	ctx := context.Background()
	ids := map[string]string{}
	collect := func(ref string) (gateway.Collection, gateway.Status) {
		col := collection(ref)
		col.ReturnURL, col.NotifyURL = shop.URL+"/return/"+ref, hook.URL+"/callbacks/gw_om"
		col.Created = func(id string) error { ids[ref] = id; return nil }
		st, err := c.Collect(ctx, col)
		if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" || ids[ref] != st.ProviderRef ||
			!strings.HasPrefix(st.RedirectURL, srv.URL+"/pay/") || !strings.HasSuffix(st.ProviderRef, "|1200") {
			t.Fatalf("collect = %+v, %v (recorded %q)", st, err, ids[ref])
		}
		return col, st
	}

	// Paid: back on the merchant's page, collected, and a notification
	// naming our reference in its address.
	col, st := collect("11111111-2222-4333-8444-555555555555")
	ref := gateway.Ref{Reference: col.Reference, ProviderRef: ids[col.Reference]}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st != (gateway.Status{Outcome: gateway.Pending, ProviderRef: ref.ProviderRef}) {
		t.Fatalf("before paying = %+v, %v", st, err)
	}
	if res := onPage(t, st.RedirectURL, "pay", ""); res.StatusCode != http.StatusOK || res.Request.URL.Path != "/return/"+col.Reference {
		t.Fatalf("after paying the customer is at %s (%d)", res.Request.URL, res.StatusCode)
	}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: ref.ProviderRef}) {
		t.Fatalf("after paying = %+v, %v", st, err)
	}
	reqs, bodies := waitNotifications(t, hook, 1)
	if reqs[0].Method != http.MethodPost || reqs[0].URL.Path != "/callbacks/gw_om" || reqs[0].URL.Query().Get("ref") != col.Reference {
		t.Fatalf("notification = %s %s", reqs[0].Method, reqs[0].URL)
	}
	var n map[string]string
	if err := json.Unmarshal(bodies[0], &n); err != nil || n["status"] != "SUCCESS" || n["notif_token"] == "" || !strings.HasPrefix(n["txnid"], "MP") || len(n) != 3 {
		t.Fatalf("notification body = %s", bodies[0])
	}
	if got, err := c.CallbackReference(callbackHeader(reqs[0]), bodies[0]); err != nil || got != col.Reference {
		t.Fatalf("callback reference = %q, %v", got, err)
	}
	// A notification claiming a failure changes nothing at Orange.
	token, _, _ := parseProviderRef(ref.ProviderRef)
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+token+"?status=FAILED")
	if _, bodies := waitNotifications(t, hook, 2); !strings.Contains(string(bodies[1]), `"status":"FAILED"`) {
		t.Fatalf("claimed failure = %s", bodies[1])
	}
	if st, _ := c.CollectionStatus(ctx, ref); st.Outcome != gateway.Succeeded {
		t.Fatalf("after a stale notification = %+v", st)
	}
	// A status read with another amount or reference is refused.
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference, ProviderRef: token + "|1300"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("another amount: %v; want a lasting error", err)
	}

	// Cancelled: back at cancel_url (the same return address), failed.
	col2, st2 := collect("21111111-2222-4333-8444-555555555555")
	if res := onPage(t, st2.RedirectURL, "cancel", ""); res.Request.URL.Path != "/return/"+col2.Reference {
		t.Fatalf("after cancelling the customer is at %s", res.Request.URL)
	}
	ref2 := gateway.Ref{Reference: col2.Reference, ProviderRef: ids[col2.Reference]}
	if st, err := c.CollectionStatus(ctx, ref2); err != nil || st != (gateway.Status{Outcome: gateway.Failed, ProviderRef: ref2.ProviderRef, Reason: "failed"}) {
		t.Fatalf("after cancelling = %+v, %v", st, err)
	}
	reqs, bodies = waitNotifications(t, hook, 3)
	if got, err := c.CallbackReference(callbackHeader(reqs[2]), bodies[2]); err != nil || got != col2.Reference || !strings.Contains(string(bodies[2]), "FAILED") {
		t.Fatalf("cancel notification %s = %q, %v", bodies[2], got, err)
	}

	// The payer's number: declined, low balance, refused fail; a lost one waits.
	for i, number := range []string{"+2250700000029", "+2250700000049", "+2250700000039"} {
		col, st := collect(strconv.Itoa(i+3) + "1111111-2222-4333-8444-555555555555")
		onPage(t, st.RedirectURL, "pay", number)
		if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference, ProviderRef: ids[col.Reference]}); st.Outcome != gateway.Failed {
			t.Errorf("%s = %+v; want failed", number, st)
		}
	}
	lost, lostSt := collect("61111111-2222-4333-8444-555555555555")
	res, err := http.Get(lostSt.RedirectURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = http.PostForm(lostSt.RedirectURL, url.Values{"do": {"pay"}, "msisdn": {"+2250700000129"}})
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("a lost payment's page: %v, %v", res, err)
	}
	res.Body.Close()
	lostRef := gateway.Ref{Reference: lost.Reference, ProviderRef: ids[lost.Reference]}
	if st, _ := c.CollectionStatus(ctx, lostRef); st.Outcome != gateway.Pending {
		t.Fatalf("a lost payment = %+v; want pending", st)
	}
	// Expired by the control call: failed, no notification.
	before, _ := hook.Received()
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+OrderID(lost.Reference)+"?status=EXPIRED")
	if st, _ := c.CollectionStatus(ctx, lostRef); st.Outcome != gateway.Failed || st.Reason != "expired" {
		t.Fatalf("expired = %+v", st)
	}
	time.Sleep(50 * time.Millisecond)
	if after, _ := hook.Received(); len(after) != len(before) {
		t.Fatal("an expired payment was notified")
	}

	// The same reference again: OM refuses the order_id, nothing created.
	payments := sim.Payments()
	again := collection(col.Reference)
	again.ReturnURL, again.NotifyURL = shop.URL+"/r", hook.URL
	if st, err := c.Collect(ctx, again); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Duplicate order_id") {
		t.Fatalf("same reference = %+v, %v", st, err)
	}
	if sim.Payments() != payments {
		t.Fatal("a refused web payment was created")
	}
	if res, err := http.Get(srv.URL + "/pay/unknown"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown page: %v, %v", res, err)
	}
}

func TestSimulator_Refusals(t *testing.T) {
	sim, srv, c := newSim(t)
	hook := gatewaytest.NewReceiver(t)
	ctx := context.Background()
	col := collection(ref1)
	col.NotifyURL = hook.URL

	wrong := &Client{BaseURL: srv.URL, ClientID: sim.ClientID, ClientSecret: "guess", MerchantKey: sim.MerchantKey}
	if _, err := wrong.Collect(ctx, col); err == nil || gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
		t.Errorf("wrong secret: %v; want a lasting error, not sent", err)
	}
	wrongKey := &Client{BaseURL: srv.URL, ClientID: sim.ClientID, ClientSecret: sim.ClientSecret, MerchantKey: "guess"}
	if st, err := wrongKey.Collect(ctx, col); err != nil || st.Reason != "400 1101: Bad Request (Invalid merchant_key)" {
		t.Errorf("wrong merchant key: %+v, %v", st, err)
	}
	liveSim := &Client{BaseURL: srv.URL, Country: "ci", ClientID: sim.ClientID, ClientSecret: sim.ClientSecret, MerchantKey: sim.MerchantKey}
	if _, err := liveSim.Collect(ctx, col); err == nil || gateway.IsTransient(err) || !strings.Contains(err.Error(), "country") {
		t.Errorf("a country the simulator does not serve: %v; want a lasting error about the address", err)
	}
	if sim.Payments() != 0 {
		t.Fatal("a refused web payment was created")
	}

	// Raw requests: a token, then the web payment's fields one by one.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+tokenPath, strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(sim.ClientID, sim.ClientSecret)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("token: %v, %v", res, err)
	}
	var tok struct {
		TokenType   string `json:"token_type"`
		AccessToken string `json:"access_token"`
		ExpiresIn   any    `json:"expires_in"`
	}
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if tok.AccessToken == "" || tok.TokenType != "Bearer" || tok.ExpiresIn != float64(3600) {
		t.Fatalf("token = %+v", tok)
	}
	body := func(change func(m map[string]any)) string {
		m := map[string]any{"merchant_key": sim.MerchantKey, "currency": "OUV", "order_id": "ORD1", "amount": 1200,
			"return_url": "https://shop.example/r", "cancel_url": "https://shop.example/c", "notif_url": hook.URL, "lang": "fr", "reference": "Shop"}
		change(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	send := func(auth, body string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+fmtPath(webpayPath, Sandbox), strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var e map[string]any
		json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e
	}
	bearer := "Bearer " + tok.AccessToken
	keep := func(map[string]any) {}
	n := 0
	for _, tc := range []struct {
		name, auth, body string
		code             int
		want             string
	}{
		{"no token", "", body(keep), http.StatusUnauthorized, "Missing credentials"},
		{"unknown token", "Bearer guess", body(keep), http.StatusUnauthorized, "Invalid credentials"},
		{"not JSON", bearer, `{"amount":`, http.StatusBadRequest, "The body is not the JSON expected"},
		{"XOF in the sandbox", bearer, body(func(m map[string]any) { m["currency"] = "XOF" }), http.StatusBadRequest, "Invalid currency XOF"},
		{"fraction", bearer, body(func(m map[string]any) { m["amount"] = 12.5 }), http.StatusBadRequest, "Invalid amount: a positive whole number"},
		{"zero", bearer, body(func(m map[string]any) { m["amount"] = 0 }), http.StatusBadRequest, "Invalid amount: a positive whole number"},
		{"order_id too long", bearer, body(func(m map[string]any) { m["order_id"] = strings.Repeat("a", 31) }), http.StatusBadRequest, "Invalid order_id: 1 to 30 letters, digits, '-', '_' or '.'"},
		{"no notif_url", bearer, body(func(m map[string]any) { delete(m, "notif_url") }), http.StatusBadRequest, "Invalid notif_url"},
		{"relative cancel_url", bearer, body(func(m map[string]any) { m["cancel_url"] = "/c" }), http.StatusBadRequest, "Invalid cancel_url"},
		{"lang", bearer, body(func(m map[string]any) { m["lang"] = "wo" }), http.StatusBadRequest, "Invalid lang: fr or en"},
		{"reference too long", bearer, body(func(m map[string]any) { m["reference"] = strings.Repeat("x", 31) }), http.StatusBadRequest, "Invalid reference: at most 30 characters"},
		{"accepted", bearer, body(keep), http.StatusCreated, ""},
		{"no reference", bearer, body(func(m map[string]any) { m["order_id"] = "ORD2"; delete(m, "reference") }), http.StatusCreated, ""},
	} {
		code, e := send(tc.auth, tc.body)
		if code != tc.code || tc.want != "" && e["description"] != tc.want && e["message"] != tc.want ||
			tc.want == "" && (e["status"] != float64(201) || e["message"] != "OK" || e["pay_token"] == "" || e["notif_token"] == "") {
			t.Errorf("%s: %d %v; want %d %q", tc.name, code, e, tc.code, tc.want)
		}
		if code == http.StatusCreated {
			n++
		}
	}
	if sim.Payments() != n {
		t.Fatalf("%d payments; want the %d accepted", sim.Payments(), n)
	}

	// Tokens expire: the client, whose clock still holds its token, gets a
	// new one on Orange's 401 (42 Expired credentials).
	col.Reference = "71111111-2222-4333-8444-555555555555"
	st, err := c.Collect(ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	issued := sim.Tokens()
	sim.mu.Lock()
	for k := range sim.tokens {
		sim.tokens[k] = time.Now().Add(-time.Second)
	}
	sim.mu.Unlock()
	ref := gateway.Ref{Reference: col.Reference, ProviderRef: st.ProviderRef}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending || sim.Tokens() != issued+1 {
		t.Fatalf("after expiry = %+v, %v (%d tokens, had %d)", st, err, sim.Tokens(), issued)
	}

	// Faults: transient, answered, nothing created; 500-initiate fails the
	// web payment, not the status read.
	payments := sim.Payments()
	col.Reference = "81111111-2222-4333-8444-555555555555"
	for _, mode := range []string{"500", "malformed"} {
		gatewaytest.Control(t, srv.URL, "/_sim/fault?mode="+mode)
		if _, err := c.Collect(ctx, col); !gateway.IsTransient(err) || !gateway.ErrorOf(err).Answered {
			t.Errorf("fault %s: %v; want a transient error, answered", mode, err)
		}
		if _, err := c.CollectionStatus(ctx, ref); !gateway.IsTransient(err) {
			t.Errorf("fault %s on the status: %v; want a transient error", mode, err)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500-initiate")
	if _, err := c.Collect(ctx, col); !gateway.IsTransient(err) {
		t.Errorf("fault on initiation: %v", err)
	}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status during a fault on the web payment only = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=slow&seconds=0.4")
	if _, err := c.Collect(ctx, col); !gateway.IsTransient(err) || gateway.ErrorOf(err).Answered || gateway.ErrorOf(err).NotSent {
		t.Errorf("slow: %v; want transient, no answer, sent", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	for deadline := time.Now().Add(3 * time.Second); sim.Payments() == payments; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow web payment never arrived")
		}
	}
	if res, err := http.Post(srv.URL+"/_sim/settle/unknown", "", nil); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("settling an unknown payment: %v, %v; want 404", res, err)
	} else {
		res.Body.Close()
	}
	if sim.Calls() == 0 {
		t.Fatal("no calls counted")
	}
}

func TestSimulator_SettlesAfterDelay(t *testing.T) {
	sim, _, c := newSim(t)
	sim.SettleAfter = 50 * time.Millisecond
	hook := gatewaytest.NewReceiver(t)
	ctx := context.Background()
	col := collection(ref1)
	col.NotifyURL = hook.URL + "/cb"
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	reqs, bodies := waitNotifications(t, hook, 1)
	if got, err := c.CallbackReference(callbackHeader(reqs[0]), bodies[0]); err != nil || got != ref1 {
		t.Fatalf("notification reference = %q, %v", got, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: st.ProviderRef}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay = %+v, %v", st, err)
	}
}

// TestSimulator_Lifecycle checks OM's statuses as the simulator runs them:
// PENDING is a step (no notification), a lost payment stays PENDING, a page
// left alone past PageLifetime is EXPIRED when read, and only an end is
// notified, unless a notification claims a status.
func TestSimulator_Lifecycle(t *testing.T) {
	omSim, srv, c := newSim(t)
	hook := gatewaytest.NewReceiver(t)
	ctx := context.Background()
	collect := func(ref string) gateway.Ref {
		col := collection(ref)
		col.NotifyURL = hook.URL + "/cb"
		st, err := c.Collect(ctx, col)
		if err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("collect = %+v, %v", st, err)
		}
		return gateway.Ref{Reference: ref, ProviderRef: st.ProviderRef}
	}
	status := func(ref gateway.Ref) string {
		t.Helper()
		token, amount, _ := parseProviderRef(ref.ProviderRef)
		m, ok := omSim.View(token)
		if !ok || m.Data.amount != amount {
			t.Fatalf("no payment %s", ref.ProviderRef)
		}
		return m.Status
	}
	ref := collect(ref1)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+OrderID(ref1)+"?status=PENDING")
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+OrderID(ref1)) // nothing to say yet
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending || status(ref) != "PENDING" {
		t.Fatalf("after a step = %+v, %v (%s)", st, err, status(ref))
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+OrderID(ref1)+"?status=SUCCESS")
	if _, bodies := waitNotifications(t, hook, 1); !strings.Contains(string(bodies[0]), `"status":"SUCCESS"`) {
		t.Fatalf("notification = %s", bodies[0])
	}

	// Left alone past PageLifetime: EXPIRED, not notified, and it cannot
	// be paid any more.
	const ref2 = "22222222-3333-4444-8555-666666666666"
	old := collect(ref2)
	token, _, _ := parseProviderRef(old.ProviderRef)
	omSim.Update(token, func(m *sim.Movement[simPayment]) { m.Created = m.Created.Add(-PageLifetime - time.Second) })
	if st, err := c.CollectionStatus(ctx, old); err != nil || st.Outcome != gateway.Failed || status(old) != "EXPIRED" {
		t.Fatalf("an old page = %+v, %v (%s)", st, err, status(old))
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+token+"?status=SUCCESS")
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+token)
	if status(old) != "EXPIRED" {
		t.Fatalf("paid after its expiry: %s", status(old))
	}
	time.Sleep(50 * time.Millisecond)
	if _, _, n := hook.Last(); n != 1 {
		t.Fatalf("%d notifications; want only the first payment's", n)
	}
}
