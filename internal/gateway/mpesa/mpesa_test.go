package mpesa

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// The sandbox's documented shortcode and its published passkey: the
// documented Password (testdata/stkpush_request.json) is base64 of them and
// the documented Timestamp (testdata/SOURCES.md).
const (
	sandboxShortCode = "174379"
	sandboxPassKey   = "bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919"
)

// documentedTime is the documented Timestamp, 20160216165627 in Kenya's
// time, given in UTC.
var documentedTime = time.Date(2016, 2, 16, 13, 56, 27, 0, time.UTC)

// ref1 is a reference as the service makes them (a UUID).
const ref1 = "0f8fad5b-d9cb-469f-a165-70867728950e"

const (
	pushCall  = "POST " + pushPath
	queryCall = "POST " + queryPath
	tokenCall = "GET /oauth/v1/generate"
)

func collection(ref, phone string) gateway.Collection {
	return gateway.Collection{Reference: ref, Amount: 150000, Currency: "KES", Phone: phone, Operator: "mpesa", Country: "KE",
		Description: "Order 1042", NotifyURL: "https://cauri.example/callbacks/gw_1"}
}

// TestEncodePush_Golden holds the push to the portal's example: its
// Password made from the sandbox shortcode, its passkey and the same
// Timestamp, in Kenya's time (testdata/SOURCES.md).
func TestEncodePush_Golden(t *testing.T) {
	c := &Client{ShortCode: sandboxShortCode, PassKey: sandboxPassKey, Now: func() time.Time { return documentedTime }}
	col := gateway.Collection{Reference: "Test", Amount: 100, Currency: "KES", Phone: "+254708920430",
		Description: "Test", NotifyURL: "https://mydomain.com/path", Email: "wanjiru@example.com", Name: "Wanjiru"}
	encode := func(col gateway.Collection) stkPush {
		t.Helper()
		p, err := c.encodePush(col)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine, documented := gatewaytest.DocumentedFields(t, encode(col), "stkpush_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("push = %v; want exactly the documented fields", mine)
	}

	// Whole shillings from cents; a till pays buy goods to it, the
	// shortcode still signing.
	c.TillNumber = " 5678901 "
	col.Amount = 150000
	p := encode(col)
	if p.Amount != "1500" || p.TransactionType != BuyGoods || p.PartyB != "5678901" || p.BusinessShortCode != sandboxShortCode {
		t.Fatalf("buy goods push = %+v", p)
	}
	// Our reference's first 12 letters and digits; a description cut to 13
	// letters, digits and spaces; "Payment" without one.
	col.Reference, col.Description = ref1, "Commande n° 1042 — boutique"
	if p := encode(col); p.AccountReference != "0f8fad5bd9cb" || p.TransactionDesc != "Commande n 10" {
		t.Fatalf("reference %q, description %q", p.AccountReference, p.TransactionDesc)
	}
	col.Reference, col.Description = "---", " \n "
	if p := encode(col); p.AccountReference != "Cauri" || p.TransactionDesc != "Payment" {
		t.Fatalf("reference %q, description %q", p.AccountReference, p.TransactionDesc)
	}
}

func TestEncodeQuery_Golden(t *testing.T) {
	c := &Client{ShortCode: sandboxShortCode, PassKey: sandboxPassKey, Now: func() time.Time { return documentedTime }}
	mine, documented := gatewaytest.DocumentedFields(t, c.encodeQuery("ws_CO_260520211133524545"), "stkpushquery_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("query = %v; want exactly the documented fields", mine)
	}
}

func TestCollect_Wire(t *testing.T) {
	token, accepted := gatewaytest.Golden(t, "token.json"), gatewaytest.Golden(t, "stkpush_accepted.json")
	srv := gatewaytest.NewRecorder(t, func(r *http.Request) (int, []byte) {
		if r.URL.Path == "/oauth/v1/generate" {
			return http.StatusOK, token
		}
		return http.StatusOK, accepted
	})
	c := &Client{BaseURL: srv.URL + "/", ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
		Now: func() time.Time { return documentedTime }}
	col := gateway.Collection{Reference: "Test", Amount: 100, Currency: "KES", Phone: "+254708920430", Description: "Test",
		NotifyURL: "https://mydomain.com/path"}
	if st, err := c.Collect(context.Background(), col); err != nil || st != (gateway.Status{Outcome: gateway.Pending, ProviderRef: "ws_CO_191220191020363925"}) {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want the token's and the push", len(reqs))
	}
	tok, push := reqs[0], reqs[1]
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ck:cs"))
	if tok.Method != http.MethodGet || tok.Path != "/oauth/v1/generate" || tok.Query != "grant_type=client_credentials" ||
		tok.Header.Get("Authorization") != basic || len(tok.Body) != 0 {
		t.Fatalf("token request = %s %s?%s %v %q", tok.Method, tok.Path, tok.Query, tok.Header, tok.Body)
	}
	if push.Method != http.MethodPost || push.Path != pushPath || push.Header.Get("Authorization") != "Bearer "+gatewaytest.DocumentedToken(t) ||
		push.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("push = %s %s %v", push.Method, push.Path, push.Header)
	}
	var sent map[string]any
	if err := json.Unmarshal(push.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if mine, documented := gatewaytest.DocumentedFields(t, sent, "stkpush_request.json"); len(mine) != len(documented) {
		t.Fatalf("sent %v", mine)
	}
}

// newAnswers is a client facing fixed answers, its token documented.
func newAnswers(t *testing.T) (*gatewaytest.Answers, *Client) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set(tokenCall, http.StatusOK, gatewaytest.Golden(t, "token.json"))
	return srv, &Client{BaseURL: srv.URL, ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: sandboxShortCode, PassKey: sandboxPassKey}
}

