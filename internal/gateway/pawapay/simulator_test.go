package pawapay

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// simEnv is the connector facing its simulator over real HTTP on loopback,
// with a receiver for the simulator's callbacks.
type simEnv struct {
	sim       *Simulator
	srv       *httptest.Server
	client    *Client
	callbacks *gatewaytest.Receiver
}

func newSimEnv(t *testing.T) *simEnv {
	e := &simEnv{sim: &Simulator{Token: "sandbox-token"}, callbacks: gatewaytest.NewReceiver(t)}
	e.sim.CallbackURL = e.callbacks.URL
	e.srv = httptest.NewServer(e.sim)
	t.Cleanup(e.srv.Close)
	e.client = &Client{BaseURL: e.srv.URL, Token: "sandbox-token", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return e
}

func (e *simEnv) control(t *testing.T, path string) {
	t.Helper()
	gatewaytest.Control(t, e.srv.URL, path)
}

func (e *simEnv) status(t *testing.T, ref string) gateway.Status {
	t.Helper()
	st, err := e.client.CollectionStatus(context.Background(), gateway.Ref{Reference: ref})
	if err != nil {
		t.Fatalf("status of %s: %v", ref, err)
	}
	return st
}

// raw sends the simulator a request as pawaPay's clients would and returns
// the HTTP status and the failure code of its answer.
func (e *simEnv) raw(t *testing.T, path, body string) (int, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sandbox-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ans map[string]any
	json.NewDecoder(res.Body).Decode(&ans)
	code := ""
	if f, ok := ans["failureReason"].(map[string]any); ok {
		code, _ = f["failureCode"].(string)
	}
	return res.StatusCode, code, ans
}

func collection(ref, phone string) gateway.Collection {
	return gateway.Collection{Reference: ref, Amount: 5000, Currency: "XOF", Phone: phone, Operator: "WAVE_SEN", Description: "Commande 1042",
		ReturnURL: "https://pay.example.com/cs_1"}
}

const (
	ref1 = "11111111-2222-4333-8444-555555555555"
	ref2 = "21111111-2222-4333-8444-555555555555"
	ref3 = "31111111-2222-4333-8444-555555555555"
)

func TestClient_AgainstSimulator(t *testing.T) {
	ctx := context.Background()
	e := newSimEnv(t)
	t.Run("WaveRedirectsAndSettles", func(t *testing.T) {
		st, err := e.client.Collect(ctx, collection(ref1, "+221771234567"))
		if err != nil || st.Outcome != gateway.Pending || st.RedirectURL != e.srv.URL+"/_sim/pay/"+ref1 {
			t.Fatalf("collect = %+v, %v; want pending with the simulated Wave page", st, err)
		}
		if st, _ := e.client.Collect(ctx, collection(ref1, "+221771234567")); st.Outcome != gateway.Pending {
			t.Fatalf("duplicate = %+v; want pending (DUPLICATE_IGNORED)", st)
		}
		if st := e.status(t, ref1); st.Outcome != gateway.Pending || st.RedirectURL == "" {
			t.Fatalf("status before settling = %+v; want pending with the page", st)
		}
		e.control(t, "/_sim/settle/"+ref1)
		if st := e.status(t, ref1); st.Outcome != gateway.Succeeded || !strings.HasPrefix(st.ProviderRef, "SIM") || st.RedirectURL != "" {
			t.Fatalf("status after settling = %+v", st)
		}
		_, cbs := e.callbacks.Received()
		if len(cbs) != 1 {
			t.Fatalf("%d callbacks; want 1", len(cbs))
		}
		if ref, err := e.client.CallbackReference(nil, cbs[0]); err != nil || ref != ref1 {
			t.Fatalf("callback reference = %q, %v", ref, err)
		}
	})
	t.Run("PayerFails", func(t *testing.T) {
		e.client.Collect(ctx, collection(ref2, "+221770000029"))
		e.control(t, "/_sim/settle/"+ref2)
		if st := e.status(t, ref2); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "PAYER_NOT_FOUND") {
			t.Fatalf("status = %+v; want failed, PAYER_NOT_FOUND", st)
		}
	})
	t.Run("RefusedAtInitiation", func(t *testing.T) {
		if st, err := e.client.Collect(ctx, collection(ref3, "+221770000039")); err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_PHONE_NUMBER") {
			t.Fatalf("collect = %+v, %v", st, err)
		}
		c := collection("41111111-2222-4333-8444-555555555555", "+221771234567")
		c.Operator = "NOPE_SEN"
		if _, err := e.client.Collect(ctx, c); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
			t.Fatalf("a provider active-conf does not list: %v; want not sent", err)
		}
		c.Reference, c.Operator = "not-a-uuid", "WAVE_SEN"
		if st, _ := e.client.Collect(ctx, c); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INVALID_PARAMETER") {
			t.Fatalf("bad depositId = %+v", st)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		if st := e.status(t, "91111111-2222-4333-8444-555555555555"); st.Outcome != gateway.NotFound {
			t.Fatalf("unknown deposit = %+v", st)
		}
	})
	t.Run("WrongToken", func(t *testing.T) {
		bad := &Client{BaseURL: e.srv.URL, Token: "wrong"}
		if _, err := bad.Collect(ctx, collection("51111111-2222-4333-8444-555555555555", "+221771234567")); err == nil || gateway.IsTransient(err) {
			t.Fatalf("wrong token: %v; want a lasting error", err)
		}
	})
	t.Run("Faults", func(t *testing.T) {
		for _, mode := range []string{"500", "malformed", "slow&seconds=2"} {
			e.control(t, "/_sim/fault?mode="+mode)
			_, err := e.client.Collect(ctx, collection("61111111-2222-4333-8444-555555555555", "+221771234567"))
			if !gateway.IsTransient(err) {
				t.Errorf("fault %s: %v; want a transient error", mode, err)
			}
		}
		e.control(t, "/_sim/fault?mode=none")
		if st := e.status(t, ref1); st.Outcome != gateway.Succeeded {
			t.Fatalf("after the faults: %+v", st)
		}
	})
	t.Run("DuplicateCallback", func(t *testing.T) {
		e.control(t, "/_sim/callback/"+ref1)
		_, cbs := e.callbacks.Received()
		if n := len(cbs); n != 3 || string(cbs[n-1]) != string(cbs[0]) {
			t.Fatalf("callbacks = %d; want the first sent again", n)
		}
	})
}

