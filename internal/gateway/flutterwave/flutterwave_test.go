package flutterwave

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodeCharge_Golden(t *testing.T) {
	ug := gateway.Collection{Reference: "cauri-ug-7f3a2c", Amount: 1500, Currency: "UGX", Phone: "+256771234567", Operator: "MTN",
		Country: "UG", Email: "payer@example.org", Name: "Amina Nakato", ReturnURL: "https://pay.example.org/return/cauri-ug-7f3a2c"}
	mine, documented := gatewaytest.DocumentedFields(t, encodeCharge(ug), "charge_request_uganda.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	tz := gateway.Collection{Reference: "cauri-tz-51b9e0", Amount: 250000, Currency: "TZS", Phone: "+255621234567", Operator: "HALOPESA",
		Country: "TZ", Email: "payer@example.org"}
	mine, documented = gatewaytest.DocumentedFields(t, encodeCharge(tz), "charge_request_tanzania.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	ci := gateway.Collection{Reference: "cauri-ci-0c44d1", Amount: 500, Currency: "XOF", Phone: "+2250701234567", Operator: "ORANGEMONEY",
		Country: "CI", Email: "payer@example.org"}
	mine, documented = gatewaytest.DocumentedFields(t, encodeCharge(ci), "charge_request_franco.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	rw := gateway.Collection{Reference: "cauri-rw-33aa10", Amount: 1500, Currency: "RWF", Phone: "+250781234567", Operator: "MTN",
		Country: "RW", Email: "payer@example.org"}
	mine, documented = gatewaytest.DocumentedFields(t, encodeCharge(rw), "charge_request_rwanda.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	// The providers.json codes are sent as Node-v3's momoSchema spells them.
	for _, tc := range []struct{ country, operator, network, franco string }{
		{"UG", "MTN", "MTN", ""}, {"UG", "AIRTEL", "AIRTEL", ""}, {"RW", "AIRTEL", "AIRTEL", ""}, {"ZM", "ZAMTEL", "ZAMTEL", ""},
		{"GH", "MTN", "MTN", ""}, {"GH", "VODAFONE", "VODAFONE", ""}, {"GH", "AIRTELTIGO", "AIRTELTIGO", ""},
		{"TZ", "VODACOM", "VODACOM", ""}, {"TZ", "HALOPESA", "HALOPESA", ""}, {"KE", "MPESA", "", ""},
		{"CM", "MTN", "MTN", "CM"}, {"SN", "WAVE", "WAVE", "SN"}, {"BF", "ORANGEMONEY", "ORANGEMONEY", "BF"},
	} {
		if got := encodeCharge(gateway.Collection{Country: tc.country, Operator: tc.operator}); got.Network != tc.network || got.Country != tc.franco {
			t.Errorf("%s %s: network %q, country %q; want %q, %q", tc.country, tc.operator, got.Network, got.Country, tc.network, tc.franco)
		}
	}
	long := strings.Repeat("é", 120)
	if got := encodeCharge(gateway.Collection{Name: long}).Fullname; len([]rune(got)) != 100 {
		t.Errorf("fullname of %d runes; want 100 (Node-v3 caps it)", len([]rune(got)))
	}
	if c := encodeCharge(gateway.Collection{Reference: "r", Amount: 1550, Currency: "KES", Operator: "MPESA", Country: "KE"}); c.Amount != "15.5" {
		t.Fatalf("KES M-Pesa charge = %+v; want 15.5 in major units", c)
	}
}

// TestCollect_UntakenModeIsNoRefusal: an authorization mode this
// connector does not take (PHP-v3 AuthMode: pin, otp, ...) follows a
// charge Flutterwave made, so it is never "not sent" (TestConformance
// holds the rest of the initiation's answers).
func TestCollect_UntakenModeIsNoRefusal(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	srv.Set("", http.StatusOK, []byte(`{"status":"success","message":"Charge initiated","data":{"id":5,"tx_ref":"r","status":"pending"},"meta":{"authorization":{"mode":"otp"}}}`))
	if _, err := c.Collect(context.Background(), gateway.Collection{Reference: "r", Country: "CI", Currency: "XOF", Amount: 1}); !gateway.IsTransient(err) || gateway.ErrorOf(err).NotSent {
		t.Fatalf("otp mode: %v; want a transient error, not 'not sent'", err)
	}
}

// newSim starts the simulator on loopback, its webhooks to hook, and a
// client facing it.
func newSim(t *testing.T) (sim *Simulator, srv *httptest.Server, c *Client, hook *gatewaytest.Receiver) {
	hook = gatewaytest.NewReceiver(t)
	sim = &Simulator{SecretKey: "FLWSECK_TEST-sim", SecretHash: "hash-123", WebhookURL: hook.URL}
	srv = httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c = &Client{BaseURL: srv.URL, SecretKey: "FLWSECK_TEST-sim", SecretHash: "hash-123", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return sim, srv, c, hook
}

func TestClient_AgainstSimulator(t *testing.T) {
	_, srv, c, hook := newSim(t)
	ctx := context.Background()
	// Uganda: Flutterwave's authorization page, no id; followed by tx_ref.
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567",
		Operator: "MTN", Country: "UG", ReturnURL: hook.URL + "/back"}
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef != "" || !strings.HasPrefix(st.RedirectURL, srv.URL+"/_sim/pay/") {
		t.Fatalf("collect = %+v, %v; want pending on Flutterwave's page, no id", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status before the page = %+v, %v", st, err)
	}
	res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}, "otp": {testOTP}})
	if err != nil || res.Request.URL.Path != "/back" {
		t.Fatalf("paying on the page: %v, %v; want back at the return address", res, err)
	}
	res.Body.Close()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("status = %+v, %v", st, err)
	}
	hooks, bodies := hook.Received()
	var charges int
	for i, h := range hooks {
		if h.URL.Path == "/back" {
			continue
		}
		charges++
		ref, err := c.CallbackReference(h.Header, bodies[i])
		_, forged := c.CallbackReference(http.Header{"Verif-Hash": {"guess"}}, bodies[i])
		if err != nil || ref != col.Reference || forged == nil {
			t.Fatalf("webhook = %q, %v; forged accepted: %v", ref, err, forged == nil)
		}
	}
	if charges != 1 {
		t.Fatalf("%d charge webhooks; want 1", charges)
	}
	// Declined on the page.
	declined := col
	declined.Reference = "41111111-2222-4333-8444-555555555555"
	st, _ = c.Collect(ctx, declined)
	if res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"decline"}}); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: declined.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("declined = %+v", st)
	}
	// Rwanda, Zambia and Ghana redirect too.
	for i, cc := range []struct{ country, currency, operator, phone string }{
		{"RW", "RWF", "MTN", "+250781234567"}, {"ZM", "ZMW", "MTN", "+260961234567"}, {"GH", "GHS", "VODAFONE", "+233201234567"},
	} {
		redirect := gateway.Collection{Reference: fmt.Sprintf("7111111%d-2222-4333-8444-555555555555", i), Amount: 1000, Currency: cauri.Currency(cc.currency),
			Phone: cc.phone, Operator: cc.operator, Country: cc.country}
		if st, err := c.Collect(ctx, redirect); err != nil || st.Outcome != gateway.Pending || st.RedirectURL == "" {
			t.Fatalf("%s = %+v, %v; want a redirect", cc.country, st, err)
		}
	}
	// Tanzania: a push, the charge's id at once.
	tz := gateway.Collection{Reference: "51111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "TZS", Phone: "+255621234567",
		Operator: "HALOPESA", Country: "TZ"}
	if st, err := c.Collect(ctx, tz); err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" || st.RedirectURL != "" {
		t.Fatalf("Tanzania = %+v, %v; want a pending push with its id", st, err)
	}
	poor := tz
	poor.Reference, poor.Phone = "31111111-2222-4333-8444-555555555555", "+255620000049"
	if st, err := c.Collect(ctx, poor); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+poor.Reference+"?status=successful") // early: the charge is pending
	early, earlyBody, _ := hook.Last()
	if ref, err := c.CallbackReference(early, earlyBody); err != nil || ref != poor.Reference || !strings.Contains(string(earlyBody), `"successful"`) {
		t.Fatalf("claimed webhook = %q, %v (%s)", ref, err, earlyBody)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("status after an early webhook = %+v; the charge is still pending", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+poor.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Insufficient funds") {
		t.Fatalf("low balance = %+v", st)
	}
	refused := tz
	refused.Reference, refused.Phone = "21111111-2222-4333-8444-555555555555", "+255620000039"
	if st, _ := c.Collect(ctx, refused); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "phone") {
		t.Fatalf("refused = %+v", st)
	}
	// The simulator takes Node-v3's networks only (Vodafone is Ghana's, not Tanzania's) and Rwanda's order_id.
	for _, tc := range []struct {
		typ string
		req chargeRequest
	}{
		{"mobile_money_tanzania", chargeRequest{TxRef: "61111111-2222-4333-8444-555555555555", Amount: "100", Currency: "TZS", Email: "a@example.org",
			PhoneNumber: "255621234567", Network: "Vodafone"}},
		{"mobile_money_rwanda", chargeRequest{TxRef: "62111111-2222-4333-8444-555555555555", Amount: "100", Currency: "RWF", Email: "a@example.org",
			PhoneNumber: "250781234567", Network: "MTN"}},
		{"mobile_money_franco", chargeRequest{TxRef: "63111111-2222-4333-8444-555555555555", Amount: "100", Currency: "XOF", Email: "a@example.org",
			PhoneNumber: "2250701234567", Network: "ORANGEMONEY", Country: "CM"}},
	} {
		var a answer
		if code, _ := c.call(ctx, http.MethodPost, "/charges?type="+tc.typ, tc.req, &a); code != http.StatusBadRequest {
			t.Errorf("%s %+v = %d; want refused", tc.typ, tc.req, code)
		}
	}
	// Côte d'Ivoire, francophone: a push (mode callback), its id at once.
	ci := gateway.Collection{Reference: "81111111-2222-4333-8444-555555555555", Amount: 500, Currency: "XOF", Phone: "+2250701234567",
		Operator: "ORANGEMONEY", Country: "CI"}
	if st, err := c.Collect(ctx, ci); err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" || st.RedirectURL != "" {
		t.Fatalf("francophone = %+v, %v; want a pending push", st, err)
	}
	_, err = c.Collect(ctx, gateway.Collection{Reference: "x", Country: "NG", Currency: "NGN", Operator: "MTN"})
	if e := gateway.ErrorOf(err); e == nil || !e.NotSent {
		t.Fatalf("Nigeria = %v; want a not-sent error", err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v", err)
	}
}

