package wave

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

// call sends one request to the simulator's API with its key and answers
// the status and the decoded body (nil when empty).
func call(t *testing.T, srv, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer wave_sn_prod_sim")
	req.Header.Set("Idempotency-Key", "key-"+path+body)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s answered %d %q", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode, out
}

func TestSimulator_RestrictPayerMobile(t *testing.T) {
	_, srv, _, hook := newSim(t)
	create := func(restrict string) map[string]any {
		code, s := call(t, srv.URL, http.MethodPost, "/v1/checkout/sessions",
			`{"amount":"1000","currency":"XOF","success_url":"https://shop.example/ok","error_url":"https://shop.example/ko","restrict_payer_mobile":"`+restrict+`"}`)
		if code != http.StatusOK || (restrict != "" && s["restrict_payer_mobile"] != restrict) {
			t.Fatalf("create = %d %v", code, s)
		}
		return s
	}
	if code, e := call(t, srv.URL, http.MethodPost, "/v1/checkout/sessions",
		`{"amount":"1000","currency":"XOF","success_url":"https://a.example","error_url":"https://a.example","restrict_payer_mobile":"771234567"}`); code != http.StatusBadRequest || e["code"] != "request-validation-error" {
		t.Fatalf("restrict_payer_mobile not E.164 = %d %v", code, e)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	pay := func(s map[string]any, mobile string) string {
		res, err := noFollow.PostForm(s["wave_launch_url"].(string), map[string][]string{"do": {"pay"}, "mobile": {mobile}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.Header.Get("Location")
	}
	other := create("+221771110001")
	if back := pay(other, "+221771110002"); back != "https://shop.example/ko" {
		t.Fatalf("paid from another number: back to %q; want error_url", back)
	}
	_, got := call(t, srv.URL, http.MethodGet, "/v1/checkout/sessions/"+other["id"].(string), "")
	if e, _ := got["last_payment_error"].(map[string]any); got["payment_status"] != "cancelled" || e["code"] != "payer-mobile-mismatch" {
		t.Fatalf("paid from another number = %v", got)
	}
	same := create("+221771110001")
	if back := pay(same, "+221771110001"); back != "https://shop.example/ok" {
		t.Fatalf("paid from the restricted number: back to %q; want success_url", back)
	}
	// Another failure, in Wave's words.
	failing := create("")
	pay(failing, "+221770000029")
	_, got = call(t, srv.URL, http.MethodGet, "/v1/checkout/sessions/"+failing["id"].(string), "")
	if e, _ := got["last_payment_error"].(map[string]any); e["code"] != "payment-failure" {
		t.Fatalf("a failed payment = %v", got)
	}
	if _, _, n := hook.Last(); n != 3 {
		t.Fatalf("%d webhooks; want 3", n)
	}
}

func TestSimulator_ExpireSession(t *testing.T) {
	_, srv, _, hook := newSim(t)
	_, s := call(t, srv.URL, http.MethodPost, "/v1/checkout/sessions",
		`{"amount":"1000","currency":"XOF","success_url":"https://a.example","error_url":"https://a.example","client_reference":"exp-1"}`)
	id := s["id"].(string)
	if code, body := call(t, srv.URL, http.MethodPost, "/v1/checkout/sessions/"+id+"/expire", ""); code != http.StatusOK || body != nil {
		t.Fatalf("expire = %d %v; want 200, empty", code, body)
	}
	_, got := call(t, srv.URL, http.MethodGet, "/v1/checkout/sessions/"+id, "")
	if got["checkout_status"] != "expired" || got["payment_status"] != "processing" || got["when_completed"] == nil {
		t.Fatalf("expired session = %v", got)
	}
	if code, e := call(t, srv.URL, http.MethodPost, "/v1/checkout/sessions/"+id+"/expire", ""); code != http.StatusConflict || e["code"] == nil {
		t.Fatalf("expired again = %d %v", code, e)
	}
	if code, e := call(t, srv.URL, http.MethodPost, "/v1/checkout/sessions/cos-unknown/expire", ""); code != http.StatusNotFound || e["code"] != "checkout-session-not-found" {
		t.Fatalf("unknown session = %d %v", code, e)
	}
	// Paying it now changes nothing; no webhook for an expiry.
	gatewaytest.Control(t, srv.URL, "/_sim/settle/exp-1")
	if _, got := call(t, srv.URL, http.MethodGet, "/v1/checkout/sessions/"+id, ""); got["checkout_status"] != "expired" {
		t.Fatalf("settled after expiry = %v", got)
	}
	if _, _, n := hook.Last(); n != 0 {
		t.Fatalf("%d webhooks; want none", n)
	}
}

func TestSimulator_ReversePayout(t *testing.T) {
	ws, srv, _, _ := newSim(t)
	_, p := call(t, srv.URL, http.MethodPost, "/v1/payout", `{"currency":"XOF","receive_amount":"500","mobile":"+221761110001","client_reference":"rev-1"}`)
	id := p["id"].(string)
	if code, e := call(t, srv.URL, http.MethodPost, "/v1/payout/"+id+"/reverse", ""); code != http.StatusConflict || e["code"] == nil {
		t.Fatalf("reversing a processing payout = %d %v", code, e)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/rev-1")
	for range 2 { // reversing is idempotent
		if code, body := call(t, srv.URL, http.MethodPost, "/v1/payout/"+id+"/reverse", ""); code != http.StatusOK || body != nil {
			t.Fatalf("reverse = %d %v; want 200, empty", code, body)
		}
	}
	if _, got := call(t, srv.URL, http.MethodGet, "/v1/payout/"+id, ""); got["status"] != "reversed" {
		t.Fatalf("reversed payout = %v", got)
	}
	// Settling it again changes nothing.
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+id)
	if _, got := call(t, srv.URL, http.MethodGet, "/v1/payout/"+id, ""); got["status"] != "reversed" {
		t.Fatalf("settled after its reversal = %v", got)
	}

	// Past the reversal window, refused.
	_, old := call(t, srv.URL, http.MethodPost, "/v1/payout", `{"currency":"XOF","receive_amount":"700","mobile":"+221761110002"}`)
	oldID := old["id"].(string)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+oldID)
	ws.Update(oldID, func(m *sim.Movement[simData]) { m.Created = m.Created.Add(-ReversalWindow - time.Minute) })
	if code, e := call(t, srv.URL, http.MethodPost, "/v1/payout/"+oldID+"/reverse", ""); code != http.StatusBadRequest || e["code"] != "payout-reversal-time-limit-exceeded" {
		t.Fatalf("reversing an old payout = %d %v", code, e)
	}
	if code, e := call(t, srv.URL, http.MethodPost, "/v1/payout/pt-unknown/reverse", ""); code != http.StatusNotFound || e["code"] != "payout-not-found" {
		t.Fatalf("unknown payout = %d %v", code, e)
	}
}