// TestSimulator_OrangeBurkinaFaso: the code the customer got before paying
// is required, checked, and decides the outcome.
func TestSimulator_OrangeBurkinaFaso(t *testing.T) {
	e := newSimEnv(t)
	body := func(id, code string) string {
		b, _ := json.Marshal(map[string]any{"depositId": id, "amount": "2500", "currency": "XOF", "preAuthorisationCode": code,
			"payer": payer{Type: "MMO", AccountDetails: accountDetails{PhoneNumber: "22675123456", Provider: "ORANGE_BFA"}}})
		return string(b)
	}
	for _, tc := range []struct {
		code     string
		http     int
		failure  string
		accepted bool
	}{
		{"", http.StatusBadRequest, "MISSING_PARAMETER", false},
		{"12ab", http.StatusBadRequest, "INVALID_PARAMETER", false},
		{"482913", http.StatusOK, "", true},
	} {
		code, failure, ans := e.raw(t, "/v2/deposits", body("0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a4"+string(rune('0'+len(tc.code)%10)), tc.code))
		if code != tc.http || failure != tc.failure || (ans["status"] == "ACCEPTED") != tc.accepted {
			t.Errorf("code %q: %d %s %v; want %d %q accepted %v", tc.code, code, failure, ans, tc.http, tc.failure, tc.accepted)
		}
	}
	ctx := context.Background()
	col := gateway.Collection{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a99", Amount: 2500, Currency: "XOF", Phone: "+22675123456",
		Operator: "ORANGE_BFA", Code: "000000"}
	if st, err := e.client.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending || st.RedirectURL != "" {
		t.Fatalf("collect with a code = %+v, %v; want pending", st, err)
	}
	e.control(t, "/_sim/settle/"+col.Reference)
	if st := e.status(t, col.Reference); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "PAYMENT_NOT_APPROVED") {
		t.Fatalf("a wrong code = %+v; want failed, PAYMENT_NOT_APPROVED", st)
	}
	col.Code = ""
	if _, err := e.client.Collect(ctx, col); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("no code: %v; want not sent", err)
	}
}