func TestEncodeTransfer_Golden(t *testing.T) {
	req, err := encodeTransfer(gateway.Payout{Reference: "cauri-tr-9d1e77", Amount: 350, Currency: "UGX", Phone: "+256701234567",
		Operator: "AIRTEL", Country: "UG", RecipientName: "Okello Brian", Description: "Cauri payout"})
	if err != nil {
		t.Fatal(err)
	}
	mine, documented := gatewaytest.DocumentedFields(t, req, "transfer_request_uganda.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	for _, tc := range []struct{ country, operator, bank string }{
		{"UG", "MTN", "MTN"}, {"UG", "AIRTEL", "Airtel"}, {"RW", "MTN", "MTN"}, {"RW", "AIRTEL", "MPS"}, {"ZM", "MTN", "MPS"},
		{"TZ", "VODACOM", "VODACOM"}, {"TZ", "TIGO", "TIGO"}, {"TZ", "HALOPESA", "HALOPESA"}, {"TZ", "AIRTEL", "AIRTEL"},
		{"ZM", "AIRTEL", "MPS"}, {"ZM", "ZAMTEL", "MPS"},
	} {
		if r, err := encodeTransfer(gateway.Payout{Country: tc.country, Operator: tc.operator, Currency: "ZMW", Amount: 1550}); err != nil || r.AccountBank != tc.bank || r.Amount != "15.5" {
			t.Errorf("%s %s = %+v, %v; want account_bank %s, 15.5 in major units", tc.country, tc.operator, r, err, tc.bank)
		}
	}
	long, err := encodeTransfer(gateway.Payout{Country: "UG", Operator: "MTN", Description: strings.Repeat("x", 140),
		NotifyURL: "https://cauri.example.org/callbacks/" + strings.Repeat("g", 90)})
	if err != nil || len(long.Narration) != 100 || long.CallbackURL != "" {
		t.Errorf("long narration and callback = %q, %q, %v; want 100 characters and none (Node-v3 caps both at 100)", long.Narration, long.CallbackURL, err)
	}
	for _, p := range []gateway.Payout{{Country: "KE", Operator: "MPESA"}, {Country: "GH", Operator: "MTN"}, {Country: "CI", Operator: "WAVE"}} {
		if _, err := encodeTransfer(p); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
			t.Errorf("%s %s = %v; want a not-sent error", p.Country, p.Operator, err)
		}
	}
}

