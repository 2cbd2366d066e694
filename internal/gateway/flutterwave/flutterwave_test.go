package flutterwave

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodeCharge_Golden(t *testing.T) {
	mine, documented := gatewaytest.DocumentedFields(t, encodeCharge(gateway.Collection{Reference: "MC-1585230950508", Amount: 1500, Currency: "UGX",
		Phone: "054709929220", Operator: "MTN", Email: "JoeBloggs@acme.co", Country: "UG"}), "charge_request_uganda.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	if c := encodeCharge(gateway.Collection{Reference: "r", Amount: 1550, Currency: "KES", Operator: "MPESA"}); c.Amount != "15.5" || c.Network != "" {
		t.Fatalf("KES M-Pesa charge = %+v; want 15.5 in major units and no network", c)
	}
}

func TestDecode_Golden(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	srv.Set("", http.StatusOK, gatewaytest.Golden(t, "charge_initiated.json"))
	if st, err := c.Collect(context.Background(), gateway.Collection{Reference: "MC-1585230950508", Country: "UG", Currency: "UGX", Amount: 1500}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("initiated = %+v, %v", st, err)
	}
	srv.Set("", http.StatusOK, gatewaytest.Golden(t, "verify_successful.json"))
	if st, err := c.CollectionStatus(context.Background(), gateway.Ref{Reference: "MC-1585230950508"}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef != "1191376" {
		t.Fatalf("verify = %+v, %v", st, err)
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
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567", Operator: "MTN", Country: "UG"}
	if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("status = %+v, %v", st, err)
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks", len(hooks))
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	_, forged := c.CallbackReference(http.Header{"Verif-Hash": {"guess"}}, bodies[0])
	if err != nil || ref != col.Reference || forged == nil {
		t.Fatalf("webhook = %q, %v; forged accepted: %v", ref, err, forged == nil)
	}
	poor := col
	poor.Reference, poor.Phone = "31111111-2222-4333-8444-555555555555", "+256770000049"
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
	refused := col
	refused.Reference, refused.Phone = "21111111-2222-4333-8444-555555555555", "+256770000039"
	if st, _ := c.Collect(ctx, refused); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "phone") {
		t.Fatalf("refused = %+v", st)
	}
	if _, err := c.Collect(ctx, gateway.Collection{Reference: "x", Country: "GH"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("Ghana (a redirect flow) = %v; want a lasting error", err)
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
	req, err := encodeTransfer(gateway.Payout{Reference: "UGX-WITHDRAWAL-0001", Amount: 350, Currency: "UGX", Phone: "+256703766009",
		Operator: "MTN", Country: "UG", RecipientName: "Catherine Ampaire", Description: "Uganda Withdrawal"})
	if err != nil {
		t.Fatal(err)
	}
	mine, documented := gatewaytest.DocumentedFields(t, req, "transfer_request_uganda.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented %v", mine, documented)
	}
	for _, tc := range []struct{ country, operator, bank string }{
		{"UG", "AIRTEL", "AIRTEL"}, {"RW", "MTN", "MTN"}, {"RW", "AIRTEL", "MPS"}, {"ZM", "MTN", "MPS"},
		{"TZ", "VODACOM", "VODACOM"}, {"TZ", "TIGO", "TIGO"}, {"TZ", "HALOPESA", "HALOPESA"}, {"TZ", "AIRTEL", "AIRTEL"},
	} {
		if r, err := encodeTransfer(gateway.Payout{Country: tc.country, Operator: tc.operator, Currency: "ZMW", Amount: 1550}); err != nil || r.AccountBank != tc.bank || r.Amount != "15.5" {
			t.Errorf("%s %s = %+v, %v; want account_bank %s, 15.5 in major units", tc.country, tc.operator, r, err, tc.bank)
		}
	}
	if _, err := encodeTransfer(gateway.Payout{Country: "KE", Operator: "MPESA"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("M-Pesa Kenya (needs the sender in meta) = %v; want a lasting error", err)
	}
}

func TestDecodeTransfer_Golden(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "akhlm-pstmnpyt-rfxxgjlsioens007_PMCKDU_1", Amount: 350, Currency: "UGX", Phone: "+256703766009", Operator: "MTN", Country: "UG"}
	for _, tc := range []struct {
		fixture string
		inline  string
		code    int
		call    func() (gateway.Status, error)
		want    gateway.Status
	}{
		{fixture: "transfer_queued.json", call: func() (gateway.Status, error) { return c.Payout(ctx, p) },
			want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "396432"}},
		{fixture: "transfer_fetched_successful.json", call: func() (gateway.Status, error) {
			return c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference, ProviderRef: "396432"})
		}, want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "396432"}},
		{fixture: "transfers_list_failed.json", call: func() (gateway.Status, error) {
			return c.PayoutStatus(ctx, gateway.Ref{Reference: "6b76aa8f93bd765c"})
		}, want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "403318", Reason: "beneficiary_name is required"}},
		{fixture: "transfers_list_failed.json", call: func() (gateway.Status, error) {
			return c.PayoutStatus(ctx, gateway.Ref{Reference: "another-reference"})
		}, want: gateway.Status{Outcome: gateway.NotFound}},
		// A transfer queued, then failed for want of funds: Flutterwave's words in complete_message.
		{inline: `{"status":"success","message":"Transfers fetched","data":[{"id":9,"reference":"r-9","status":"FAILED","complete_message":"DISBURSE FAILED: Insufficient funds in customer wallet"}]}`,
			call: func() (gateway.Status, error) { return c.PayoutStatus(ctx, gateway.Ref{Reference: "r-9"}) },
			want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "9", Reason: "DISBURSE FAILED: Insufficient funds in customer wallet", LowBalance: true}},
		// The error shape (developer.flutterwave.com/docs/flutterwave-errors) refusing a transfer.
		{inline: `{"status":"error","message":"Insufficient funds in customer wallet","data":null}`, code: http.StatusBadRequest,
			call: func() (gateway.Status, error) { return c.Payout(ctx, p) },
			want: gateway.Status{Outcome: gateway.Failed, Reason: "Insufficient funds in customer wallet", LowBalance: true}},
	} {
		answer, code := []byte(tc.inline), tc.code
		if tc.fixture != "" {
			answer = gatewaytest.Golden(t, tc.fixture)
		}
		if code == 0 {
			code = http.StatusOK
		}
		srv.Set("", code, answer)
		got, err := tc.call()
		if err != nil || got != tc.want {
			t.Errorf("%s%s: %+v, %v; want %+v", tc.fixture, tc.inline, got, err, tc.want)
		}
	}
	c.SecretHash = "h"
	ref, err := c.CallbackReference(http.Header{"Verif-Hash": {"h"}}, gatewaytest.Golden(t, "transfer_webhook_v2.json"))
	if err != nil || ref != "rave-transfer-15028609" {
		t.Fatalf("transfer webhook (older shape) = %q, %v", ref, err)
	}
}

