package flutterwave

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestSimulator_AuthorizationPage: Flutterwave's page of a redirect charge
// asks the test-mode OTP; a wrong one leaves the charge pending.
func TestSimulator_AuthorizationPage(t *testing.T) {
	_, _, c, hook := newSim(t)
	ctx := context.Background()
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567",
		Operator: "AIRTEL", Country: "UG", ReturnURL: hook.URL + "/back"}
	st, err := c.Collect(ctx, col)
	if err != nil || st.RedirectURL == "" {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	res, err := http.Get(st.RedirectURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), `name="otp"`) || !strings.Contains(string(page), testOTP) {
		t.Fatalf("the page asks no OTP:\n%s", page)
	}
	for _, otp := range []string{"", "654321"} {
		res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}, "otp": {otp}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || res.Request.URL.Path == "/back" {
			t.Fatalf("OTP %q = %d at %s; want refused on the page", otp, res.StatusCode, res.Request.URL.Path)
		}
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("after OTP %q: %+v, %v; want still pending", otp, st, err)
		}
	}
	res, err = http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}, "otp": {testOTP}})
	if err != nil || res.Request.URL.Path != "/back" {
		t.Fatalf("paying with the test OTP: %v, %v", res, err)
	}
	res.Body.Close()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("status = %+v, %v", st, err)
	}
}

// TestSimulator_RedirectChargeWaitsForTheCustomer: SettleAfter does not
// settle a redirect charge nobody authorized; it runs from the page.
func TestSimulator_RedirectChargeWaitsForTheCustomer(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	s := &Simulator{SecretKey: "k", SecretHash: "h", WebhookURL: hook.URL, SettleAfter: 30 * time.Millisecond}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	ctx := context.Background()
	col := gateway.Collection{Reference: "21111111-2222-4333-8444-555555555555", Amount: 1000, Currency: "RWF", Phone: "+250781234567",
		Operator: "MTN", Country: "RW"}
	st, err := c.Collect(ctx, col)
	if err != nil || st.RedirectURL == "" {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	time.Sleep(150 * time.Millisecond)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("unauthorized after the delay = %+v; want pending", st)
	}
	if _, _, n := hook.Last(); n != 0 {
		t.Fatalf("%d webhooks for a charge nobody authorized", n)
	}
	res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}, "otp": {testOTP}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	time.Sleep(150 * time.Millisecond)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); st.Outcome != gateway.Succeeded {
		t.Fatalf("authorized, after the delay = %+v; want succeeded", st)
	}
}

// TestSimulator_Lifecycle holds the statuses in Flutterwave's words: a
// charge ends lower case, a transfer upper case whatever the control
// call's case; PENDING only moves a transfer (no webhook); a word
// Flutterwave does not use is refused; a charge's data carries its amount
// and currency; a settle without status on a redirect charge stands for
// the customer's authorization; a transfer is found by its id too.
func TestSimulator_Lifecycle(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	tz := gateway.Collection{Reference: "31111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "TZS", Phone: "+255621234567",
		Operator: "HALOPESA", Country: "TZ"}
	if _, err := c.Collect(ctx, tz); err != nil {
		t.Fatal(err)
	}
	if code := gatewaytest.ControlStatus(t, srv.URL, "/_sim/settle/"+tz.Reference+"?status=expired"); code != http.StatusBadRequest {
		t.Fatalf("settle to expired = %d; want 400, no such status", code)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+tz.Reference+"?status=FAILED")
	var v struct {
		Data map[string]any `json:"data"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/transactions/verify_by_reference?tx_ref="+tz.Reference, nil, &v); err != nil {
		t.Fatal(err)
	}
	if v.Data["status"] != "failed" || v.Data["amount"] != 25.0 || v.Data["currency"] != "TZS" || v.Data["flw_ref"] == "" {
		t.Fatalf("verify = %v; want failed, 25 TZS (major units), a flw_ref", v.Data)
	}
	_, body, _ := hook.Last()
	if !strings.Contains(string(body), `"status":"failed"`) {
		t.Fatalf("webhook = %s", body)
	}

	ug := gateway.Collection{Reference: "41111111-2222-4333-8444-555555555555", Amount: 1000, Currency: "UGX", Phone: "+256771234567",
		Operator: "MTN", Country: "UG"}
	if _, err := c.Collect(ctx, ug); err != nil {
		t.Fatal(err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+ug.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: ug.Reference}); st.Outcome != gateway.Succeeded {
		t.Fatalf("redirect charge settled by the control call = %+v", st)
	}

	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567",
		Operator: "MTN", Country: "UG", RecipientName: "Okello Brian"}
	st, err := c.Payout(ctx, p)
	if err != nil || st.ProviderRef == "" {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	_, _, before := hook.Last()
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+st.ProviderRef+"?status=PENDING")
	var list struct {
		Data []transfer `json:"data"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/transfers?status=PENDING", nil, &list); err != nil || len(list.Data) != 1 || list.Data[0].Reference != p.Reference {
		t.Fatalf("PENDING transfers = %+v, %v", list.Data, err)
	}
	if _, _, n := hook.Last(); n != before {
		t.Fatal("a webhook for a transfer still pending")
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+st.ProviderRef+"?status=successful")
	_, body, _ = hook.Last()
	var ev struct {
		Event string
		Data  transfer
	}
	json.Unmarshal(body, &ev)
	if ev.Event != "transfer.completed" || ev.Data.Status != "SUCCESSFUL" || ev.Data.Reference != p.Reference {
		t.Fatalf("webhook = %s", body)
	}

	// A tx_ref and a transfer reference are unique each among their own.
	same := gateway.Collection{Reference: p.Reference, Amount: 2500, Currency: "TZS", Phone: "+255621234567", Operator: "HALOPESA", Country: "TZ"}
	if st, err := c.Collect(ctx, same); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("a charge with a transfer's reference = %+v, %v; want taken", st, err)
	}
}