// TestCollect_RecordsCheckoutRequestID: the id of an accepted push goes to
// Collection.Created before the answer, a refused push records nothing; the
// status query asks about the push's id (the rest of the documented answers:
// TestConformance).
func TestCollect_RecordsCheckoutRequestID(t *testing.T) {
	srv, c := newAnswers(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		code    int
		body    []byte
		created string
	}{
		{"accepted", http.StatusOK, gatewaytest.Golden(t, "stkpush_accepted.json"), "ws_CO_191220191020363925"},
		{"refused", http.StatusBadRequest, gatewaytest.Golden(t, "error_invalid_phone.json"), ""},
		{"not accepted", http.StatusOK, []byte(`{"MerchantRequestID":"1-2-1","ResponseCode":"1","ResponseDescription":"Rejected"}`), ""},
		{"code as a number", http.StatusOK, []byte(`{"CheckoutRequestID":"ws_CO_1","ResponseCode":0}`), "ws_CO_1"},
	} {
		srv.Set(pushCall, tc.code, tc.body)
		col, created := collection(ref1, "+254712345678"), ""
		col.Created = func(id string) error { created = id; return nil }
		if st, err := c.Collect(ctx, col); err != nil || created != tc.created || tc.created != "" && st.ProviderRef != tc.created {
			t.Errorf("%s: %+v, %v, created %q; want created %q", tc.name, st, err, created, tc.created)
		}
	}

	const id = "ws_CO_27072017151044001"
	srv.Set(queryCall, http.StatusOK, gatewaytest.Golden(t, "stkpushquery_cancelled.json"))
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: id}); err != nil {
		t.Fatal(err)
	}
	var q stkQuery
	if err := json.Unmarshal(srv.Body(queryCall), &q); err != nil || q.CheckoutRequestID != id || q.BusinessShortCode != sandboxShortCode {
		t.Fatalf("query sent %s", srv.Body(queryCall))
	}
}

// fakeDaraja is a Daraja that gives numbered tokens (expires_in "3599")
// and accepts, on the API, only those it has not revoked; it refuses
// others with refusal.
type fakeDaraja struct {
	mu              sync.Mutex
	issued          int
	validFrom       int  // tokens numbered below are refused
	refuseAll       bool // every token refused
	refusal         func() (int, []byte)
	tokens, answers int
}

func (f *fakeDaraja) serve(r *http.Request) (int, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/oauth/v1/generate" {
		f.issued++
		f.tokens++
		b, _ := json.Marshal(map[string]string{"access_token": "tok-" + strconv.Itoa(f.issued), "expires_in": "3599"})
		return http.StatusOK, b
	}
	f.answers++
	n, _ := strconv.Atoi(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tok-"))
	if f.refuseAll || n < f.validFrom {
		return f.refusal()
	}
	if r.URL.Path == queryPath {
		return http.StatusInternalServerError, []byte(`{"requestId":"r","errorCode":"500.001.1001","errorMessage":"The transaction is being processed"}`)
	}
	return http.StatusOK, []byte(`{"MerchantRequestID":"1-2-1","CheckoutRequestID":"ws_CO_9","ResponseCode":"0"}`)
}

func TestToken_CachedAndRenewed(t *testing.T) {
	for name, refusal := range map[string]func() (int, []byte){
		"404 Invalid Access Token": func() (int, []byte) {
			return http.StatusNotFound, []byte(`{"requestId":"r","errorCode":"404.001.03","errorMessage":"Invalid Access Token"}`)
		},
		"401": func() (int, []byte) { return http.StatusUnauthorized, nil },
	} {
		t.Run(name, func(t *testing.T) { testToken(t, refusal) })
	}
}