func TestPayout_AgainstSimulator(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	ctx := context.Background()
	if c.IdempotentPayout() {
		t.Fatal("Flutterwave does not document that a repeated reference is refused")
	}
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567",
		Operator: "MTN", Country: "UG", RecipientName: "Catherine Ampaire", Description: "Retrait"}
	st, err := c.Payout(ctx, p)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	id := st.ProviderRef
	// Sent again with the same reference: refused as a duplicate, answered with the first.
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
	if sim.Payouts() != 2 {
		t.Fatalf("%d payouts accepted; want 2 (refusals aside)", sim.Payouts())
	}
	unknown := "91111111-2222-4333-8444-555555555555"
	for _, ref := range []gateway.Ref{{Reference: poor.Reference}, {Reference: unknown}, {Reference: unknown, ProviderRef: "999"}, {Reference: unknown, ProviderRef: id}} {
		if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.NotFound {
			t.Fatalf("status %+v = %+v, %v; want not found", ref, st, err)
		}
	}
	if _, err := c.Payout(ctx, gateway.Payout{Reference: "x", Country: "KE", Operator: "MPESA"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("M-Pesa Kenya = %v; want a lasting error", err)
	}
	bad := &Client{BaseURL: srv.URL, SecretKey: "wrong"}
	if _, err := bad.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key = %v; want a lasting error", err)
	}

	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500-initiate")
	fresh := p
	fresh.Reference = "e1111111-2222-4333-8444-555555555555"
	if _, err := c.Payout(ctx, fresh); !gateway.IsTransient(err) {
		t.Fatalf("500 on initiation: %v; want a transient error", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference, ProviderRef: id}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v; want a transient error", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: fresh.Reference}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("a payout refused with a 500 = %+v, %v; want not found", st, err)
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
