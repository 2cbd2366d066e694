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
