package mtnmomo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// ref1 is the reference of the fixtures (requesttopay_request.json).
const ref1 = "0f8fad5b-d9cb-469f-a165-70867728950e"

func collection(ref, phone string) gateway.Collection {
	return gateway.Collection{Reference: ref, Amount: 100, Currency: "UGX", Phone: phone, Operator: "mtnuganda", Country: "UG",
		Description: "Order 1042"}
}

// TestEncodeRequestToPay_Golden holds the request to pay to the shape of
// MTN's API reference (testdata/SOURCES.md).
func TestEncodeRequestToPay_Golden(t *testing.T) {
	col := collection(ref1, "+256772123456")
	col.Email, col.Name, col.ReturnURL, col.NotifyURL = "awa@example.com", "Awa", "https://example.com/return", "https://cauri.example/callbacks/g1"
	mine, documented := gatewaytest.DocumentedFields(t, encodeRequestToPay(col), "requesttopay_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented fields", mine)
	}
	// Amounts are strings in major units: none for UGX, the decimals of a currency that has some.
	col.Currency, col.Amount = "GHS", 1550
	if r := encodeRequestToPay(col); r.Amount != "15.5" || r.Currency != "GHS" {
		t.Fatalf("amount = %q %s; want 15.5 GHS", r.Amount, r.Currency)
	}
	// No description: our reference, in both histories; a long one is cut to one line.
	col.Description = ""
	if r := encodeRequestToPay(col); r.PayerMessage != ref1 || r.PayeeNote != ref1 {
		t.Fatalf("notes = %q, %q; want the reference", r.PayerMessage, r.PayeeNote)
	}
	col.Description = "Commande n° 1042\n\tboutique " + strings.Repeat("é", 200)
	if r := encodeRequestToPay(col); !strings.HasPrefix(r.PayerMessage, "Commande n° 1042 boutique éé") || len([]rune(r.PayerMessage)) != noteMax {
		t.Fatalf("note = %q", r.PayerMessage)
	}
}

func TestCollect_Headers(t *testing.T) {
	token := gatewaytest.Golden(t, "token.json")
	srv := gatewaytest.NewRecorder(t, func(r *http.Request) (int, []byte) {
		if strings.HasSuffix(r.URL.Path, "/token/") {
			return http.StatusOK, token
		}
		return http.StatusAccepted, nil
	})
	c := &Client{BaseURL: srv.URL + "/", Environment: "mtnuganda", CollectionKey: "col-key", DisbursementKey: "dis-key",
		APIUser: "2bf15487-2309-46e8-82e9-1f658cf3a82c", APIKey: "api-key"}
	col := collection(ref1, "+256772123456")
	col.NotifyURL = "https://cauri.example/callbacks/gw_1"
	if st, err := c.Collect(context.Background(), col); err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want the token's and the request to pay", len(reqs))
	}
	tok, rtp := reqs[0], reqs[1]
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("2bf15487-2309-46e8-82e9-1f658cf3a82c:api-key"))
	if tok.Method != http.MethodPost || tok.Path != "/collection/token/" || tok.Header.Get("Authorization") != basic ||
		tok.Header.Get("Ocp-Apim-Subscription-Key") != "col-key" || len(tok.Body) != 0 {
		t.Fatalf("token request = %s %s %v %q", tok.Method, tok.Path, tok.Header, tok.Body)
	}
	for k, want := range map[string]string{"Authorization": "Bearer " + gatewaytest.DocumentedToken(t), "X-Reference-Id": ref1,
		"X-Target-Environment": "mtnuganda", "X-Callback-Url": col.NotifyURL, "Ocp-Apim-Subscription-Key": "col-key",
		"Content-Type": "application/json"} {
		if got := rtp.Header.Get(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	if rtp.Method != http.MethodPost || rtp.Path != "/collection/v1_0/requesttopay" {
		t.Fatalf("request to pay = %s %s", rtp.Method, rtp.Path)
	}
	var sent map[string]any
	if err := json.Unmarshal(rtp.Body, &sent); err != nil {
		t.Fatal(err)
	}
	mine, _ := gatewaytest.DocumentedFields(t, sent, "requesttopay_request.json")
	if len(mine) != 6 {
		t.Fatalf("sent %v", mine)
	}

	// No callback address: no X-Callback-Url; no environment: the sandbox's.
	c.Environment, col.NotifyURL, col.Reference = "", "", "1f8fad5b-d9cb-469f-a165-70867728950e"
	if _, err := c.Collect(context.Background(), col); err != nil {
		t.Fatal(err)
	}
	last := srv.Requests()[2]
	if _, ok := last.Header["X-Callback-Url"]; ok || last.Header.Get("X-Target-Environment") != "sandbox" {
		t.Fatalf("headers = %v; want no X-Callback-Url and the sandbox", last.Header)
	}
}

// newAnswers is a client facing fixed answers, tokens given for both products.
func newAnswers(t *testing.T) (*gatewaytest.Answers, *Client) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set("POST /collection/token/", http.StatusOK, gatewaytest.Golden(t, "token.json"))
	srv.Set("POST /disbursement/token/", http.StatusOK, gatewaytest.Golden(t, "token.json"))
	return srv, &Client{BaseURL: srv.URL, Environment: "mtnuganda", CollectionKey: "ck", DisbursementKey: "dk", APIUser: "u", APIKey: "k"}
}

