package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
)

func TestProviders(t *testing.T) {
	for _, key := range []string{"pawapay", "cinetpay", "fedapay", "paystack", "flutterwave"} {
		p, ok := Lookup(key)
		if !ok || len(p.Credentials) == 0 || p.BaseURL.Live == "" || p.BaseURL.Test == "" || len(p.Operators) == 0 {
			t.Errorf("provider %s = %+v", key, p)
		}
	}
}

func TestRoutes(t *testing.T) {
	p, _ := Lookup("PawaPay")
	routes, err := p.Routes([]string{"ci", "Sénégal"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"CI/mtn_momo": "MTN_MOMO_CIV", "CI/orange_money": "ORANGE_CIV", "CI/wave": "WAVE_CIV",
		"SN/free_money": "FREE_SEN", "SN/orange_money": "ORANGE_SEN", "SN/wave": "WAVE_SEN"}
	if len(routes) != len(want) {
		t.Fatalf("routes = %+v", routes)
	}
	for _, r := range routes {
		if want[r.Country+"/"+r.Operator] != r.Code || !r.Enabled {
			t.Errorf("route %+v", r)
		}
	}
	if _, err := p.Routes([]string{"FR"}); cauri.ErrorCode(err) != cauri.EInvalid {
		t.Fatalf("unserved country: %v", err)
	}
	all, _ := p.Routes(nil)
	if len(all) < 40 {
		t.Fatalf("all routes = %d", len(all))
	}
}

func TestCheckCredentials(t *testing.T) {
	p, _ := Lookup("cinetpay")
	ok := map[string]string{"apikey": "k", "site_id": "1", "secret_key": "s"}
	if err := p.CheckCredentials(ok); err != nil {
		t.Fatal(err)
	}
	ok["transfer_password"] = "p"
	if err := p.CheckCredentials(ok); err != nil {
		t.Fatalf("optional field refused: %v", err)
	}
	// An account on CinetPay's API v1: the other set, alone.
	v1 := map[string]string{"api_key": "sk_test_1", "api_password": "pw"}
	if err := p.CheckCredentials(v1); err != nil {
		t.Fatalf("API v1 credentials refused: %v", err)
	}
	if got := p.CredentialSet(v1); strings.Join(got, ",") != "api_key,api_password" {
		t.Errorf("CredentialSet(v1) = %v; want api_key, api_password", got)
	}
	for _, bad := range []map[string]string{{"apikey": "k", "site_id": "1"}, {"apikey": "k", "site_id": "1", "secret_key": "s", "token": "x"},
		{"api_key": "sk_test_1"}, {"api_key": "sk_test_1", "api_password": "pw", "site_id": "1"}} {
		if err := p.CheckCredentials(bad); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Errorf("CheckCredentials(%v) = %v; want invalid", bad, err)
		}
	}
	if err := p.CheckCredentials(map[string]string{"apikey": "k"}); err == nil || !strings.Contains(err.Error(), "or api_key, api_password") {
		t.Errorf("missing credentials = %v; want both sets named", err)
	}
}

// TestNewGateway_OneCountry: an account bound to one country (Wave, MTN
// MoMo) makes a gateway of exactly one country.
func TestNewGateway_OneCountry(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		provider  string
		countries []string
		creds     map[string]string
		ok        bool
	}{
		{"wave", nil, map[string]string{"api_key": "k"}, false},
		{"wave", []string{"SN", "CI"}, map[string]string{"api_key": "k"}, false},
		{"wave", []string{"SN"}, map[string]string{"api_key": "k"}, true},
		{"mtnmomo", []string{"CI"}, map[string]string{"api_user": "u", "api_key": "k", "collection_key": "c"}, true},
		{"mtnmomo", nil, map[string]string{"api_user": "u", "api_key": "k", "collection_key": "c"}, false},
		{"pawapay", nil, map[string]string{"api_token": "t"}, true},
	} {
		p, _ := Lookup(tc.provider)
		g, err := p.NewGateway("ws_x", "", true, tc.countries, tc.creds, now)
		if (err == nil) != tc.ok {
			t.Errorf("%s %v: err = %v; want ok=%v", tc.provider, tc.countries, err, tc.ok)
		}
		if err == nil && tc.provider == "mtnmomo" && (g.Payout || !g.Collect) {
			t.Errorf("an MTN MoMo gateway without the disbursement key: collect=%v payout=%v; want collect only", g.Collect, g.Payout)
		}
	}
}

// TestNewGateway_MpesaB2C: M-Pesa's B2C credentials are optional, and
// checked together: a command id and an environment of Daraja's, the
// initiator with its password or a ready security credential, and a
// production gateway's ready credential (Cauri holds only the sandbox's
// certificate).
func TestNewGateway_MpesaB2C(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	base := func(extra map[string]string) map[string]string {
		c := map[string]string{"consumer_key": "k", "consumer_secret": "s", "shortcode": "174379", "passkey": "p"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	p, _ := Lookup("mpesa")
	for _, tc := range []struct {
		live  bool
		creds map[string]string
		want  string // "" ok, else in the error
	}{
		{false, base(nil), ""},
		{false, base(map[string]string{"initiator_name": "testapi", "initiator_password": "Safaricom999!*!", "b2c_shortcode": "600996"}), ""},
		{false, base(map[string]string{"initiator_name": "testapi", "security_credential": "abc==", "command_id": "SalaryPayment"}), ""},
		{true, base(map[string]string{"initiator_name": "api", "security_credential": "abc=="}), ""},
		{true, base(map[string]string{"initiator_name": "api", "initiator_password": "pw"}), "security_credential"},
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "environment": "production"}), "security_credential"},
		{false, base(map[string]string{"initiator_name": "api"}), "initiator_password"},
		{false, base(map[string]string{"initiator_password": "pw"}), "initiator_name"},
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "command_id": "BuyGoods"}), "command_id"},
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "environment": "staging"}), "environment"},
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "b2c_shortcode": "60 0996"}), "b2c_shortcode"},
		// A reversal initiator of its own ("Org Reversals Initiator"),
		// with or without the B2C one; the same rules, under its names.
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "reversal_initiator_name": "rev", "reversal_initiator_password": "pw2"}), ""},
		{false, base(map[string]string{"reversal_initiator_name": "rev", "reversal_security_credential": "abc=="}), ""},
		{true, base(map[string]string{"initiator_name": "api", "security_credential": "abc==", "reversal_initiator_name": "rev", "reversal_security_credential": "def=="}), ""},
		{true, base(map[string]string{"initiator_name": "api", "security_credential": "abc==", "reversal_initiator_name": "rev", "reversal_initiator_password": "pw"}), "reversal_security_credential"},
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "reversal_initiator_name": "rev"}), "reversal_initiator_password"},
		{false, base(map[string]string{"initiator_name": "api", "initiator_password": "pw", "reversal_initiator_password": "pw2"}), "reversal_initiator_name"},
		{false, base(map[string]string{"reversal_security_credential": "abc=="}), "reversal_initiator_name"},
	} {
		g, err := p.NewGateway("ws_x", "", tc.live, []string{"KE"}, tc.creds, now)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.creds, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: err = %v; want one naming %s", tc.creds, err, tc.want)
		case err == nil && g.Payout != (p.Payout && tc.creds["initiator_name"] != ""):
			t.Errorf("%v: payout = %v", tc.creds, g.Payout)
		}
	}
}