func testToken(t *testing.T, refusal func() (int, []byte)) {
	f := &fakeDaraja{refusal: refusal}
	srv := gatewaytest.NewRecorder(t, f.serve)
	now := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	c := &Client{BaseURL: srv.URL, ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "600000", PassKey: "pk",
		Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }}
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	ctx := context.Background()
	tokens := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.tokens }
	lastAuth := func() string { r := srv.Requests(); return r[len(r)-1].Header.Get("Authorization") }
	ref := gateway.Ref{Reference: ref1, ProviderRef: "ws_CO_9"}

	// Cached: one token for many calls, concurrent ones included.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				c.Collect(ctx, collection(ref1, "+254712345678"))
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

	// Valid until TokenMargin before its 3599 s, renewed after.
	advance(3599*time.Second - TokenMargin - time.Second)
	c.CollectionStatus(ctx, ref)
	if tokens() != before || lastAuth() != held {
		t.Fatalf("token renewed %v before its margin", TokenMargin)
	}
	advance(2 * time.Second)
	c.CollectionStatus(ctx, ref)
	if tokens() != before+1 || lastAuth() == held {
		t.Fatalf("token not renewed within %v of its expiry (%d tokens)", TokenMargin, tokens())
	}

	// Revoked: the refusal drops it, and the push goes through with a new
	// one, sent once more (Daraja refused it before doing anything).
	f.mu.Lock()
	f.validFrom = f.issued + 1
	f.mu.Unlock()
	if st, err := c.Collect(ctx, collection(ref1, "+254712345678")); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("after a revocation = %+v, %v", st, err)
	}
	reqs := srv.Requests()
	if got := []string{reqs[len(reqs)-3].Path, reqs[len(reqs)-2].Path, reqs[len(reqs)-1].Path}; strings.Join(got, " ") !=
		pushPath+" /oauth/v1/generate "+pushPath || tokens() != before+2 {
		t.Fatalf("calls = %v (%d tokens); want refused, new token, sent again", got, tokens())
	}
	if c.CollectionStatus(ctx, ref); tokens() != before+2 {
		t.Fatal("the new token was not kept")
	}

	// Refused whatever the token: a lasting error, after one new token.
	f.mu.Lock()
	f.refuseAll = true
	f.mu.Unlock()
	if _, err := c.Collect(ctx, collection(ref1, "+254712345678")); err == nil || gateway.IsTransient(err) {
		t.Fatalf("refused tokens: %v; want a lasting error", err)
	}
	if tokens() != before+3 {
		t.Fatalf("%d tokens; want exactly one more", tokens())
	}
	// The refused token is not kept: the next call asks for another.
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
	col := collection(ref1, "+254712345678")
	with := func(change func(*gateway.Collection)) gateway.Collection { c := col; change(&c); return c }

	// Refused before anything is sent.
	for name, bad := range map[string]gateway.Collection{
		"cents":             with(func(c *gateway.Collection) { c.Amount = 150050 }),
		"one cent":          with(func(c *gateway.Collection) { c.Amount = 1 }),
		"zero":              with(func(c *gateway.Collection) { c.Amount = 0 }),
		"negative":          with(func(c *gateway.Collection) { c.Amount = -100 }),
		"another currency":  with(func(c *gateway.Collection) { c.Currency = "UGX" }),
		"national number":   with(func(c *gateway.Collection) { c.Phone = "0712345678" }),
		"not Kenyan":        with(func(c *gateway.Collection) { c.Phone = "+256712345678" }),
		"a landline":        with(func(c *gateway.Collection) { c.Phone = "+254202345678" }),
		"too long":          with(func(c *gateway.Collection) { c.Phone = "+2547123456789" }),
		"no callback":       with(func(c *gateway.Collection) { c.NotifyURL = "" }),
		"relative callback": with(func(c *gateway.Collection) { c.NotifyURL = "/callbacks/gw_1" }),
		"a card":            with(func(c *gateway.Collection) { c.Card, c.Phone = true, "" }),
	} {
		if st, err := c.Collect(ctx, bad); err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "not sent to M-Pesa") {
			t.Errorf("%s = %+v, %v; want failed, not sent", name, st, err)
		}
	}
	if st, _ := c.Collect(ctx, with(func(c *gateway.Collection) { c.Amount = 150050 })); !strings.Contains(st.Reason, "1500.5 KES has cents") {
		t.Errorf("cents: %q does not say why", st.Reason)
	}
	// No CheckoutRequestID: nothing at Safaricom to ask about.
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("status without a CheckoutRequestID = %+v, %v", st, err)
	}
	// Credentials missing: lasting, nothing sent.
	for _, bad := range []*Client{{BaseURL: srv.URL, ConsumerSecret: "cs", ShortCode: "1", PassKey: "p"},
		{BaseURL: srv.URL, ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "1"}} {
		if _, err := bad.Collect(ctx, col); gateway.ErrorOf(err) == nil || gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
			t.Errorf("%+v: %v; want a lasting error, not sent", bad, err)
		}
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("calls %v; want none", calls)
	}

	// The token refused: lasting, and the push never left; the token
	// endpoint failing: transient, nothing sent.
	for _, tc := range []struct {
		code      int
		body      string
		transient bool
	}{{http.StatusBadRequest, `{"requestId":"r","errorCode":"400.008.01","errorMessage":"Invalid Authentication passed"}`, false},
		{http.StatusUnauthorized, ``, false}, {http.StatusInternalServerError, `{}`, true}, {http.StatusOK, `{"access_token": `, true},
		{http.StatusOK, `{"expires_in":"3599"}`, true}} {
		srv.Set(tokenCall, tc.code, []byte(tc.body))
		_, err := c.Collect(ctx, col)
		if e := gateway.ErrorOf(err); e == nil || e.Transient != tc.transient || !e.NotSent {
			t.Errorf("token %d %s: %v; want not sent, transient %v", tc.code, tc.body, err, tc.transient)
		}
	}
	if strings.Contains(strings.Join(srv.Calls(), " "), pushPath) {
		t.Fatalf("calls %v; want no push without a token", srv.Calls())
	}
	srv.Set(tokenCall, http.StatusOK, gatewaytest.Golden(t, "token.json"))

	// Answers that conclude nothing: the push may have been sent.
	for _, tc := range []struct {
		code  int
		body  string
		words string
	}{{http.StatusInternalServerError, `{"requestId":"r","errorCode":"500.001.1001","errorMessage":"Unable to lock subscriber, a transaction is already in process for the current subscriber"}`, "Unable to lock subscriber"},
		{http.StatusServiceUnavailable, ``, "503"}, {http.StatusOK, `{"ResponseCode": `, "unreadable"},
		{http.StatusOK, `{"ResponseCode":"0"}`, "CheckoutRequestID"}, {http.StatusAccepted, `{}`, "202"},
		{http.StatusTooManyRequests, `{"errorCode":"429.001.01","errorMessage":"Spike arrest violation"}`, "Spike arrest"}} {
		srv.Set(pushCall, tc.code, []byte(tc.body))
		_, err := c.Collect(ctx, col)
		if e := gateway.ErrorOf(err); e == nil || !e.Transient || !e.Answered || e.NotSent || !strings.Contains(e.Message, tc.words) {
			t.Errorf("%d %s: %v; want transient, answered, sent, saying %q", tc.code, tc.body, err, tc.words)
		}
	}
	// Not the payment's fault: lasting errors.
	for _, tc := range []struct {
		code int
		body string
	}{{http.StatusForbidden, `{}`}, {http.StatusNotFound, `{"requestId":"r","errorCode":"404.001.01","errorMessage":"Resource not found"}`},
		{http.StatusMethodNotAllowed, ``}} {
		srv.Set(pushCall, tc.code, []byte(tc.body))
		if st, err := c.Collect(ctx, col); err == nil || gateway.IsTransient(err) || st.Outcome != "" {
			t.Errorf("%d: %+v, %v; want a lasting error", tc.code, st, err)
		}
	}
	// The push recorded nowhere: as after a timeout, pending at Safaricom.
	srv.Set(pushCall, http.StatusOK, gatewaytest.Golden(t, "stkpush_accepted.json"))
	failing := with(func(c *gateway.Collection) { c.Created = func(string) error { return errors.New("database down") } })
	if _, err := c.Collect(ctx, failing); gateway.ErrorOf(err) == nil || !gateway.IsTransient(err) || gateway.ErrorOf(err).Answered ||
		gateway.ErrorOf(err).NotSent || !strings.Contains(err.Error(), "ws_CO_191220191020363925") {
		t.Fatalf("not recorded: %v; want transient, outcome unknown, naming the push", err)
	}

	// No address: lasting.
	if _, err := (&Client{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "1", PassKey: "p"}).Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("no address: %v; want a lasting error", err)
	}
	// No idempotency key: a push sent again is another push.
	var conn gateway.Connector = c
	if _, ok := conn.(gateway.IdempotentCollector); ok {
		t.Fatal("an M-Pesa client claims idempotent collections")
	}
}

