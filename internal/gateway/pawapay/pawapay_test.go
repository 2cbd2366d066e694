package pawapay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestEncodeDeposit_Golden holds the connector's requests to the examples
// of pawaPay's own documentation: the plain one, Orange Burkina Faso's
// with its pre-authorisation code, Wave's with its return addresses.
func TestEncodeDeposit_Golden(t *testing.T) {
	conf := readConf(t, "active_conf.json")
	for _, tc := range []struct {
		fixture string
		col     gateway.Collection
	}{
		{"deposit_request.json", gateway.Collection{Reference: "afb57b93-7849-49aa-babb-4c3ccbfe3d79", Amount: 100, Currency: "RWF",
			Phone: "+250783456789", Operator: "MTN_MOMO_RWA"}},
		{"deposit_request_preauth.json", gateway.Collection{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41", Amount: 2500, Currency: "XOF",
			Phone: "+22675123456", Operator: "ORANGE_BFA", Code: " 482 913 "}},
		{"deposit_request_wave.json", gateway.Collection{Reference: "7d1e4b90-2c6a-4f3e-9b8d-1a5c7e9f0b23", Amount: 5000, Currency: "XOF",
			Phone: "+221771234567", Operator: "WAVE_SEN", ReturnURL: "https://pay.example.com/cs_7d1e4b90"}},
	} {
		o, found, _ := conf.lookup(tc.col.Operator, tc.col.Currency, opDeposit)
		req, err := encodeDeposit(tc.col, o, found)
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		mine, documented := gatewaytest.DocumentedFields(t, req, tc.fixture)
		if len(mine) != len(documented) {
			t.Errorf("%s: request = %v; want exactly the documented %v", tc.fixture, mine, documented)
		}
	}
}

// TestEncodeDeposit_AuthFlows: the code goes to the providers that need
// one (active-conf's authType PREAUTH, else providers.json), the return
// addresses to those authorised on their own page; a missing code is not
// sent.
func TestEncodeDeposit_AuthFlows(t *testing.T) {
	col := func(op, code string) gateway.Collection {
		return gateway.Collection{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41", Amount: 2500, Currency: "XOF", Phone: "+22675123456",
			Operator: op, Code: code, ReturnURL: "https://pay.example.com/cs_1"}
	}
	for _, tc := range []struct {
		name       string
		col        gateway.Collection
		conf       opConf
		found      bool
		code, back string
		notSent    bool
	}{
		{"PreauthFromProvidersJSON", col("ORANGE_BFA", "482913"), opConf{}, false, "482913", "", false},
		{"PreauthFromConf", col("MOOV_BFA", "111222"), opConf{AuthType: "PREAUTH"}, true, "111222", "", false},
		{"ConfSaysPINPrompt", col("ORANGE_BFA", "482913"), opConf{AuthType: "PROVIDER_AUTH"}, true, "", "", false},
		{"CodeNotNeeded", col("MOOV_BFA", "482913"), opConf{}, false, "", "", false},
		{"CodeMissing", col("ORANGE_BFA", "  "), opConf{}, false, "", "", true},
		{"CodeMissingConf", col("ORANGE_BFA", ""), opConf{AuthType: "PREAUTH"}, true, "", "", true},
		{"RedirectFromDocs", col("WAVE_CIV", ""), opConf{}, false, "", "https://pay.example.com/cs_1", false},
		{"RedirectFromConf", col("NEW_WALLET_SEN", ""), opConf{AuthType: "REDIRECT_AUTH"}, true, "", "https://pay.example.com/cs_1", false},
	} {
		req, err := encodeDeposit(tc.col, tc.conf, tc.found)
		if tc.notSent {
			if e := gateway.ErrorOf(err); e == nil || !e.NotSent || !strings.Contains(e.Message, "preAuthorisationCode") {
				t.Errorf("%s: err = %v; want a NotSent error naming preAuthorisationCode", tc.name, err)
			}
			continue
		}
		if err != nil || req.PreAuthorisationCode != tc.code || req.SuccessfulURL != tc.back || req.FailedURL != tc.back {
			t.Errorf("%s: code %q, urls %q %q, %v; want code %q, urls %q", tc.name, req.PreAuthorisationCode, req.SuccessfulURL, req.FailedURL, err, tc.code, tc.back)
		}
	}
}