// fakeMTN is an MTN that gives numbered tokens and accepts, on the API,
// only those it has not revoked.
type fakeMTN struct {
	mu              sync.Mutex
	issued          int
	validFrom       int  // tokens numbered below are refused
	refuseAll       bool // every token refused
	tokens, answers int
}

func (f *fakeMTN) serve(r *http.Request) (int, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/token/") {
		f.issued++
		f.tokens++
		b, _ := json.Marshal(map[string]any{"access_token": "tok-" + string(rune('a'+f.issued)), "token_type": "access_token", "expires_in": 3600})
		return http.StatusOK, b
	}
	f.answers++
	n := int(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tok-")[0] - 'a')
	if f.refuseAll || n < f.validFrom {
		return http.StatusUnauthorized, []byte(`{"statusCode":401,"message":"Unauthorized. Access token is missing or invalid."}`)
	}
	if r.Method == http.MethodGet {
		return http.StatusOK, []byte(`{"status":"PENDING"}`)
	}
	return http.StatusAccepted, nil
}

func TestToken_CachedAndRenewed(t *testing.T) {
	f := &fakeMTN{}
	srv := gatewaytest.NewRecorder(t, f.serve)
	now := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	c := &Client{BaseURL: srv.URL, CollectionKey: "ck", APIUser: "u", APIKey: "k",
		Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }}
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	ctx := context.Background()
	tokens := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.tokens }
	lastAuth := func() string { r := srv.Requests(); return r[len(r)-1].Header.Get("Authorization") }

	// Cached: one token for many calls, concurrent ones included.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				c.Collect(ctx, collection(ref1, "+256772123456"))
			} else {
				c.CollectionStatus(ctx, gateway.Ref{Reference: ref1})
			}
		}()
	}
	wg.Wait()
	n := tokens()
	if n < 1 || n > 8 {
		t.Fatalf("%d tokens", n)
	}
	before := tokens()
	for range 3 {
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("status = %+v, %v", st, err)
		}
	}
	if tokens() != before {
		t.Fatalf("%d tokens after 3 reads with a fresh one; want %d", tokens(), before)
	}
	held := lastAuth()

	// Still valid until TokenMargin before its expiry, renewed after.
	advance(time.Hour - TokenMargin - time.Second)
	c.CollectionStatus(ctx, gateway.Ref{Reference: ref1})
	if tokens() != before || lastAuth() != held {
		t.Fatalf("token renewed %v before its margin", TokenMargin)
	}
	advance(2 * time.Second)
	c.CollectionStatus(ctx, gateway.Ref{Reference: ref1})
	if tokens() != before+1 || lastAuth() == held {
		t.Fatalf("token not renewed within %v of its expiry (%d tokens)", TokenMargin, tokens())
	}

	// Revoked (a new API key was generated): the 401 drops it, and the call
	// goes through with a new one.
	f.mu.Lock()
	f.validFrom = f.issued + 1
	f.mu.Unlock()
	if st, err := c.Collect(ctx, collection(ref1, "+256772123456")); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("after a revocation = %+v, %v", st, err)
	}
	if tokens() != before+2 {
		t.Fatalf("%d tokens; want a new one after the 401", tokens())
	}
	reqs := srv.Requests()
	if got := []string{reqs[len(reqs)-3].Path, reqs[len(reqs)-2].Path, reqs[len(reqs)-1].Path}; strings.Join(got, " ") !=
		"/collection/v1_0/requesttopay /collection/token/ /collection/v1_0/requesttopay" {
		t.Fatalf("calls = %v; want refused, new token, sent again", got)
	}
	if c.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); tokens() != before+2 {
		t.Fatal("the new token was not kept")
	}

	// Refused whatever the token: a lasting error, after one new token.
	f.mu.Lock()
	f.refuseAll = true
	f.mu.Unlock()
	_, err := c.Collect(ctx, collection(ref1, "+256772123456"))
	if err == nil || gateway.IsTransient(err) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("refused tokens: %v; want a lasting error", err)
	}
	if tokens() != before+3 {
		t.Fatalf("%d tokens; want exactly one more", tokens())
	}
	// The refused token is not kept: the next call asks for another.
	f.mu.Lock()
	f.refuseAll = false
	f.mu.Unlock()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1}); err != nil || st.Outcome != gateway.Pending || tokens() != before+4 {
		t.Fatalf("after the refusal = %+v, %v (%d tokens)", st, err, tokens())
	}
}

