package cinetpay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// simCall posts body (JSON) to the simulator's path and decodes its answer.
func simCall(t *testing.T, base, path string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := http.Post(base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// TestSimulator_Codes walks a payment through CinetPay's waiting codes
// and documented refusals (checkout/tableau): each waiting step is
// notified, each end once, and a check answers the code and its message.
func TestSimulator_Codes(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	srv := httptest.NewServer(&Simulator{APIKey: "api-1", SiteID: "445160", SecretKey: "secret-1"})
	defer srv.Close()
	pay := func(id, phone string) {
		t.Helper()
		got := simCall(t, srv.URL, "/v2/payment", map[string]any{"apikey": "api-1", "site_id": "445160", "transaction_id": id, "amount": 1500,
			"currency": "XOF", "description": "Commande", "notify_url": hook.URL + "/notify", "return_url": hook.URL + "/return",
			"channels": "MOBILE_MONEY", "customer_phone_number": phone, "lock_phone_number": true})
		if got["code"] != "201" {
			t.Fatalf("create %s = %v", id, got)
		}
	}
	check := func(id string) (code, message, status string) {
		t.Helper()
		got := simCall(t, srv.URL, "/v2/payment/check", map[string]any{"apikey": "api-1", "site_id": "445160", "transaction_id": id})
		data, _ := got["data"].(map[string]any)
		status, _ = data["status"].(string)
		return got["code"].(string), got["message"].(string), status
	}
	notified := func() (int, string) {
		_, bodies := hook.Received()
		if len(bodies) == 0 {
			return 0, ""
		}
		form, _ := url.ParseQuery(string(bodies[len(bodies)-1]))
		return len(bodies), form.Get("cpm_error_message")
	}

	pay("otp", "+2250707123456")
	if code, msg, status := check("otp"); code != "662" || msg != "WAITING_CUSTOMER_PAYMENT" || status != "WAITING_FOR_CUSTOMER" {
		t.Fatalf("a new payment = %s %s %s; want 662 WAITING_CUSTOMER_PAYMENT, WAITING_FOR_CUSTOMER", code, msg, status)
	}
	steps := 0
	for _, tc := range []struct{ control, code, message string }{
		{"623", "623", "WAITING_CUSTOMER_TO_VALIDATE"},
		{"WAITING_CUSTOMER_OTP_CODE", "663", "WAITING_CUSTOMER_OTP_CODE"},
	} {
		gatewaytest.Control(t, srv.URL, "/_sim/settle/otp?status="+tc.control)
		steps++
		if code, msg, status := check("otp"); code != tc.code || msg != tc.message || status != "WAITING_FOR_CUSTOMER" {
			t.Fatalf("after %s: %s %s %s; want %s %s, WAITING_FOR_CUSTOMER", tc.control, code, msg, status, tc.code, tc.message)
		}
		if n, msg := notified(); n != steps || msg != tc.message {
			t.Fatalf("after %s: %d notifications, the last %q; want %d, %s", tc.control, n, msg, steps, tc.message)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/otp?status=604")
	if code, msg, status := check("otp"); code != "604" || msg != "OTP_CODE_ERROR" || status != "REFUSED" {
		t.Fatalf("a wrong OTP code = %s %s %s; want 604 OTP_CODE_ERROR, REFUSED", code, msg, status)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/otp?status=00") // ended: stays refused, no notification
	if code, _, _ := check("otp"); code != "604" {
		t.Fatalf("a refused payment settled again = %s; want 604", code)
	}
	if n, msg := notified(); n != steps+1 || msg != "OTP_CODE_ERROR" {
		t.Fatalf("%d notifications, the last %q; want %d, OTP_CODE_ERROR", n, msg, steps+1)
	}

	for _, tc := range []struct{ control, code, message string }{
		{"INCORRECT_SETTINGS", "606", "INCORRECT_SETTINGS"},
		{"REFUSED", "627", "TRANSACTION_CANCEL"},
		{"ACCEPTED", "00", "SUCCES"},
	} {
		pay(tc.control, "+2250707123456")
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+tc.control+"?status="+tc.control)
		if code, msg, _ := check(tc.control); code != tc.code || msg != tc.message {
			t.Errorf("settled %s = %s %s; want %s %s", tc.control, code, msg, tc.code, tc.message)
		}
	}
	if got := gatewaytest.ControlStatus(t, srv.URL, "/_sim/settle/otp?status=SOMETHING"); got != http.StatusBadRequest {
		t.Errorf("a status CinetPay does not have = %d; want 400", got)
	}
	if got := gatewaytest.ControlStatus(t, srv.URL, "/_sim/settle/nobody"); got != http.StatusNotFound {
		t.Errorf("settling no payment = %d; want 404", got)
	}

	// A stuck number waits at the operator, unnotified (a lost payment).
	n, _ := notified()
	pay("lost", "+2250700000129")
	gatewaytest.Control(t, srv.URL, "/_sim/settle/lost")
	if code, msg, _ := check("lost"); code != "664" || msg != "WAITING_CUSTOMER_PAYMENT_AT_OPERATOR_SIDE" {
		t.Fatalf("a stuck payment = %s %s; want 664", code, msg)
	}
	if again, _ := notified(); again != n {
		t.Fatalf("a stuck payment was notified")
	}
}

// TestPayoutSim_Statuses moves a transfer through the waiting statuses
// of transfert/statuts (REC, NOS) by its client_transaction_id: the check
// shows them, no notification is sent until it ends.
func TestPayoutSim_Statuses(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	sim := &Simulator{APIKey: "api-1", SiteID: "445160", SecretKey: "secret-1", TransferPassword: "pw"}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, TransferBaseURL: srv.URL + "/v1", APIKey: "api-1", TransferPassword: "pw", HTTP: &http.Client{Timeout: time.Second}}
	ref := "a1111111-2222-4333-8444-555555555555"
	if _, err := c.Payout(t.Context(), payoutFor(ref, hook.URL)); err != nil {
		t.Fatal(err)
	}
	treatment := func() string {
		t.Helper()
		res, err := http.PostForm(srv.URL+"/v1/auth/login", url.Values{"apikey": {"api-1"}, "password": {"pw"}})
		if err != nil {
			t.Fatal(err)
		}
		var login struct{ Data struct{ Token string } }
		json.NewDecoder(res.Body).Decode(&login)
		res.Body.Close()
		res, err = http.Get(srv.URL + "/v1/transfer/check/money?token=" + login.Data.Token + "&client_transaction_id=" + ref)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct{ Data []map[string]any }
		json.NewDecoder(res.Body).Decode(&out)
		if len(out.Data) != 1 {
			t.Fatalf("check = %+v", out)
		}
		return out.Data[0]["treatment_status"].(string)
	}
	if got := treatment(); got != "NEW" {
		t.Fatalf("a sent transfer = %s; want NEW", got)
	}
	for _, step := range []string{"REC", "NOS"} {
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ref+"?status="+step)
		if got := treatment(); got != step {
			t.Fatalf("after ?status=%s: %s", step, got)
		}
	}
	if _, _, n := hook.Last(); n != 0 {
		t.Fatalf("%d notifications before the transfer ended; want none", n)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ref+"?status=REJ")
	_, body, n := hook.Last()
	if form, _ := url.ParseQuery(string(body)); n != 1 || form.Get("treatment_status") != "REJ" || treatment() != "REJ" {
		t.Fatalf("%d notifications, the last %s; want one, REJ", n, body)
	}
	if sim.Payouts() != 1 || sim.Calls() == 0 {
		t.Fatalf("%d payouts, %d calls; want 1 payout and the calls counted", sim.Payouts(), sim.Calls())
	}
}

// TestV1Simulator_Steps: an explicit PENDING is notified as each change
// of the API v1 is; a stuck number waits PENDING, unnotified.
func TestV1Simulator_Steps(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	srv := httptest.NewServer(&V1Simulator{APIKey: "sk_test_sim", APIPassword: "pw-1"})
	defer srv.Close()
	c := NewV1(srv.URL, "sk_test_sim", "pw-1", &http.Client{Timeout: time.Second})
	for _, tc := range []struct{ ref, phone, control, want string }{
		{"r-pending", "+2250707123456", "?status=PENDING", "PENDING"},
		{"r-stuck", "+2250700000129", "", ""},
	} {
		col := collectionFor(tc.ref, tc.phone, hook.URL)
		if _, err := c.Collect(t.Context(), col); err != nil {
			t.Fatal(err)
		}
		_, _, before := hook.Last()
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+tc.ref+tc.control)
		_, body, n := hook.Last()
		var note map[string]any
		json.Unmarshal(body, &note)
		if tc.want == "" && n != before || tc.want != "" && (n != before+1 || note["status"] != tc.want) {
			t.Errorf("%s%s: %d notifications (%d before), the last %s; want %q", tc.ref, tc.control, n, before, body, tc.want)
		}
	}
}

func payoutFor(ref, notify string) gateway.Payout {
	return gateway.Payout{Reference: ref, Amount: 5000, Currency: "XOF", Phone: "+2250707123456", Operator: "OM", Country: "CI",
		RecipientName: "Awa Kone", NotifyURL: notify + "/notify"}
}

func collectionFor(ref, phone, hook string) gateway.Collection {
	return gateway.Collection{Reference: ref, Amount: 1500, Currency: "XOF", Phone: phone, Name: "Awa Kone", Email: "awa@example.com",
		NotifyURL: hook + "/notify", ReturnURL: hook + "/return"}
}