func readConf(t *testing.T, name string) *activeConf {
	t.Helper()
	var c activeConf
	if err := json.Unmarshal(gatewaytest.Golden(t, name), &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &c
}

// TestActiveConf_BothShapes reads the guides' shape and the API
// reference's.
func TestActiveConf_BothShapes(t *testing.T) {
	guide, ref := readConf(t, "active_conf.json"), readConf(t, "active_conf_reference.json")
	for _, tc := range []struct {
		conf                        *activeConf
		provider, currency, op      string
		found, listed               bool
		auth, decimals, lo, hi, sts string
	}{
		{guide, "ORANGE_BFA", "XOF", opDeposit, true, true, "PREAUTH", "NONE", "100", "1500000", "OPERATIONAL"},
		{guide, "ORANGE_BFA", "XOF", opPayout, true, true, "", "NONE", "500", "1000000", "OPERATIONAL"},
		{guide, "WAVE_SEN", "XOF", opPayout, true, true, "", "NONE", "100", "2000000", "DELAYED"},
		{guide, "MOOV_BFA", "XOF", opPayout, false, true, "", "", "", "", ""},
		{guide, "MTN_MOMO_GHA", "USD", opDeposit, false, true, "", "", "", "", ""},
		{guide, "MTN_MOMO_CIV", "XOF", opDeposit, false, false, "", "", "", "", ""},
		{ref, "MTN_MOMO_BEN", "XOF", opDeposit, true, true, "PROVIDER_AUTH", "NONE", "200", "500000", "OPERATIONAL"},
		{ref, "MTN_MOMO_BEN", "XOF", opPayout, true, true, "", "NONE", "300", "400000", "DELAYED"},
	} {
		o, found, listed := tc.conf.lookup(tc.provider, cauri.Currency(tc.currency), tc.op)
		lo, hi := o.limits()
		if found != tc.found || listed != tc.listed || o.AuthType != tc.auth || o.DecimalsInAmount != tc.decimals || lo != tc.lo || hi != tc.hi || o.Status != tc.sts {
			t.Errorf("%s %s %s: got %+v found %v listed %v; want auth %q decimals %q limits %s-%s status %q found %v listed %v",
				tc.provider, tc.currency, tc.op, o, found, listed, tc.auth, tc.decimals, tc.lo, tc.hi, tc.sts, tc.found, tc.listed)
		}
	}
	var empty activeConf
	if err := json.Unmarshal([]byte(`{"depositId": "x", "status": "ACCEPTED"}`), &empty); err != nil || !empty.empty() {
		t.Errorf("an answer of another shape: %v, empty %v; want an empty configuration", err, empty.empty())
	}
}

// TestAmountFor: the provider's decimals and limits decide what is sent;
// what it cannot take is refused without sending.
func TestAmountFor(t *testing.T) {
	bfa := opConf{DecimalsInAmount: "NONE", MinAmount: "100", MaxAmount: "1500000"}
	gha := opConf{DecimalsInAmount: "TWO_PLACES", MinAmount: "1", MaxAmount: "5000"}
	telecel := opConf{DecimalsInAmount: "NONE", MinTransactionLimit: "1", MaxTransactionLimit: "5000"}
	for _, tc := range []struct {
		o      opConf
		amount int64
		cur    cauri.Currency
		want   string // "" : refused
		reason string
	}{
		{bfa, 2500, "XOF", "2500", ""},
		{bfa, 100, "XOF", "100", ""},
		{bfa, 1500000, "XOF", "1500000", ""},
		{bfa, 99, "XOF", "", "below pawaPay's minimum of 100 XOF"},
		{bfa, 1500001, "XOF", "", "above pawaPay's maximum of 1500000 XOF"},
		{gha, 2550, "GHS", "25.5", ""},
		{gha, 100, "GHS", "1", ""},
		{gha, 99, "GHS", "", "below"},
		{gha, 500001, "GHS", "", "above"},
		{telecel, 2500, "GHS", "25", ""},
		{telecel, 2550, "GHS", "", "without decimals"},
		{opConf{}, 2550, "GHS", "25.5", ""}, // no configuration: the currency's decimals, no limits
		{opConf{MinAmount: "nonsense"}, 5, "XOF", "5", ""},
	} {
		got, err := amountFor(tc.o, "P", tc.amount, tc.cur)
		if tc.want != "" {
			if got != tc.want || err != nil {
				t.Errorf("%d %s with %+v = %q, %v; want %q", tc.amount, tc.cur, tc.o, got, err, tc.want)
			}
			continue
		}
		if e := gateway.ErrorOf(err); e == nil || !e.NotSent || !strings.Contains(e.Message, tc.reason) {
			t.Errorf("%d %s with %+v: %v; want a NotSent error saying %q", tc.amount, tc.cur, tc.o, err, tc.reason)
		}
	}
}

func TestCustomerMessage(t *testing.T) {
	for in, want := range map[string]string{"2 pagnes wax": "2 pagnes wax", "Commande n° 1042 — boutique Adjoa": "Commande n 1042  bouti", "ab": "", "": ""} {
		if got := customerMessage(in); got != want {
			t.Errorf("customerMessage(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestCollect_WaveAwaitsTheAuthorizationURL: accepted with GET_AUTH_URL,
// the deposit is read until its authorizationUrl comes.
func TestCollect_WaveAwaitsTheAuthorizationURL(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set("GET /v2/active-conf", http.StatusOK, gatewaytest.Golden(t, "active_conf.json"))
	srv.Set("POST /v2/deposits", http.StatusOK, gatewaytest.Golden(t, "deposit_accepted_get_auth_url.json"))
	ref := "7d1e4b90-2c6a-4f3e-9b8d-1a5c7e9f0b23"
	srv.Set("GET /v2/deposits/"+ref, http.StatusOK, gatewaytest.Golden(t, "deposit_status_get_auth_url.json"))
	go func() {
		time.Sleep(250 * time.Millisecond)
		srv.Set("GET /v2/deposits/"+ref, http.StatusOK, gatewaytest.Golden(t, "deposit_status_redirect.json"))
	}()
	c := &Client{BaseURL: srv.URL, Token: "t"}
	st, err := c.Collect(context.Background(), gateway.Collection{Reference: ref, Amount: 5000, Currency: "XOF", Phone: "+221771234567",
		Operator: "WAVE_SEN", ReturnURL: "https://pay.example.com/cs_7d1e4b90"})
	if err != nil || st.Outcome != gateway.Pending || st.RedirectURL != "https://wave.example/c/7d1e4b90" {
		t.Fatalf("collect = %+v, %v; want pending with the authorizationUrl", st, err)
	}
	var sent map[string]any
	json.Unmarshal(srv.Body("POST /v2/deposits"), &sent)
	if sent["successfulUrl"] != "https://pay.example.com/cs_7d1e4b90" || sent["failedUrl"] != "https://pay.example.com/cs_7d1e4b90" {
		t.Errorf("deposit sent = %v; want the return address as successfulUrl and failedUrl", sent)
	}

	srv.Set("POST /v2/deposits", http.StatusOK, gatewaytest.Golden(t, "deposit_duplicate_ignored.json")) // the service's retry
	if st, err := c.Collect(context.Background(), gateway.Collection{Reference: ref, Amount: 5000, Currency: "XOF", Phone: "+221771234567",
		Operator: "WAVE_SEN"}); err != nil || st.RedirectURL != "https://wave.example/c/7d1e4b90" {
		t.Fatalf("collect sent again = %+v, %v; want pending with the authorizationUrl", st, err)
	}

	c.AuthURLWait = 150 * time.Millisecond // the address never comes in time: pending, the status check gives it later
	srv.Set("GET /v2/deposits/"+ref, http.StatusOK, gatewaytest.Golden(t, "deposit_status_get_auth_url.json"))
	if st, err := c.Collect(context.Background(), gateway.Collection{Reference: ref, Amount: 5000, Currency: "XOF", Phone: "+221771234567",
		Operator: "WAVE_SEN"}); err != nil || st != (gateway.Status{Outcome: gateway.Pending}) {
		t.Fatalf("collect without the address = %+v, %v; want pending", st, err)
	}
}

// TestCollect_RefusesWithoutSending: what active-conf says the provider
// cannot take never reaches pawaPay.
func TestCollect_RefusesWithoutSending(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set("GET /v2/active-conf", http.StatusOK, gatewaytest.Golden(t, "active_conf.json"))
	srv.Set("", http.StatusOK, gatewaytest.Golden(t, "deposit_accepted.json"))
	c := &Client{BaseURL: srv.URL, Token: "t"}
	ctx := context.Background()
	base := gateway.Collection{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41", Amount: 2500, Currency: "XOF", Phone: "+22675123456",
		Operator: "ORANGE_BFA", Code: "482913"}
	with := func(f func(*gateway.Collection)) gateway.Collection { c := base; f(&c); return c }
	for _, tc := range []struct {
		col  gateway.Collection
		want string
	}{
		{with(func(c *gateway.Collection) { c.Amount = 50 }), "below pawaPay's minimum of 100 XOF for ORANGE_BFA"},
		{with(func(c *gateway.Collection) { c.Amount = 2000000 }), "above pawaPay's maximum of 1500000 XOF for ORANGE_BFA"},
		{with(func(c *gateway.Collection) { c.Code = "" }), "preAuthorisationCode"},
		{with(func(c *gateway.Collection) { c.Operator, c.Phone = "MTN_MOMO_CIV", "+2250707123456" }), "no provider MTN_MOMO_CIV"},
		{with(func(c *gateway.Collection) { c.Operator, c.Currency, c.Amount = "VODAFONE_GHA", "GHS", 1050 }), "without decimals"},
	} {
		_, err := c.Collect(ctx, tc.col)
		if e := gateway.ErrorOf(err); e == nil || !e.NotSent || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%+v: %v; want a NotSent error saying %q", tc.col, err, tc.want)
		}
	}
	_, err := c.Payout(ctx, gateway.Payout{Reference: "5a8c2e17-6f40-4b9d-8e21-3c7f9a0d4b65", Amount: 300, Currency: "XOF",
		Phone: "+22675123456", Operator: "ORANGE_BFA"})
	if e := gateway.ErrorOf(err); e == nil || !e.NotSent || !strings.Contains(e.Message, "minimum of 500") {
		t.Errorf("payout below the payout minimum: %v; want NotSent", err)
	}
	for _, call := range srv.Calls() {
		if call != "GET /v2/active-conf" {
			t.Errorf("%s was sent; want nothing but the configuration read", call)
		}
	}
}

// TestActiveConf_Cache: one read serves every client of an account and
// every concurrent payment until ConfTTL; a failed read does not stop
// payments (they go on with what providers.json and the docs say).
func TestActiveConf_Cache(t *testing.T) {
	e := newSimEnv(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &Client{BaseURL: e.srv.URL, Token: "sandbox-token"} // a client per call, as the service makes them
			col := collection(fmt.Sprintf("%08d-2222-4333-8444-555555555555", i), "+221771234567")
			col.Operator = "ORANGE_SEN"
			if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
				t.Errorf("collect = %+v, %v", st, err)
			}
		}()
	}
	wg.Wait()
	if n := e.sim.ConfCalls(); n != 1 {
		t.Fatalf("%d reads of active-conf for 20 payments; want 1", n)
	}
	short := &Client{BaseURL: e.srv.URL, Token: "sandbox-token", ConfTTL: time.Nanosecond}
	short.activeConf(ctx)
	if n := e.sim.ConfCalls(); n != 2 {
		t.Fatalf("%d reads after the configuration expired; want 2", n)
	}

	down := gatewaytest.NewAnswers(t)
	down.Set("GET /v2/active-conf", http.StatusInternalServerError, gatewaytest.Golden(t, "unknown_error.json"))
	down.Set("", http.StatusOK, gatewaytest.Golden(t, "deposit_accepted.json"))
	c := &Client{BaseURL: down.URL, Token: "t"}
	bfa := gateway.Collection{Reference: "0c2f7a51-9b3e-4d8a-a1f6-5e7d3c9b2a41", Amount: 2500, Currency: "XOF", Phone: "+22675123456", Operator: "ORANGE_BFA"}
	if _, err := c.Collect(ctx, bfa); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("without active-conf, ORANGE_BFA without a code: %v; want NotSent (providers.json says it needs one)", err)
	}
	bfa.Code = "482913"
	if st, err := c.Collect(ctx, bfa); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("without active-conf: %+v, %v; want the deposit sent", st, err)
	}
	reads := 0
	for _, call := range down.Calls() {
		if call == "GET /v2/active-conf" {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("%d reads of a failing active-conf in two payments; want 1 (the next waits a minute)", reads)
	}
}