// TestSimulator_Amounts: the simulator enforces the decimals and limits
// its active-conf gives.
func TestSimulator_Amounts(t *testing.T) {
	e := newSimEnv(t)
	body := func(amount, currency, phone, provider string) string {
		b, _ := json.Marshal(map[string]any{"depositId": "ab111111-2222-4333-8444-555555555555", "amount": amount, "currency": currency,
			"payer": payer{Type: "MMO", AccountDetails: accountDetails{PhoneNumber: phone, Provider: provider}}})
		return string(b)
	}
	for _, tc := range []struct {
		body, failure string
	}{
		{body("50", "XOF", "221771234567", "ORANGE_SEN"), "AMOUNT_OUT_OF_BOUNDS"},
		{body("2000001", "XOF", "221771234567", "ORANGE_SEN"), "AMOUNT_OUT_OF_BOUNDS"},
		{body("150.5", "XOF", "221771234567", "ORANGE_SEN"), "INVALID_AMOUNT"},
		{body("150", "GHS", "221771234567", "ORANGE_SEN"), "INVALID_CURRENCY"},
		{body("150", "XOF", "233241234567", "ORANGE_SEN"), "INVALID_PHONE_NUMBER"},
		{body("1e3", "XOF", "221771234567", "ORANGE_SEN"), "INVALID_PARAMETER"},
		{body("150", "XOF", "221771234567", "NOPE_SEN"), "INVALID_PROVIDER"},
		{`{"depositId": `, "INVALID_INPUT"},
	} {
		if _, failure, ans := e.raw(t, "/v2/deposits", tc.body); failure != tc.failure {
			t.Errorf("%s: %s %v; want %s", tc.body, failure, ans, tc.failure)
		}
	}
	if _, failure, ans := e.raw(t, "/v2/deposits", body("25.5", "GHS", "233241234567", "MTN_MOMO_GHA")); failure != "" || ans["status"] != "ACCEPTED" {
		t.Errorf("25.5 GHS: %s %v; want accepted", failure, ans)
	}
}

// TestSimulator_StatusesAndTestNumbers: intermediate statuses come before
// the final one, and pawaPay's test numbers give their outcomes.
func TestSimulator_StatusesAndTestNumbers(t *testing.T) {
	e := newSimEnv(t)
	ctx := context.Background()
	civ := func(ref, phone string) string {
		c := gateway.Collection{Reference: ref, Amount: 1000, Currency: "XOF", Phone: phone, Operator: "MTN_MOMO_CIV"}
		if st, err := e.client.Collect(ctx, c); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("collect %s = %+v, %v", phone, st, err)
		}
		return ref
	}
	read := func(ref string) string {
		res, err := http.DefaultClient.Do(func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v2/deposits/"+ref, nil)
			r.Header.Set("Authorization", "Bearer sandbox-token")
			return r
		}())
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var ans struct{ Data deposit }
		json.NewDecoder(res.Body).Decode(&ans)
		return ans.Data.Status
	}
	ref := civ("c1111111-2222-4333-8444-555555555555", "+2250503456789")
	var seen []string
	seen = append(seen, read(ref), read(ref))
	e.control(t, "/_sim/settle/"+ref+"?status=IN_RECONCILIATION")
	seen = append(seen, read(ref))
	if st := e.status(t, ref); st.Outcome != gateway.Pending {
		t.Fatalf("IN_RECONCILIATION = %+v; want pending", st)
	}
	e.control(t, "/_sim/settle/"+ref)
	seen = append(seen, read(ref))
	if got := strings.Join(seen, " "); got != "ACCEPTED PROCESSING IN_RECONCILIATION COMPLETED" {
		t.Fatalf("statuses = %s; want ACCEPTED PROCESSING IN_RECONCILIATION COMPLETED", got)
	}

	for i, tc := range []struct{ phone, failure string }{
		{"+2250503456019", "PAYER_LIMIT_REACHED"},
		{"+2250503456029", "PAYER_NOT_FOUND"},
		{"+2250503456039", "PAYMENT_NOT_APPROVED"},
		{"+2250503456049", "INSUFFICIENT_BALANCE"},
		{"+2250503456069", "UNSPECIFIED_FAILURE"},
		{"+2250503456129", ""}, // stuck
	} {
		ref := civ("d"+string(rune('0'+i))+"111111-2222-4333-8444-555555555555", tc.phone)
		e.control(t, "/_sim/settle/"+ref)
		st := e.status(t, ref)
		if tc.failure == "" && st.Outcome != gateway.Pending || tc.failure != "" && (st.Outcome != gateway.Failed || !strings.Contains(st.Reason, tc.failure)) {
			t.Errorf("%s: %+v; want %s", tc.phone, st, tc.failure)
		}
	}
}