// TestCallbackMetadata reads the documented callback's items (its id:
// TestConformance), the receipt number only there.
func TestCallbackMetadata(t *testing.T) {
	var cb callbackBody
	if err := json.Unmarshal(gatewaytest.Golden(t, "callback_success_balance.json"), &cb); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, it := range cb.Body.STKCallback.CallbackMetadata.Item {
		got[it.Name] = it.Value
	}
	if s := cb.Body.STKCallback; s.ResultCode != "0" || got["MpesaReceiptNumber"] != "LGR7OWQX0R" || got["Balance"] != nil || len(got) != 5 {
		t.Fatalf("callback = %+v, items %v", s, got)
	}
}

// newSim starts the simulator on loopback and a client facing it; hook
// receives the callbacks it posts.
func newSim(t *testing.T) (sim *Simulator, srv *httptest.Server, c *Client, hook *gatewaytest.Receiver) {
	hook = gatewaytest.NewReceiver(t)
	sim = &Simulator{ConsumerKey: "sim-key", ConsumerSecret: "sim-secret", ShortCode: sandboxShortCode, PassKey: sandboxPassKey}
	srv = httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c = &Client{BaseURL: srv.URL, ConsumerKey: sim.ConsumerKey, ConsumerSecret: sim.ConsumerSecret, ShortCode: sim.ShortCode,
		PassKey: sim.PassKey, HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return sim, srv, c, hook
}

// waitCallbacks waits until hook has n callbacks, for 3 s at most.
func waitCallbacks(t *testing.T, hook *gatewaytest.Receiver, n int) ([]*http.Request, [][]byte) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		reqs, bodies := hook.Received()
		if len(reqs) >= n {
			return reqs, bodies
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callbacks; want %d", len(reqs), n)
		}
	}
}

// stk reads a callback's stkCallback and its items.
func stk(t *testing.T, body []byte) (stkCallback, map[string]any) {
	t.Helper()
	var cb callbackBody
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.UseNumber()
	if err := d.Decode(&cb); err != nil {
		t.Fatalf("callback %s: %v", body, err)
	}
	items := map[string]any{}
	if m := cb.Body.STKCallback.CallbackMetadata; m != nil {
		for _, it := range m.Item {
			items[it.Name] = it.Value
		}
	}
	return cb.Body.STKCallback, items
}