func TestCollect_RefusalsAndErrors(t *testing.T) {
	srv, c := newAnswers(t)
	ctx := context.Background()
	col := collection(ref1, "+256772123456")

	// Refused before anything is sent.
	for name, bad := range map[string]gateway.Collection{
		"reference not a UUID": collection("FAC-2024-01", "+256772123456"),
		"national number":      collection(ref1, "0772123456"),
		"letters":              collection(ref1, "+25677212345x"),
		"zero amount":          func() gateway.Collection { c := col; c.Amount = 0; return c }(),
		"a card":               func() gateway.Collection { c := col; c.Card, c.Phone = true, ""; return c }(),
	} {
		if st, err := c.Collect(ctx, bad); err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "not sent to MTN MoMo") {
			t.Errorf("%s = %+v, %v; want failed, not sent", name, st, err)
		}
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "FAC-2024-01"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("status of a reference never sent = %+v, %v", st, err)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("calls %v; want none", calls)
	}

	// The token refused: lasting, and the request to pay never left.
	for _, fixture := range []string{"token_refused.json", "error_subscription_key.json"} {
		srv.Set("POST /collection/token/", http.StatusUnauthorized, gatewaytest.Golden(t, fixture))
		_, err := c.Collect(ctx, col)
		if e := gateway.ErrorOf(err); e == nil || e.Transient || !e.NotSent {
			t.Errorf("%s: %v; want a lasting error, not sent", fixture, err)
		}
	}
	if _, err := c.Collect(ctx, col); !strings.Contains(err.Error(), "invalid subscription key") {
		t.Fatalf("error %q does not say MTN's words", err)
	}
	// The token endpoint failing: transient, and nothing sent.
	for _, tc := range []struct {
		code int
		body string
	}{{http.StatusInternalServerError, `{"message":"internal error"}`}, {http.StatusOK, `{"access_token": `}, {http.StatusOK, `{}`}} {
		srv.Set("POST /collection/token/", tc.code, []byte(tc.body))
		_, err := c.Collect(ctx, col)
		if e := gateway.ErrorOf(err); e == nil || !e.Transient || !e.NotSent {
			t.Errorf("token %d %s: %v; want transient, not sent", tc.code, tc.body, err)
		}
	}
	srv.Set("POST /collection/token/", http.StatusOK, gatewaytest.Golden(t, "token.json"))
	if calls := srv.Calls(); strings.Contains(strings.Join(calls, " "), "requesttopay") {
		t.Fatalf("calls %v; want no request to pay without a token", calls)
	}

	// Answers that conclude nothing, the initiation may have been queued:
	// answered (the suite's cases do not say), which movement.Send sends
	// again under the same X-Reference-Id.
	for _, tc := range []struct {
		code int
		body string
	}{{http.StatusInternalServerError, `{"code":"INTERNAL_PROCESSING_ERROR","message":"An internal error occurred."}`},
		{http.StatusServiceUnavailable, ``}, {http.StatusOK, `{"status": `}} {
		srv.Set("POST /collection/v1_0/requesttopay", tc.code, []byte(tc.body))
		srv.Set("POST /disbursement/v1_0/transfer", tc.code, []byte(tc.body))
		for name, call := range map[string]func() (gateway.Status, error){
			"collect": func() (gateway.Status, error) { return c.Collect(ctx, col) },
			"payout":  func() (gateway.Status, error) { return c.Payout(ctx, payout(payRef, "+250788123456")) },
		} {
			_, err := call()
			if e := gateway.ErrorOf(err); e == nil || !e.Transient || !e.Answered || e.NotSent {
				t.Errorf("%s %d %s: %v; want transient, answered, sent", name, tc.code, tc.body, err)
			}
		}
	}

	// No collection key, no address: lasting, nothing sent.
	for name, bad := range map[string]*Client{
		"no key":     {BaseURL: srv.URL, APIUser: "u", APIKey: "k"},
		"no address": {CollectionKey: "ck", APIUser: "u", APIKey: "k"},
	} {
		if _, err := bad.Collect(ctx, col); err == nil || gateway.IsTransient(err) {
			t.Errorf("%s: %v; want a lasting error", name, err)
		}
	}
	if !c.IdempotentCollect() {
		t.Fatal("requests to pay not taken for idempotent")
	}
}