// TestSimulator_WavePage: the authorizationUrl is a page where the
// customer pays or declines, then goes to successfulUrl or failedUrl.
func TestSimulator_WavePage(t *testing.T) {
	e := newSimEnv(t)
	e.sim.AuthURLDelay = 200 * time.Millisecond
	e.sim.AuthURLCallback = true
	ctx := context.Background()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, do := range []string{"pay", "decline"} {
		ref := "e" + string(rune('0'+i)) + "111111-2222-4333-8444-555555555555"
		col := collection(ref, "+221771234567")
		col.ReturnURL = "https://pay.example.com/cs_" + do
		quick := *e.client
		quick.AuthURLWait = -1
		st, err := quick.Collect(ctx, col)
		if err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
			t.Fatalf("collect = %+v, %v; want pending, the address not yet known", st, err)
		}
		if st := e.status(t, ref); st.RedirectURL != "" {
			t.Fatalf("before the delay: %+v; want no address yet (GET_AUTH_URL)", st)
		}
		time.Sleep(400 * time.Millisecond)
		st = e.status(t, ref)
		if st.Outcome != gateway.Pending || st.RedirectURL == "" {
			t.Fatalf("after the delay: %+v; want the address", st)
		}
		_, cb, _ := e.callbacks.Last()
		if !bytes.Contains(cb, []byte(`"authorizationUrl"`)) || !bytes.Contains(cb, []byte(`"PROCESSING"`)) {
			t.Fatalf("callback = %s; want the PROCESSING one with the authorizationUrl", cb)
		}
		if res, err := http.Get(st.RedirectURL); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("the page: %v %v", res, err)
		}
		res, err := noFollow.PostForm(st.RedirectURL, url.Values{"do": {do}})
		if err != nil || res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != col.ReturnURL {
			t.Fatalf("%s on the page: %v %v; want sent back to %s", do, res, err, col.ReturnURL)
		}
		want := gateway.Succeeded
		if do == "decline" {
			want = gateway.Failed
		}
		if st := e.status(t, ref); st.Outcome != want {
			t.Fatalf("after %s: %+v; want %s", do, st, want)
		}
	}
}

func TestSimulator_SettlesAfterDelay(t *testing.T) {
	e := newSimEnv(t)
	e.sim.SettleAfter = 50 * time.Millisecond
	ctx := context.Background()
	e.client.Collect(ctx, collection(ref1, "+221771234567"))
	e.client.Collect(ctx, collection(ref2, "+221770000129")) // never settles
	time.Sleep(300 * time.Millisecond)
	if st := e.status(t, ref1); st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay: %+v", st)
	}
	if st := e.status(t, ref2); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payment: %+v; want still pending", st)
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	sim := &Simulator{Token: "tok", CallbackURL: hook.URL}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: "tok"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "XOF", Phone: "+221771234567", Operator: "WAVE_SEN", Country: "SN"}
	for range 3 { // sent again with the same payoutId: one payout
		if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("payout = %+v, %v", st, err)
		}
	}
	if sim.Payouts() != 1 {
		t.Fatalf("%d payouts for one payoutId", sim.Payouts())
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference+"?status=ENQUEUED")
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("enqueued = %+v; want pending", st)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.NotFound {
		t.Fatalf("a payout read as a deposit = %+v; want not found", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("settled = %+v", st)
	}
	_, bodies := hook.Received()
	ref, err := c.CallbackReference(nil, bodies[0])
	if err != nil || ref != p.Reference {
		t.Fatalf("payout callback = %q, %v", ref, err)
	}
	poor := p
	poor.Reference, poor.Phone = "b1111111-2222-4333-8444-555555555555", "+221770000049"
	if st, _ := c.Payout(ctx, poor); st.Outcome != gateway.Failed || !st.LowBalance || !strings.Contains(st.Reason, "PAWAPAY_WALLET_OUT_OF_FUNDS") {
		t.Fatalf("low balance = %+v", st)
	}
	for ref, phone := range map[string]string{"c1111111-2222-4333-8444-555555555555": "+221770000029", "c2111111-2222-4333-8444-555555555555": "+221771234089"} {
		lost := p
		lost.Reference, lost.Phone = ref, phone
		c.Payout(ctx, lost)
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+lost.Reference)
		if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: lost.Reference}); st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "RECIPIENT_NOT_FOUND") {
			t.Fatalf("failed payout to %s = %+v", phone, st)
		}
	}
}
