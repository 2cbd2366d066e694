package mtnmomo

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestAccountHolderName_Documented reads MTN's documented answers of the
// basic user info (testdata/SOURCES.md): the SDK's sandbox example (with
// name), the reference's fields (given and family names only); a 404 with
// MTN's code is an account MTN does not know, its API gateway's 404 (a
// wrong address) and a 5xx are errors, never "unknown".
func TestAccountHolderName_Documented(t *testing.T) {
	const path = "GET /disbursement/v1_0/accountholder/msisdn/2250505123456/basicuserinfo"
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		code      int
		body      []byte
		want      string
		unknown   bool
		transient bool
	}{
		{"the SDK's sandbox example", 200, gatewaytest.Golden(t, "basicuserinfo_sandbox.json"), "Sand Box", false, false},
		{"the reference's fields", 200, gatewaytest.Golden(t, "basicuserinfo.json"), "Aya Marie N'Guessan", false, false},
		{"no name at all", 200, []byte(`{"birthdate": "1990-01-01", "status": "ACTIVE"}`), "", true, false},
		{"an account MTN does not know", 404, gatewaytest.Golden(t, "error_not_found.json"), "", true, false},
		{"a wrong address", 404, []byte(`{"statusCode": 404, "message": "Resource not found"}`), "", false, false},
		{"MTN down", 503, []byte(`{"code": "SERVICE_UNAVAILABLE", "message": "down"}`), "", false, true},
		{"an unreadable answer", 200, []byte(`<html>`), "", false, true},
	} {
		srv, c := newAnswers(t)
		srv.Set(path, tc.code, tc.body)
		name, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505123456")
		switch {
		case tc.want != "":
			if err != nil || name != tc.want {
				t.Errorf("%s: name = %q, %v; want %q", tc.name, name, err, tc.want)
			}
		case tc.unknown:
			if !errors.Is(err, gateway.ErrNameUnknown) {
				t.Errorf("%s: %q, %v; want ErrNameUnknown", tc.name, name, err)
			}
		default:
			if gateway.ErrorOf(err) == nil || errors.Is(err, gateway.ErrNameUnknown) || gateway.IsTransient(err) != tc.transient {
				t.Errorf("%s: %q, %v; want an error, transient %v", tc.name, name, err, tc.transient)
			}
		}
		calls := srv.Calls()
		if len(calls) != 2 || calls[0] != "POST /disbursement/token/" || calls[1] != path {
			t.Errorf("%s: calls = %v; want the disbursement token, then the lookup", tc.name, calls)
		}
	}
}

// TestAccountHolderName_Headers: the Disbursement product's key and token,
// the target environment; nothing asked for a number that is not E.164.
func TestAccountHolderName_Headers(t *testing.T) {
	srv := gatewaytest.NewRecorder(t, func(r *http.Request) (int, []byte) {
		if r.Method == http.MethodPost {
			return http.StatusOK, gatewaytest.Golden(t, "token.json")
		}
		return http.StatusOK, gatewaytest.Golden(t, "basicuserinfo_sandbox.json")
	})
	c := &Client{BaseURL: srv.URL, Environment: "mtnivorycoast", CollectionKey: "col-key", DisbursementKey: "dis-key", APIUser: "u", APIKey: "k"}
	ctx := context.Background()
	if _, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "0505123456"); gateway.ErrorOf(err) == nil || len(srv.Requests()) != 0 {
		t.Fatalf("a national number = %v after %d requests; want an error, nothing asked", err, len(srv.Requests()))
	}
	if _, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505123456"); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[1]
	for k, want := range map[string]string{"Authorization": "Bearer " + gatewaytest.DocumentedToken(t), "Ocp-Apim-Subscription-Key": "dis-key",
		"X-Target-Environment": "mtnivorycoast"} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q; want %q", k, v, want)
		}
	}
	if got.Method != http.MethodGet || got.Path != "/disbursement/v1_0/accountholder/msisdn/2250505123456/basicuserinfo" {
		t.Fatalf("request = %s %s", got.Method, got.Path)
	}
	c.DisbursementKey = ""
	if _, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505123456"); gateway.ErrorOf(err) == nil || gateway.IsTransient(err) {
		t.Fatalf("without the disbursement key = %v; want a lasting error", err)
	}
}

// TestAccountHolderName_AgainstSimulator asks the simulator over HTTP: its
// holders by the number's last digits, MTN's sandbox user, an unknown
// number.
func TestAccountHolderName_AgainstSimulator(t *testing.T) {
	sim, _, c, _ := newSim(t)
	ctx := context.Background()
	for phone, want := range map[string]string{"+2250505123456": "Jean Kouassi", "+256771234567": "Awa Diop",
		"+2250707065678": "Aya N'Guessan", "+46733123450": "Sand Box"} {
		if name, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", phone); err != nil || name != want {
			t.Errorf("%s: name = %q, %v; want %q", phone, name, err, want)
		}
	}
	if name, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505120000"); !errors.Is(err, gateway.ErrNameUnknown) {
		t.Errorf("an unknown number = %q, %v; want ErrNameUnknown", name, err)
	}
	if sim.NameLookups() != 5 {
		t.Errorf("the simulator answered %d lookups; want 5", sim.NameLookups())
	}
}