// collectSim starts a collection through the simulator, recording the
// CheckoutRequestID as the service does, and checks it is pending.
func collectSim(t *testing.T, c *Client, hook *gatewaytest.Receiver, phone string) string {
	t.Helper()
	col := collection(ref1, phone)
	col.NotifyURL = hook.URL + "/callbacks/gw_ke1"
	recorded := ""
	col.Created = func(id string) error { recorded = id; return nil }
	st, err := c.Collect(context.Background(), col)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" || st.ProviderRef != recorded {
		t.Fatalf("collect %s = %+v, %v (recorded %q)", phone, st, err, recorded)
	}
	return recorded
}

func TestCollect_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()

	// Paid: pending (being processed) until settled, then succeeded, and
	// the stkCallback posted to the CallBackURL names the push.
	id := collectSim(t, c, hook, "+254712345678")
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: id}); err != nil || st != (gateway.Status{Outcome: gateway.Pending, ProviderRef: id}) {
		t.Fatalf("before settling = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id)
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: id}); err != nil || st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}) {
		t.Fatalf("after settling = %+v, %v", st, err)
	}
	reqs, bodies := waitCallbacks(t, hook, 1)
	if reqs[0].Method != http.MethodPost || !strings.HasPrefix(reqs[0].URL.Path, "/callbacks/gw_ke1/stk.") || reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("callback = %s %s %v; want a POST of JSON to the CallBackURL", reqs[0].Method, reqs[0].URL, reqs[0].Header)
	}
	if ref, err := c.CallbackReference(reqs[0].Header, bodies[0]); err != nil || ref != id {
		t.Fatalf("callback reference = %q, %v; want %q", ref, err, id)
	}
	cb, items := stk(t, bodies[0])
	if cb.ResultCode != "0" || items["Amount"] != json.Number("1500.00") || items["PhoneNumber"] != json.Number("254712345678") ||
		!strings.HasPrefix(items["MpesaReceiptNumber"].(string), "SIM") || len(items["TransactionDate"].(json.Number)) != 14 {
		t.Fatalf("callback = %s", bodies[0])
	}
	if !strings.Contains(string(bodies[0]), `"ResultCode":0`) {
		t.Fatalf("callback ResultCode not a number: %s", bodies[0])
	}
	// Settled again: nothing changes, no second callback; a duplicate and a
	// stale one on demand.
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id+"?status=FAILED")
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+id)
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+id+"?status=FAILED")
	_, bodies = waitCallbacks(t, hook, 3)
	if string(bodies[1]) != string(bodies[0]) {
		t.Fatalf("duplicate = %s; want %s", bodies[1], bodies[0])
	}
	if cb, _ := stk(t, bodies[2]); cb.ResultCode != "1032" || cb.CheckoutRequestID != id || cb.CallbackMetadata != nil {
		t.Fatalf("claimed failure = %s", bodies[2])
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: id}); st.Outcome != gateway.Succeeded {
		t.Fatalf("a claimed status changed the payment: %+v", st)
	}

	// The customer cancels; the customer's balance is too low.
	for _, tc := range []struct{ phone, reason string }{
		{"+254712340029", "1032: Request cancelled by user"},
		{"+254712340049", "1: The balance is insufficient for the transaction."},
	} {
		id := collectSim(t, c, hook, tc.phone)
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id)
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: id}); err != nil ||
			st != (gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: tc.reason}) {
			t.Fatalf("%s settled = %+v, %v; want failed %s", tc.phone, st, err, tc.reason)
		}
	}
	// A ResultCode asked for.
	id2037 := collectSim(t, c, hook, "+254712345678")
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id2037+"?status=1037")
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id2037}); st.Outcome != gateway.Failed || st.Reason != "1037: DS timeout user cannot be reached" {
		t.Fatalf("1037 = %+v", st)
	}

	// Refused at initiation: failed, nothing pushed.
	pushes := sim.Pushes()
	col := collection(ref1, "+254712340039")
	col.NotifyURL = hook.URL
	col.Created = func(string) error { t.Fatal("a refused push was recorded"); return nil }
	if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Failed || st.Reason != "400 400.002.02: Bad Request - Invalid PhoneNumber" {
		t.Fatalf("refused = %+v, %v", st, err)
	}
	if sim.Pushes() != pushes {
		t.Fatal("a refused push was counted")
	}
	// Never settles, no callback.
	lost := collectSim(t, c, hook, "+254712340129")
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+lost)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: lost}); st.Outcome != gateway.Pending {
		t.Fatalf("a lost payment = %+v; want pending", st)
	}
	// A till: buy goods, paid the same way.
	till := &Client{BaseURL: srv.URL, ConsumerKey: sim.ConsumerKey, ConsumerSecret: sim.ConsumerSecret, ShortCode: sim.ShortCode,
		PassKey: sim.PassKey, TillNumber: "5678901"}
	tillID := collectSim(t, till, hook, "+254112345678")
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+tillID)
	if st, err := till.CollectionStatus(ctx, gateway.Ref{ProviderRef: tillID}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("buy goods = %+v, %v", st, err)
	}

	if _, _, n := hook.Last(); n != 7 {
		t.Fatalf("%d callbacks; want 7 (five pushes settled, one sent twice again)", n)
	}
	// Unknown to Safaricom: an error, never "not found".
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: "ws_CO_0"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("unknown push = %+v, %v; want a lasting error", st, err)
	}
	if res, err := http.Post(srv.URL+"/_sim/settle/ws_CO_0", "", nil); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("settling an unknown push: %v, %v; want 404", res, err)
	} else {
		res.Body.Close()
	}
	if sim.Calls() == 0 {
		t.Fatal("no calls counted")
	}
}