// TestTransferLookup_Golden: without the transfer's id, our reference is
// looked for in the transfers Flutterwave lists; a transfer not found
// there, a repeat refused, or an answer that is no refusal, is an error
// saying it may have been received, never "not sent" (the conformance
// suite, whose status reads carry the id, cannot forbid NotSent); and the
// calls made for each.
func TestTransferLookup_Golden(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "cauri-tr-9d1e77", Amount: 350, Currency: "UGX", Phone: "+256701234567", Operator: "AIRTEL", Country: "UG",
		RecipientName: "Okello Brian"}
	for _, tc := range []struct {
		fixture   string
		code      int
		call      func() (gateway.Status, error)
		want      gateway.Status
		unproven  bool // an error saying it may have been received
		wantCalls string
	}{
		// No id: the list, our reference found by exact match.
		{fixture: "transfers_list_failed.json", call: func() (gateway.Status, error) {
			return c.PayoutStatus(ctx, gateway.Ref{Reference: "cauri-tr-4a0b12"})
		}, want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "610240", Reason: "beneficiary_name is required"}, wantCalls: "GET /transfers"},
		{fixture: "transfers_list_failed.json", call: func() (gateway.Status, error) {
			return c.PayoutStatus(ctx, gateway.Ref{Reference: "cauri-tr-9d1e77"})
		}, want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "610233"}, wantCalls: "GET /transfers"},
		// Not in the list: never "not found", the transfer may exist.
		{fixture: "transfers_list_failed.json", call: func() (gateway.Status, error) {
			return c.PayoutStatus(ctx, gateway.Ref{Reference: "another-reference"})
		}, unproven: true, wantCalls: "GET /transfers"},
		// Sent again: Flutterwave refuses the reference; the first transfer answers.
		{fixture: "transfer_duplicate.json", code: http.StatusBadRequest, call: func() (gateway.Status, error) { return c.Payout(ctx, p) },
			wantCalls: "POST /transfers, GET /transfers"},
		// A 4xx that is not Flutterwave's refusal proves nothing.
		{fixture: `{"message":"upstream"}`, code: http.StatusTooManyRequests, call: func() (gateway.Status, error) { return c.Payout(ctx, p) },
			unproven: true, wantCalls: "POST /transfers"},
		// A transfer failed for want of funds, in the older webhook's case.
		{fixture: `{"status":"success","message":"Transfers fetched","meta":{"page_info":{"total_pages":1}},"data":[{"id":9,"reference":"r-9","status":"Failed","complete_message":"DISBURSE FAILED: Insufficient funds in customer wallet"}]}`,
			call: func() (gateway.Status, error) { return c.PayoutStatus(ctx, gateway.Ref{Reference: "r-9"}) },
			want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "9", Reason: "DISBURSE FAILED: Insufficient funds in customer wallet", LowBalance: true}, wantCalls: "GET /transfers"},
	} {
		answer, code := []byte(tc.fixture), tc.code
		if strings.HasSuffix(tc.fixture, ".json") {
			answer = gatewaytest.Golden(t, tc.fixture)
		}
		if code == 0 {
			code = http.StatusOK
		}
		srv.Set("", code, answer)
		before := len(srv.Calls())
		got, err := tc.call()
		calls := strings.Join(srv.Calls()[before:], ", ")
		switch {
		case tc.unproven:
			if e := gateway.ErrorOf(err); e == nil || !e.Transient || e.NotSent || got.Outcome == gateway.NotFound {
				t.Errorf("%s: %+v, %v; want an error that it may have been received", tc.fixture, got, err)
			}
		case tc.fixture == "transfer_duplicate.json":
			// The duplicate's lookup reads the same answer, which lists no
			// transfer: unproven, never a failure nor "not found".
			if e := gateway.ErrorOf(err); e == nil || !e.Transient || e.NotSent || got.Outcome == gateway.Failed {
				t.Errorf("%s: %+v, %v; want an error, never a failure", tc.fixture, got, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s: %+v, %v; want %+v", tc.fixture, got, err, tc.want)
		}
		if calls != tc.wantCalls {
			t.Errorf("%s: calls %s; want %s", tc.fixture, calls, tc.wantCalls)
		}
	}
}

func TestPayoutStatus_WalksThePages(t *testing.T) {
	// Flutterwave documents no reference filter: our transfer may be on a
	// later page of all the account's transfers.
	rec := gatewaytest.NewRecorder(t, func(r *http.Request) (int, []byte) {
		page := r.URL.Query().Get("page")
		if r.URL.Query().Get("reference") != "r-2" {
			return http.StatusBadRequest, []byte(`{"status":"error","message":"no reference"}`)
		}
		if page == "3" {
			return http.StatusOK, []byte(`{"status":"success","meta":{"page_info":{"total_pages":3}},"data":[{"id":2,"reference":"r-2","status":"SUCCESSFUL"}]}`)
		}
		return http.StatusOK, []byte(`{"status":"success","meta":{"page_info":{"total_pages":3}},"data":[{"id":1,"reference":"r-1","status":"NEW"}]}`)
	})
	c := &Client{BaseURL: rec.URL, SecretKey: "k"}
	st, err := c.PayoutStatus(context.Background(), gateway.Ref{Reference: "r-2"})
	if err != nil || st != (gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "2"}) {
		t.Fatalf("status = %+v, %v; want found on page 3", st, err)
	}
	if n := len(rec.Requests()); n != 3 {
		t.Fatalf("%d requests; want 3 pages", n)
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	if c.IdempotentPayout() {
		t.Fatal("Flutterwave does not document that a repeated reference is refused")
	}
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567",
		Operator: "MTN", Country: "UG", RecipientName: "Okello Brian", Description: "Retrait"}
	st, err := c.Payout(ctx, p)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	id := st.ProviderRef
	// Sent again with the same reference (the service never does, but a
	// person might): refused as a duplicate, answered with the first.
	if again, err := c.Payout(ctx, p); err != nil || again != st || sim.Payouts() != 1 {
		t.Fatalf("payout again = %+v, %v; %d payouts; want %+v and one payout", again, err, sim.Payouts(), st)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.Pending || st.ProviderRef != id {
		t.Fatalf("status by reference = %+v, %v", st, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.NotFound {
		t.Fatalf("a transfer read as a charge = %+v; want not found", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	for _, ref := range []gateway.Ref{{Reference: p.Reference, ProviderRef: id}, {Reference: p.Reference}} {
		if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef != id {
			t.Fatalf("status %+v after settling = %+v, %v", ref, st, err)
		}
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 || !strings.Contains(string(bodies[0]), `"transfer.completed"`) {
		t.Fatalf("%d webhooks: %s", len(hooks), bodies)
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	_, forged := c.CallbackReference(http.Header{"Verif-Hash": {"guess"}}, bodies[0])
	if err != nil || ref != p.Reference || forged == nil {
		t.Fatalf("webhook = %q, %v; forged accepted: %v", ref, err, forged == nil)
	}

	poor := p
	poor.Reference, poor.Phone = "b1111111-2222-4333-8444-555555555555", "+256770000049"
	if st, err := c.Payout(ctx, poor); err != nil || st.Outcome != gateway.Failed || !st.LowBalance {
		t.Fatalf("low balance = %+v, %v; want failed, LowBalance", st, err)
	}
	refused := p
	refused.Reference, refused.Phone = "c1111111-2222-4333-8444-555555555555", "+256770000039"
	if st, err := c.Payout(ctx, refused); err != nil || st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "account_number") {
		t.Fatalf("invalid recipient = %+v, %v", st, err)
	}
	lost := p
	lost.Reference, lost.Phone = "d1111111-2222-4333-8444-555555555555", "+256770000029"
	if st, err := c.Payout(ctx, lost); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+lost.Reference)
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: lost.Reference}); err != nil || st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "DISBURSE FAILED") {
		t.Fatalf("failed payout = %+v, %v", st, err)
	}
	// Airtel Uganda as the transfer guide spells it.
	airtel := p
	airtel.Reference, airtel.Operator, airtel.Phone = "f1111111-2222-4333-8444-555555555555", "AIRTEL", "+256701234567"
	if st, err := c.Payout(ctx, airtel); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("Airtel payout = %+v, %v", st, err)
	}
	if sim.Payouts() != 3 {
		t.Fatalf("%d payouts accepted; want 3 (refusals aside)", sim.Payouts())
	}
	// Nothing Flutterwave says proves a transfer absent: never "not found".
	unknown := "91111111-2222-4333-8444-555555555555"
	for _, ref := range []gateway.Ref{{Reference: poor.Reference}, {Reference: unknown}, {Reference: unknown, ProviderRef: "999"}, {Reference: unknown, ProviderRef: id}} {
		st, err := c.PayoutStatus(ctx, ref)
		if e := gateway.ErrorOf(err); e == nil || !e.Transient || st.Outcome == gateway.NotFound {
			t.Fatalf("status %+v = %+v, %v; want an error, never not found", ref, st, err)
		}
	}
	if _, err := c.Payout(ctx, gateway.Payout{Reference: "x", Country: "KE", Operator: "MPESA"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("M-Pesa Kenya = %v; want a lasting error", err)
	}
	bad := &Client{BaseURL: srv.URL, SecretKey: "wrong"}
	if _, err := bad.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key = %v; want a lasting error", err)
	}

	// A 500 on the transfer's creation: it may have been received.
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500-initiate")
	fresh := p
	fresh.Reference = "e1111111-2222-4333-8444-555555555555"
	if _, err := c.Payout(ctx, fresh); !gateway.IsTransient(err) || gateway.ErrorOf(err).NotSent {
		t.Fatalf("500 on initiation: %v; want a transient error, not 'not sent'", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference, ProviderRef: id}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v; want a transient error", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: fresh.Reference}); err == nil || st.Outcome == gateway.NotFound {
		t.Fatalf("a payout answered with a 500 = %+v, %v; want unknown (an error), never not found", st, err)
	}
	if sim.Payouts() != 3 {
		t.Fatalf("%d payouts; want 3: nothing sent twice", sim.Payouts())
	}
}

func TestSimulator_TransferSettlesAfterDelay(t *testing.T) {
	sim := &Simulator{SecretKey: "k", SettleAfter: 50 * time.Millisecond}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "TZS", Phone: "+255712345678",
		Operator: "VODACOM", Country: "TZ", RecipientName: "Neema Mushi"}
	stuck := p
	stuck.Reference, stuck.Phone = "b1111111-2222-4333-8444-555555555555", "+255710000129"
	for _, q := range []gateway.Payout{p, stuck} {
		if st, err := c.Payout(ctx, q); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("payout = %+v, %v", st, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay: %+v", st)
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: stuck.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck transfer: %+v; want still pending", st)
	}
}
