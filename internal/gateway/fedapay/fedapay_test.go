package fedapay

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodeTransaction_Golden(t *testing.T) {
	col := gateway.Collection{Reference: "r-1", Amount: 2000, Currency: "XOF", Phone: "+22997808080", Country: "BJ",
		Description: "Transaction for payer@example.org", Name: "Koffi Adjovi", Email: "payer@example.org",
		ReturnURL: "https://pay.example.org/return/104"}
	mine, documented := gatewaytest.DocumentedFields(t, encodeTransaction(col), "transaction_request.json")
	if len(mine) != len(documented)+1 || mine["custom_metadata"] == nil {
		t.Fatalf("request = %v; want the documented fields and custom_metadata", mine)
	}
	col.Card, col.Name, col.Email = true, "", ""
	if r := encodeTransaction(col); r.Customer != nil {
		t.Fatalf("an anonymous card payment sends customer %+v", r.Customer)
	}
}

func TestEncodeSend_Golden(t *testing.T) {
	col := gateway.Collection{Reference: "r-1", Amount: 2000, Currency: "XOF", Phone: "+22997808080", Country: "BJ", Operator: "mtn_open"}
	mine, documented := gatewaytest.DocumentedFields(t, encodeSend(col, "tok_cauri_fixture_104"), "send_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented fields %v", mine, documented)
	}
	for _, tc := range []struct{ mode, want string }{{"mtn_open", "/mtn_open"}, {"moov_tg", "/moov_tg"}, {"a/b", "/a%2Fb"}} {
		if got := sendPath(tc.mode); got != tc.want {
			t.Errorf("sendPath(%q) = %q; want %q", tc.mode, got, tc.want)
		}
	}
}

func TestCollect_RefusesWithoutMode(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	for _, col := range []gateway.Collection{{Reference: "r", Amount: 100, Currency: "XOF", Phone: "+22997808080"},
		{Reference: "r", Amount: 100, Currency: "XOF", Operator: "mtn_open"}} {
		_, err := c.Collect(context.Background(), col)
		if e := gateway.ErrorOf(err); e == nil || !e.NotSent {
			t.Errorf("collect %+v: got %v; want a not-sent error", col, err)
		}
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("calls = %v; want none", calls)
	}
}

func TestSimulator_OnlyTheSDKPath(t *testing.T) {
	sim := &Simulator{SecretKey: "sk"}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	var tr envelope
	if code, err := c.call(context.Background(), http.MethodPost, "/transactions", encodeTransaction(gateway.Collection{Reference: "r-9",
		Amount: 100, Currency: "XOF", Phone: "+22997808080", Country: "BJ"}), &tr); err != nil || code != http.StatusOK || tr.Transaction == nil {
		t.Fatalf("create = %d, %v", code, err)
	}
	var tok tokenAnswer
	if _, err := c.call(context.Background(), http.MethodPost, fmt.Sprintf("/transactions/%d/token", tr.Transaction.ID), nil, &tok); err != nil {
		t.Fatal(err)
	}
	body := sendRequest{Token: tok.Token}
	for _, tc := range []struct {
		path string
		want int
	}{{"/transactions/mtn_open", http.StatusNotFound}, {"/v1/mtn_open", http.StatusNotFound}, {"/not_a_mode", http.StatusNotFound}, {"/mtn_open", http.StatusOK}} {
		var out map[string]any
		if code, _ := c.call(context.Background(), http.MethodPost, tc.path, body, &out); code != tc.want {
			t.Errorf("POST %s = %d; want %d", tc.path, code, tc.want)
		}
	}
}

// TestCollect_Calls holds what the conformance suite does not: the three
// calls in order, the push at /{mode} with exactly the documented body,
// FedaPay's id recorded (Created) before the push, and a card sent to
// FedaPay's page. The answers' readings are TestConformance's.
func TestCollect_Calls(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, SecretKey: "sk"}
	ctx := context.Background()
	srv.Set("POST /transactions", http.StatusOK, gatewaytest.Golden(t, "transaction_created.json"))
	srv.Set("POST /transactions/104/token", http.StatusOK, gatewaytest.Golden(t, "token.json"))
	srv.Set("POST /mtn_open", http.StatusOK, gatewaytest.Golden(t, "send_answer.json"))
	var recorded string
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 2000, Currency: "XOF", Phone: "+22997808080",
		Country: "BJ", Operator: "mtn_open", Created: func(id string) error { recorded = id; return nil }}
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef != "104" || recorded != "104" || st.RedirectURL != "" {
		t.Fatalf("collect = %+v, %v (recorded %q)", st, err, recorded)
	}
	if sent := srv.Calls(); strings.Join(sent, ", ") != "POST /transactions, POST /transactions/104/token, POST /mtn_open" {
		t.Fatalf("calls = %v; want the push at /{mode}, as FedaPay's SDKs post it", sent)
	}
	if got, want := string(srv.Body("POST /mtn_open")), `{"token":"tok_cauri_fixture_104","phone_number":{"number":"+22997808080","country":"bj"}}`; got != want {
		t.Fatalf("push body = %s; want %s", got, want)
	}
	card := col
	card.Card = true
	if st, _ := c.Collect(ctx, card); st.RedirectURL != "https://process.fedapay.com/tok_cauri_fixture_104" {
		t.Fatalf("card = %+v; want FedaPay's page", st)
	}
}