func TestSimulator_SettlesAfterDelay(t *testing.T) {
	sim, _, c, hook := newSim(t)
	sim.SettleAfter = 50 * time.Millisecond
	ctx := context.Background()
	paid, declined, stuck := collectSim(t, c, hook, "+254712345678"), collectSim(t, c, hook, "+254712340029"), collectSim(t, c, hook, "+254712340129")
	_, bodies := waitCallbacks(t, hook, 2)
	got := map[string]string{}
	for _, b := range bodies {
		cb, _ := stk(t, b)
		got[cb.CheckoutRequestID] = cb.ResultCode.String()
	}
	if got[paid] != "0" || got[declined] != "1032" || len(got) != 2 {
		t.Fatalf("callbacks %v", got)
	}
	for id, want := range map[string]gateway.Outcome{paid: gateway.Succeeded, declined: gateway.Failed} {
		if st, err := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id}); err != nil || st.Outcome != want {
			t.Fatalf("%s after the delay: %+v, %v; want %s", id, st, err, want)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: stuck}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payment: %+v; want still pending", st)
	}
	if _, _, n := hook.Last(); n != 2 {
		t.Fatalf("%d callbacks; want 2", n)
	}
}

func TestSimulator_Refusals(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	col := collection(ref1, "+254712345678")
	col.NotifyURL = hook.URL
	for name, bad := range map[string]*Client{
		"wrong consumer secret": {BaseURL: srv.URL, ConsumerKey: sim.ConsumerKey, ConsumerSecret: "guess", ShortCode: sim.ShortCode, PassKey: sim.PassKey},
	} {
		if _, err := bad.Collect(ctx, col); err == nil || gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
			t.Errorf("%s: %v; want a lasting error, not sent", name, err)
		}
	}
	// Daraja answers a wrong passkey with a 500: transient, its words said.
	wrongKey := &Client{BaseURL: srv.URL, ConsumerKey: sim.ConsumerKey, ConsumerSecret: sim.ConsumerSecret, ShortCode: sim.ShortCode, PassKey: "guess"}
	if _, err := wrongKey.Collect(ctx, col); !gateway.IsTransient(err) || !strings.Contains(err.Error(), "Wrong credentials") {
		t.Errorf("wrong passkey: %v", err)
	}
	wrongCode := &Client{BaseURL: srv.URL, ConsumerKey: sim.ConsumerKey, ConsumerSecret: sim.ConsumerSecret, ShortCode: "600000", PassKey: sim.PassKey}
	if st, err := wrongCode.Collect(ctx, col); err != nil || st.Reason != "400 400.002.02: Bad Request - Invalid BusinessShortCode" {
		t.Errorf("wrong shortcode: %+v, %v", st, err)
	}
	if sim.Pushes() != 0 {
		t.Fatal("a refused push was recorded")
	}

	// Raw requests: a token, then Daraja's fields one by one.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/oauth/v1/generate?grant_type=client_credentials", nil)
	req.SetBasicAuth(sim.ConsumerKey, sim.ConsumerSecret)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("token: %v, %v", res, err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   any    `json:"expires_in"`
	}
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if tok.AccessToken == "" || tok.ExpiresIn != "3599" {
		t.Fatalf("token = %+v; want expires_in the string 3599", tok)
	}
	ts := time.Now().In(eat).Format(timestampLayout)
	signed := &Client{ShortCode: sim.ShortCode, PassKey: sim.PassKey}
	body := func(change func(m map[string]any)) string {
		m := map[string]any{"BusinessShortCode": sim.ShortCode, "Password": signed.password(ts), "Timestamp": ts,
			"TransactionType": PayBill, "Amount": "1", "PartyA": "254712345678", "PartyB": sim.ShortCode, "PhoneNumber": "254712345678",
			"CallBackURL": hook.URL, "AccountReference": "INV1042", "TransactionDesc": "Order 1042"}
		change(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	send := func(auth, body string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+pushPath, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
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
	for _, tc := range []struct {
		name, auth, body string
		code             int
		want             string
	}{
		{"no token", "", body(keep), http.StatusNotFound, "Invalid Access Token"},
		{"unknown token", "Bearer guess", body(keep), http.StatusNotFound, "Invalid Access Token"},
		{"not JSON", bearer, `{"Amount":`, http.StatusBadRequest, "Bad Request - Invalid JSON"},
		{"timestamp not signed", bearer, body(func(m map[string]any) { m["Timestamp"] = "20160216165628" }), http.StatusInternalServerError, "Wrong credentials"},
		{"timestamp format", bearer, body(func(m map[string]any) { m["Timestamp"] = "2016-02-16" }), http.StatusBadRequest, "Bad Request - Invalid Timestamp"},
		{"unknown type", bearer, body(func(m map[string]any) { m["TransactionType"] = "CustomerPay" }), http.StatusBadRequest, "Bad Request - Invalid TransactionType"},
		{"cents", bearer, body(func(m map[string]any) { m["Amount"] = "1.5" }), http.StatusBadRequest, "Bad Request - Invalid Amount"},
		{"zero", bearer, body(func(m map[string]any) { m["Amount"] = 0 }), http.StatusBadRequest, "Bad Request - Invalid Amount"},
		{"a + in PartyA", bearer, body(func(m map[string]any) { m["PartyA"] = "+254712345678" }), http.StatusBadRequest, "Bad Request - Invalid PartyA"},
		{"paybill not ours", bearer, body(func(m map[string]any) { m["PartyB"] = "600000" }), http.StatusBadRequest, "Bad Request - Invalid PartyB"},
		{"national PhoneNumber", bearer, body(func(m map[string]any) { m["PhoneNumber"] = "0712345678" }), http.StatusBadRequest, "Bad Request - Invalid PhoneNumber"},
		{"no CallBackURL", bearer, body(func(m map[string]any) { delete(m, "CallBackURL") }), http.StatusBadRequest, "Bad Request - Invalid CallBackURL"},
		{"reference too long", bearer, body(func(m map[string]any) { m["AccountReference"] = "INV1042INV104" }), http.StatusBadRequest, "Bad Request - Invalid AccountReference"},
		{"no description", bearer, body(func(m map[string]any) { m["TransactionDesc"] = "" }), http.StatusBadRequest, "Bad Request - Invalid TransactionDesc"},
		{"numbers as numbers", bearer, body(func(m map[string]any) {
			m["Amount"], m["PartyA"], m["PhoneNumber"], m["BusinessShortCode"], m["PartyB"] = 1, 254712345678, 254712345678, 174379, 174379
		}), http.StatusOK, ""},
		{"buy goods to a till", bearer, body(func(m map[string]any) { m["TransactionType"], m["PartyB"] = BuyGoods, "5678901" }), http.StatusOK, ""},
	} {
		code, e := send(tc.auth, tc.body)
		if code != tc.code || tc.want != "" && e["errorMessage"] != tc.want || tc.want == "" && e["ResponseCode"] != "0" {
			t.Errorf("%s: %d %v; want %d %q", tc.name, code, e, tc.code, tc.want)
		}
	}
	if sim.Pushes() != 2 {
		t.Fatalf("%d pushes; want the 2 accepted", sim.Pushes())
	}

	// Tokens expire after 3599 s, or are revoked: the client, whose clock
	// still holds its token, gets a new one on Daraja's refusal.
	issued := func() int { sim.mu.Lock(); defer sim.mu.Unlock(); return sim.issued }
	id := collectSim(t, c, hook, "+254712345678")
	n := issued()
	sim.mu.Lock()
	for k := range sim.tokens {
		sim.tokens[k] = time.Now().Add(-time.Second)
	}
	sim.mu.Unlock()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id}); err != nil || st.Outcome != gateway.Pending || issued() != n+1 {
		t.Fatalf("after expiry = %+v, %v (%d tokens, had %d)", st, err, issued(), n)
	}

	// Faults: transient, answered, nothing pushed; the OAuth endpoint is
	// spared; 500-initiate fails the push, not the query.
	pushes := sim.Pushes()
	for _, mode := range []string{"500", "malformed"} {
		gatewaytest.Control(t, srv.URL, "/_sim/fault?mode="+mode)
		if _, err := c.Collect(ctx, col); !gateway.IsTransient(err) || !gateway.ErrorOf(err).Answered {
			t.Errorf("fault %s: %v; want a transient error, answered", mode, err)
		}
		if _, err := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id}); !gateway.IsTransient(err) {
			t.Errorf("fault %s on the query: %v; want a transient error", mode, err)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500-initiate")
	if _, err := c.Collect(ctx, col); !gateway.IsTransient(err) {
		t.Errorf("fault on initiation: %v", err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{ProviderRef: id}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status during a fault on the push only = %+v, %v", st, err)
	}
	if sim.Pushes() != pushes {
		t.Fatalf("%d pushes; want none made during the faults", sim.Pushes()-pushes)
	}
	// Slow: no answer within the client's timeout, and the push is made
	// after it gave up, as Daraja may: its outcome is unknown (never a
	// reason to push through another gateway), and without the
	// CheckoutRequestID the service cannot ask about it.
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=slow&seconds=0.4")
	if _, err := c.Collect(ctx, col); !gateway.IsTransient(err) || gateway.ErrorOf(err).Answered || gateway.ErrorOf(err).NotSent {
		t.Errorf("slow push: %v; want transient, no answer, sent", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	for deadline := time.Now().Add(3 * time.Second); sim.Pushes() == pushes; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow push never arrived")
		}
	}
}

// TestPaidReference: the portal's paid callback (callback_success.json,
// 1.00 KES, push ws_CO_191220191020363925, receipt NLJ7RT61SV) proves its
// receipt only when it comes to the CallBackURL the push gave (the
// gateway's address and a segment of the push's kind, reference, amount
// and token), for that amount; it then names the payment by our
// reference. Any other callback proves nothing: an unsigned receipt could
// name another payment, and a refund reverse it.
func TestPaidReference(t *testing.T) {
	c := &Client{ConsumerSecret: "cs"}
	paid := gatewaytest.Golden(t, "callback_success.json")
	pushURL := func(c *Client, amount int64) string {
		p, err := c.encodePush(gateway.Collection{Reference: ref1, Amount: amount, Currency: "KES", Phone: "+254708374149", NotifyURL: "https://cauri.example/callbacks/gw_1"})
		if err != nil {
			t.Fatal(err)
		}
		return p.CallBackURL
	}
	if u := pushURL(c, 100); !strings.HasPrefix(u, "https://cauri.example/callbacks/gw_1/stk."+ref1+".1..") || strings.ContainsAny(u, "?#") {
		t.Fatalf("CallBackURL = %s; want the gateway's address and one segment", u)
	}
	ours := addressHeader(pushURL(c, 100))
	if push, receipt := c.PaidReference(ours, paid); push != "ws_CO_191220191020363925" || receipt != "NLJ7RT61SV" {
		t.Fatalf("PaidReference = %q, %q; want the callback's push and receipt", push, receipt)
	}
	if ref, err := c.CallbackReference(ours, paid); err != nil || ref != ref1 {
		t.Fatalf("CallbackReference = %q, %v; want our reference", ref, err)
	}
	// The same parts with another kind's token (a B2C result address for
	// a reference and amount): not a push's.
	q := addressParts(pushURL(c, 100))
	q.Set(tokenKey, c.tokenFor("result", ref1, "1"))
	asResult := resultHeader(q)
	cancelled := gatewaytest.Golden(t, "callback_cancelled.json")
	for name, cb := range map[string]struct {
		h    http.Header
		body []byte
	}{
		"no token (an old push's address, or a forgery)": {http.Header{}, paid},
		"another secret's token":                         {addressHeader(pushURL(&Client{ConsumerSecret: "other"}, 100)), paid},
		"another amount":                                 {addressHeader(pushURL(c, 150000)), paid},
		"another kind's token":                           {asResult, paid},
		"not paid":                                       {ours, cancelled},
		"no receipt": {ours, []byte(`{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,` +
			`"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1}]}}}}`)},
		"no amount": {ours, []byte(`{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,` +
			`"CallbackMetadata":{"Item":[{"Name":"MpesaReceiptNumber","Value":"NLJ7RT61SV"}]}}}}`)},
		"a receipt as the push's id": {ours, []byte(`{"Body":{"stkCallback":{"CheckoutRequestID":"NLJ7RT61SV","ResultCode":0,` +
			`"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1},{"Name":"MpesaReceiptNumber","Value":"QKL1234XYZ"}]}}}}`)},
		"not a receipt": {ours, []byte(`{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,` +
			`"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1},{"Name":"MpesaReceiptNumber","Value":"ws_CO_1"}]}}}}`)},
	} {
		if push, receipt := c.PaidReference(cb.h, cb.body); push != "" || receipt != "" {
			t.Errorf("%s: PaidReference = %q, %q; want none", name, push, receipt)
		}
	}
	// A wrong token on a result address: ignored altogether.
	for _, h := range []http.Header{addressHeader(pushURL(&Client{ConsumerSecret: "other"}, 100)), asResult} {
		if ref, err := c.CallbackReference(h, paid); err == nil {
			t.Fatalf("a wrong token read as %q", ref)
		}
	}
	// An address Cauri did not make (more parts, other characters): ignored.
	for _, seg := range []string{"stk." + ref1 + ".1...x.y", "stk." + ref1 + ".1..\x00.tok", "stk." + ref1 + ".1..é.tok", "stk"} {
		h := http.Header{}
		h.Set(gateway.CallbackPathHeader, seg)
		if ref, err := c.CallbackReference(h, paid); err == nil {
			t.Errorf("segment %q read as %q; want ignored", seg, ref)
		}
		if push, receipt := c.PaidReference(h, paid); push != "" || receipt != "" {
			t.Errorf("segment %q proved %q, %q", seg, push, receipt)
		}
	}
	// Unsigned: only Safaricom's id, a signal.
	if ref, err := c.CallbackReference(http.Header{}, paid); err != nil || ref != "ws_CO_191220191020363925" {
		t.Fatalf("unsigned callback = %q, %v", ref, err)
	}
}

// TestResultAddress_BlockedWords: Daraja blocks callback addresses holding
// "MPesa", "M-Pesa" or "Safaricom" in any case (testdata/SOURCES.md,
// "Result addresses"): a push or a payout through such an address is not
// sent, and says why; the connector's own segment holds none.
func TestResultAddress_BlockedWords(t *testing.T) {
	c := &Client{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "174379", PassKey: "pk", BaseURL: "http://127.0.0.1:1"}
	for _, notify := range []string{"https://pay.example/M-Pesa/callbacks/gw_1", "https://mpesa.shop.example/callbacks/gw_1", "https://pay.example/callbacks/SafariCom"} {
		col := collection(ref1, "+254712345678")
		col.NotifyURL = notify
		st, err := c.Collect(context.Background(), col)
		if err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Daraja blocks") {
			t.Errorf("%s: %+v, %v; want not sent, the word named", notify, st, err)
		}
	}
	for _, kind := range []string{pushKind, "result", "timeout", "status", "status_timeout", "reversal", "reversal_timeout", "reversal_status", "reversed_status"} {
		u, err := c.resultURLFor("https://pay.example/callbacks/gw_1", kind, ref1, "1500", "NLJ7RT61SV")
		if err != nil || strings.Contains(strings.ToLower(u), "pesa") || strings.Contains(strings.ToLower(u), "safaricom") {
			t.Errorf("%s: %s, %v", kind, u, err)
		}
	}
}