// newSim starts the simulator on loopback and a client facing it; hook
// receives the callbacks of the collections and payouts it sends.
func newSim(t *testing.T) (sim *Simulator, srv *httptest.Server, c *Client, hook *gatewaytest.Receiver) {
	hook = gatewaytest.NewReceiver(t)
	sim = &Simulator{APIUser: "2bf15487-2309-46e8-82e9-1f658cf3a82c", APIKey: "sim-api-key", CollectionKey: "sim-col", DisbursementKey: "sim-dis"}
	srv = httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c = &Client{BaseURL: srv.URL, Environment: "mtnuganda", CollectionKey: sim.CollectionKey, DisbursementKey: sim.DisbursementKey,
		APIUser: sim.APIUser, APIKey: sim.APIKey, HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return sim, srv, c, hook
}

// simCount counts the simulator's transactions of a kind.
func simCount(s *Simulator, kind string) int {
	return len(s.Find(func(m *sim.Movement[simPayment]) bool { return m.Data.kind == kind }))
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

const (
	simRef1 = "11111111-2222-4333-8444-555555555555"
	simRef2 = "21111111-2222-4333-8444-555555555555"
	simRef3 = "31111111-2222-4333-8444-555555555555"
	simRef4 = "41111111-2222-4333-8444-555555555555"
	simRef5 = "51111111-2222-4333-8444-555555555555"
)

func TestCollect_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	collect := func(ref, phone string) gateway.Collection {
		col := collection(ref, phone)
		col.NotifyURL = hook.URL + "/callbacks/gw_mtn"
		return col
	}

	// Sent twice under one reference: one payment, both pending.
	for range 2 {
		if st, err := c.Collect(ctx, collect(simRef1, "+256772123456")); err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
			t.Fatalf("collect = %+v, %v", st, err)
		}
	}
	if n := simCount(sim, "requesttopay"); n != 1 {
		t.Fatalf("%d payments for one reference", n)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("before settling = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+simRef1)
	st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1})
	if err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("after settling = %+v, %v", st, err)
	}
	reqs, bodies := waitCallbacks(t, hook, 1)
	if reqs[0].Method != http.MethodPut || reqs[0].URL.Path != "/callbacks/gw_mtn" || reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("callback = %s %s %v; want a PUT of JSON to the X-Callback-Url", reqs[0].Method, reqs[0].URL, reqs[0].Header)
	}
	if ref, err := c.CallbackReference(reqs[0].Header, bodies[0]); err != nil || ref != simRef1 {
		t.Fatalf("callback reference = %q, %v", ref, err)
	}
	var cb map[string]any
	json.Unmarshal(bodies[0], &cb)
	if cb["status"] != "SUCCESSFUL" || cb["financialTransactionId"] != st.ProviderRef || cb["amount"] != "100" ||
		cb["payer"].(map[string]any)["partyId"] != "256772123456" {
		t.Fatalf("callback body = %s", bodies[0])
	}
	// Settled again: nothing changes, no second callback; a duplicate on demand.
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+simRef1+"?status=FAILED")
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+simRef1)
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+simRef1+"?status=FAILED")
	_, bodies = waitCallbacks(t, hook, 3)
	if string(bodies[1]) != string(bodies[0]) || !strings.Contains(string(bodies[2]), `"status":"FAILED"`) {
		t.Fatalf("callbacks = %s", bodies)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1}); st.Outcome != gateway.Succeeded {
		t.Fatalf("a claimed status changed the payment: %+v", st)
	}
	// After settling, the same reference is still a duplicate: no second payment.
	if st, _ := c.Collect(ctx, collect(simRef1, "+256772123456")); st.Outcome != gateway.Pending || simCount(sim, "requesttopay") != 1 {
		t.Fatalf("again after settling = %+v", st)
	}

	// The payer declines; the payer lacks the funds (not the merchant's low balance).
	for _, tc := range []struct {
		ref, phone, reason string
	}{{simRef2, "+256770000029", "APPROVAL_REJECTED"}, {simRef3, "+256770000049", "NOT_ENOUGH_FUNDS"}} {
		if st, err := c.Collect(ctx, collect(tc.ref, tc.phone)); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s = %+v, %v", tc.phone, st, err)
		}
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+tc.ref)
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: tc.ref}); err != nil ||
			st != (gateway.Status{Outcome: gateway.Failed, Reason: tc.reason}) {
			t.Fatalf("%s settled = %+v, %v; want failed %s", tc.phone, st, err, tc.reason)
		}
	}
	// Refused at initiation: nothing recorded.
	if st, err := c.Collect(ctx, collect(simRef4, "+256770000039")); err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "400 PAYER_NOT_FOUND") {
		t.Fatalf("refused = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef4}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("refused, read = %+v, %v", st, err)
	}
	// Never settles, no callback.
	c.Collect(ctx, collect(simRef5, "+256770000129"))
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+simRef5)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef5}); st.Outcome != gateway.Pending {
		t.Fatalf("a lost payment = %+v; want pending", st)
	}
	// The payer's number is checked: MSISDN with its country code.
	bad := collect("61111111-2222-4333-8444-555555555555", "+256772123456")
	bad.Currency = "ugx"
	if st, _ := c.Collect(ctx, bad); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_CURRENCY") {
		t.Fatalf("bad currency = %+v", st)
	}
	bad.Currency, bad.NotifyURL = "UGX", "callbacks/relative"
	if st, _ := c.Collect(ctx, bad); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_CALLBACK_URL_HOST") {
		t.Fatalf("bad callback = %+v", st)
	}
	if _, _, n := hook.Last(); n != 5 {
		t.Fatalf("%d callbacks; want 5 (three payments settled, one sent twice again)", n)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown = %+v, %v", st, err)
	}
	if res, err := http.Post(srv.URL+"/_sim/settle/91111111-2222-4333-8444-555555555555", "", nil); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("settling an unknown payment: %v, %v; want 404", res, err)
	} else {
		res.Body.Close()
	}
}