// newSim starts the simulator on loopback, its webhooks to hook, and a
// client facing it whose clock stands at now.
func newSim(t *testing.T, now time.Time) (sim *Simulator, srv *httptest.Server, c *Client, hook *gatewaytest.Receiver) {
	hook = gatewaytest.NewReceiver(t)
	sim = &Simulator{SecretKey: "sk_sandbox_sim", WebhookSecret: "wh_sandbox_sim", WebhookURL: hook.URL}
	srv = httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c = &Client{BaseURL: srv.URL, SecretKey: "sk_sandbox_sim", WebhookSecret: "wh_sandbox_sim", HTTP: &http.Client{Timeout: 300 * time.Millisecond},
		Now: func() time.Time { return now }}
	return sim, srv, c, hook
}

func TestClient_AgainstSimulator(t *testing.T) {
	now := time.Now()
	_, srv, c, hook := newSim(t, now)
	ctx := context.Background()
	ids := map[string]string{}
	record := func(ref string) func(string) error {
		return func(id string) error { ids[ref] = id; return nil }
	}
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 1500, Currency: "XOF", Phone: "+22997123456",
		Operator: "mtn_open", Country: "BJ"}
	col.Created = record(col.Reference)
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || ids[col.Reference] == "" {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	ref := gateway.Ref{Reference: col.Reference, ProviderRef: ids[col.Reference]}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+col.Reference)
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("status = %+v, %v", st, err)
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks", len(hooks))
	}
	got, err := c.CallbackReference(hooks[0].Header, bodies[0])
	_, forged := c.CallbackReference(http.Header{"X-Fedapay-Signature": {"t=1,s=abcd"}}, bodies[0])
	late := *c
	late.Now = func() time.Time { return now.Add(10 * time.Minute) }
	_, replayed := late.CallbackReference(hooks[0].Header, bodies[0])
	if err != nil || got != col.Reference || forged == nil || replayed == nil {
		t.Fatalf("webhook = %q, %v; forged accepted: %v; replayed accepted: %v", got, err, forged == nil, replayed == nil)
	}

	poor := col
	poor.Reference, poor.Phone = "31111111-2222-4333-8444-555555555555", "+22997000049"
	poor.Created = record(poor.Reference)
	if st, err := c.Collect(ctx, poor); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+poor.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference, ProviderRef: ids[poor.Reference]}); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "insufficient_funds") {
		t.Fatalf("low balance = %+v", st)
	}
	refused := col
	refused.Reference, refused.Phone = "21111111-2222-4333-8444-555555555555", "+22997000039"
	refused.Created = record(refused.Reference)
	if st, _ := c.Collect(ctx, refused); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "phone") || st.ProviderRef == "" {
		t.Fatalf("refused = %+v", st)
	}
	// A transaction whose id could not be recorded is never pushed.
	unrecorded := col
	unrecorded.Reference = "61111111-2222-4333-8444-555555555555"
	unrecorded.Created = func(string) error { return context.DeadlineExceeded }
	if _, err := c.Collect(ctx, unrecorded); err == nil || gateway.IsTransient(err) {
		t.Fatalf("unrecorded: %v; want a lasting error", err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "x"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("no FedaPay id = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "x", ProviderRef: "999999"}); err == nil || st.Outcome == gateway.NotFound {
		t.Fatalf("unknown id = %+v, %v; want an error, never not found", st, err)
	}
	// A card, paid on FedaPay's page.
	card := gateway.Collection{Reference: "51111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "XOF", Card: true,
		ReturnURL: hook.URL + "/back"}
	card.Created = record(card.Reference)
	st, _ = c.Collect(ctx, card)
	res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}})
	if err != nil || res.Request.URL.Path != "/back" {
		t.Fatalf("paying on the page: %v, %v", res, err)
	}
	res.Body.Close()
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: card.Reference, ProviderRef: ids[card.Reference]}); st.Outcome != gateway.Succeeded {
		t.Fatalf("card = %+v", st)
	}
	wrong := &Client{BaseURL: srv.URL, SecretKey: "guess"}
	if _, err := wrong.Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key: %v", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.CollectionStatus(ctx, ref); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v", err)
	}
}
