package gateway

import (
	"testing"

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
	for _, bad := range []map[string]string{{"apikey": "k", "site_id": "1"}, {"apikey": "k", "site_id": "1", "secret_key": "s", "token": "x"}} {
		if err := p.CheckCredentials(bad); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Errorf("CheckCredentials(%v) = %v; want invalid", bad, err)
		}
	}
}