func TestSimulator_Refusals(t *testing.T) {
	sim, srv, c, _ := newSim(t)
	ctx := context.Background()
	col := collection(simRef1, "+256772123456")
	for name, bad := range map[string]*Client{
		"wrong API key":          {BaseURL: srv.URL, CollectionKey: sim.CollectionKey, APIUser: sim.APIUser, APIKey: "guess"},
		"wrong subscription key": {BaseURL: srv.URL, CollectionKey: "guess", APIUser: sim.APIUser, APIKey: sim.APIKey},
		"unknown environment":    {BaseURL: srv.URL, Environment: "mtnmars", CollectionKey: sim.CollectionKey, APIUser: sim.APIUser, APIKey: sim.APIKey},
	} {
		if _, err := bad.Collect(ctx, col); err == nil || gateway.IsTransient(err) {
			t.Errorf("%s: %v; want a lasting error", name, err)
		}
	}
	if simCount(sim, "requesttopay") != 0 {
		t.Fatal("a refused request was recorded")
	}

	// Raw requests: a token, then MTN's headers one by one.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/collection/token/", nil)
	req.SetBasicAuth(sim.APIUser, sim.APIKey)
	req.Header.Set("Ocp-Apim-Subscription-Key", sim.CollectionKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("token: %v, %v", res, err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if tok.AccessToken == "" || tok.ExpiresIn != 3600 {
		t.Fatalf("token = %+v", tok)
	}
	body := `{"amount":"100","currency":"UGX","externalId":"x","payer":{"partyIdType":"MSISDN","partyId":"256772123456"}}`
	send := func(mod func(h http.Header), body string) (int, map[string]string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/collection/v1_0/requesttopay", strings.NewReader(body))
		req.Header = http.Header{"Authorization": {"Bearer " + tok.AccessToken}, "Ocp-Apim-Subscription-Key": {sim.CollectionKey},
			"X-Target-Environment": {"sandbox"}, "X-Reference-Id": {simRef2}, "Content-Type": {"application/json"}}
		mod(req.Header)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var e map[string]string
		json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e
	}
	for _, tc := range []struct {
		name string
		mod  func(h http.Header)
		body string
		code int
		want string
	}{
		{"no environment", func(h http.Header) { h.Del("X-Target-Environment") }, body, http.StatusForbidden, "NOT_ALLOWED_TARGET_ENVIRONMENT"},
		{"no reference", func(h http.Header) { h.Del("X-Reference-Id") }, body, http.StatusBadRequest, "BAD_REQUEST"},
		{"reference not a UUID", func(h http.Header) { h.Set("X-Reference-Id", "FAC-1") }, body, http.StatusBadRequest, "BAD_REQUEST"},
		{"no token", func(h http.Header) { h.Del("Authorization") }, body, http.StatusUnauthorized, ""},
		{"amount as a number", func(http.Header) {}, strings.Replace(body, `"100"`, `100`, 1), http.StatusBadRequest, "BAD_REQUEST"},
		{"zero amount", func(http.Header) {}, strings.Replace(body, `"100"`, `"0.00"`, 1), http.StatusBadRequest, "BAD_REQUEST"},
		{"payee, not payer", func(http.Header) {}, strings.Replace(body, `"payer"`, `"payee"`, 1), http.StatusBadRequest, "BAD_REQUEST"},
		{"a + in the number", func(http.Header) {}, strings.Replace(body, `"256`, `"+256`, 1), http.StatusBadRequest, "PAYER_NOT_FOUND"},
		{"accepted", func(http.Header) {}, body, http.StatusAccepted, ""},
		{"duplicate", func(http.Header) {}, body, http.StatusConflict, "RESOURCE_ALREADY_EXIST"},
	} {
		if code, e := send(tc.mod, tc.body); code != tc.code || e["code"] != tc.want {
			t.Errorf("%s: %d %v; want %d %s", tc.name, code, e, tc.code, tc.want)
		}
	}
	// A collection token is not a disbursement one.
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/disbursement/v1_0/transfer/"+simRef2, nil)
	req.Header = http.Header{"Authorization": {"Bearer " + tok.AccessToken}, "Ocp-Apim-Subscription-Key": {sim.DisbursementKey},
		"X-Target-Environment": {"sandbox"}}
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("collection token on disbursement: %v, %v", res, err)
	} else {
		res.Body.Close()
	}

	// Tokens expire after an hour, or are revoked: the client gets a new one.
	if _, err := c.Collect(ctx, col); err != nil {
		t.Fatal(err)
	}
	issued := func() int { sim.mu.Lock(); defer sim.mu.Unlock(); return sim.issued }
	n := issued()
	sim.mu.Lock()
	for k, st := range sim.tokens {
		st.expires = time.Now().Add(-time.Second)
		sim.tokens[k] = st
	}
	sim.mu.Unlock()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1}); err != nil || st.Outcome != gateway.Pending || issued() != n+1 {
		t.Fatalf("after expiry = %+v, %v (%d tokens, had %d)", st, err, issued(), n)
	}
	sim.mu.Lock()
	sim.tokens = nil
	sim.mu.Unlock()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1}); err != nil || st.Outcome != gateway.Pending || issued() != n+2 {
		t.Fatalf("after revocation = %+v, %v", st, err)
	}

	// Faults: transient; the token endpoint is spared.
	for _, mode := range []string{"500", "malformed", "slow&seconds=2"} {
		gatewaytest.Control(t, srv.URL, "/_sim/fault?mode="+mode)
		if _, err := c.Collect(ctx, collection(simRef3, "+256772123456")); !gateway.IsTransient(err) {
			t.Errorf("fault %s: %v; want a transient error", mode, err)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500-initiate")
	if _, err := c.Collect(ctx, collection(simRef3, "+256772123456")); !gateway.IsTransient(err) {
		t.Errorf("fault on initiation: %v", err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status during a fault on POST only = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef3}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("after the faults = %+v, %v; want the faulted request not recorded", st, err)
	}
	if sim.Calls() == 0 {
		t.Fatal("no calls counted")
	}
}

func TestSimulator_SettlesAfterDelay(t *testing.T) {
	sim, _, c, hook := newSim(t)
	sim.SettleAfter = 50 * time.Millisecond
	ctx := context.Background()
	paid, stuck := collection(simRef1, "+256772123456"), collection(simRef2, "+256770000129")
	paid.NotifyURL, stuck.NotifyURL = hook.URL, hook.URL
	for _, col := range []gateway.Collection{paid, stuck} {
		if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("%s = %+v, %v", col.Phone, st, err)
		}
	}
	_, bodies := waitCallbacks(t, hook, 1)
	if ref, err := c.CallbackReference(nil, bodies[0]); err != nil || ref != simRef1 {
		t.Fatalf("callback = %q, %v", ref, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef1}); st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay: %+v", st)
	}
	time.Sleep(100 * time.Millisecond)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: simRef2}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payment: %+v; want still pending", st)
	}
	if _, _, n := hook.Last(); n != 1 {
		t.Fatalf("%d callbacks; want 1", n)
	}
}
