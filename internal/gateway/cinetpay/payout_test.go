package cinetpay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodeTransfer_Golden(t *testing.T) {
	prefix, national, err := splitPhone("+22501020304", "CI")
	if err != nil {
		t.Fatal(err)
	}
	contact := encodeContact(prefix, national, "Test B Test A")
	var mine, documented map[string]any
	b, _ := json.Marshal(contact)
	json.Unmarshal(b, &mine)
	if err := json.Unmarshal(gatewaytest.Golden(t, "transfer_contact_request.json"), &documented); err != nil {
		t.Fatal(err)
	}
	if keys(mine) != keys(documented) || mine["prefix"] != documented["prefix"] || mine["phone"] != documented["phone"] {
		t.Fatalf("contact = %v; want the documented fields %v with its prefix and phone", mine, documented)
	}
	if contact.Name != "A" || contact.Surname != "Test B Test" {
		t.Fatalf("names = %q, %q", contact.Name, contact.Surname)
	}
	if c := encodeContact("221", "771234567", " Awa "); c.Name != "Awa" || c.Surname != "Awa" {
		t.Fatalf("one name = %+v", c)
	}
	if c := encodeContact("221", "771234567", ""); c.Name != "771234567" {
		t.Fatalf("no name = %+v", c)
	}

	prefix, national, _ = splitPhone("+22369844969", "ML")
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 500, Currency: "XOF", Phone: "+22369844969",
		Operator: "OMML", Country: "ML", NotifyURL: "https://cinetpay.com"}
	mine, _ = gatewaytest.DocumentedFields(t, encodeSend(prefix, national, p), "transfer_send_request.json")
	if mine["client_transaction_id"] != p.Reference || mine["payment_method"] != nil || len(mine) != 5 {
		t.Fatalf("send = %v; want the documented fields and our reference, no operator (the number tells it)", mine)
	}
	for _, tc := range []struct{ operator, want string }{{"WAVECI", "WAVECI"}, {"WAVESN", "WAVESN"}, {"TmoneyTG", ""}, {"MTNCM", ""}, {"OM", ""}} {
		p.Operator = tc.operator
		if got := encodeSend(prefix, national, p).PaymentMethod; got != tc.want {
			t.Errorf("payment_method for %s: got %q; want %q", tc.operator, got, tc.want)
		}
	}
	for _, bad := range [][2]string{{"+22101020304", "CI"}, {"+225", "CI"}, {"22501020304x", "CI"}} {
		if _, _, err := splitPhone(bad[0], bad[1]); err == nil {
			t.Errorf("splitPhone(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if prefix, national, err := splitPhone("+237677123456", ""); err != nil || prefix != "237" || national != "677123456" {
		t.Errorf("without a country = %q %q %v", prefix, national, err)
	}
}

func keys(m map[string]any) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

// goldenTransfers answers the transfer API's paths with fixed bodies and
// counts logins; each POST must carry the token in the query and a form.
type goldenTransfers struct {
	t       *testing.T
	mu      sync.Mutex
	answers map[string][][]byte // path: answers in turn, the last repeated
	logins  int
}

func (g *goldenTransfers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if path == "/auth/login" {
		g.logins++
	} else if r.URL.Query().Get("token") != "YOUR_TOKEN_HERE" {
		g.t.Errorf("%s without the token in its query: %s", path, r.URL.RawQuery)
	}
	if r.Method == http.MethodPost && (r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" ||
		path != "/auth/login" && !json.Valid([]byte(r.PostFormValue("data")))) {
		g.t.Errorf("%s: not a form with a JSON data field", path)
	}
	list := g.answers[path]
	if len(list) == 0 {
		http.NotFound(w, r)
		return
	}
	w.Write(list[0])
	if len(list) > 1 {
		g.answers[path] = list[1:]
	}
}

// TestTransfer_Golden holds what the conformance suite does not: the token
// in each call's query, the form with its JSON data field, the token kept
// between calls and renewed once after 706 INVALID_TOKEN. The answers'
// readings are TestConformance's.
func TestTransfer_Golden(t *testing.T) {
	g := &goldenTransfers{t: t}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := &Client{TransferBaseURL: srv.URL + "/v1", APIKey: "k", TransferPassword: "pw"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "Test_retrait_20230301_01", Amount: 500, Currency: "XOF", Phone: "+22657474578", Operator: "OMBF",
		Country: "BF", RecipientName: "Test A", NotifyURL: "https://example.com/cinetpay/notify"}
	answer := func(path string, bodies ...string) {
		g.mu.Lock()
		defer g.mu.Unlock()
		var list [][]byte
		for _, b := range bodies {
			if strings.HasSuffix(b, ".json") {
				list = append(list, gatewaytest.Golden(t, b))
			} else {
				list = append(list, []byte(b))
			}
		}
		if g.answers == nil {
			g.answers = map[string][][]byte{}
		}
		g.answers[path] = list
	}
	answer("/auth/login", "transfer_login.json")
	answer("/transfer/contact", "transfer_contact_exists.json")
	answer("/transfer/money/send/contact", "transfer_send_accepted.json")
	answer("/transfer/check/money", "transfer_token_invalid.json", "transfer_check_val.json")
	if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending || st.ProviderRef != "EA230301.165358.X622533" {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.Succeeded ||
		st.ProviderRef != "EA230301.165358.X622533" {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if g.logins != 2 {
		t.Fatalf("%d logins; want one, and one more after 706", g.logins)
	}
}

// clock is a test's clock, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestPayout_AgainstSimulator(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	simClock, clientClock := &clock{t: start}, &clock{t: start}
	sim := &Simulator{APIKey: "api-1", SiteID: "445160", SecretKey: "secret-1", TransferPassword: "transfer-1", Now: simClock.Now}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, TransferBaseURL: srv.URL + "/v1", APIKey: "api-1", SiteID: "445160", SecretKey: "secret-1",
		TransferPassword: "transfer-1", Now: clientClock.Now, HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	ctx := context.Background()
	if !c.IdempotentPayout() {
		t.Fatal("CinetPay refuses a client_transaction_id sent again (805): payouts are idempotent")
	}
	p := gateway.Payout{Reference: "a1111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "XOF", Phone: "+2250707123456",
		Operator: "OM", Country: "CI", RecipientName: "Awa Koné", Description: "Gains", NotifyURL: hook.URL + "/notify"}
	st, err := c.Payout(ctx, p)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	for range 2 { // sent again with the same reference: 805, one payout
		if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("payout sent again = %+v, %v", st, err)
		}
	}
	if sim.Payouts() != 1 || sim.Logins() != 1 {
		t.Fatalf("%d payouts, %d logins; want one payout for one reference and the token reused", sim.Payouts(), sim.Logins())
	}
	if got, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || got.Outcome != gateway.Pending || got.ProviderRef != st.ProviderRef {
		t.Fatalf("status = %+v, %v", got, err)
	}
	if got, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: p.Reference}); got.Outcome != gateway.NotFound {
		t.Fatalf("a payout read as a payment = %+v; want not found", got)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+p.Reference)
	if got, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || got.Outcome != gateway.Succeeded || got.ProviderRef != st.ProviderRef {
		t.Fatalf("settled = %+v, %v", got, err)
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 || hooks[0].URL.Path != "/notify" || hooks[0].Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("%d notifications", len(hooks))
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	form, _ := url.ParseQuery(string(bodies[0]))
	if err != nil || ref != p.Reference || form.Get("treatment_status") != "VAL" {
		t.Fatalf("notification = %q, %v (%v)", ref, err, form)
	}

	// The client renews its token before CinetPay's 5 minutes...
	clientClock.Add(6 * time.Minute)
	simClock.Add(6 * time.Minute)
	if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || sim.Logins() != 2 {
		t.Fatalf("after 6 minutes: %v, %d logins; want a new token", err, sim.Logins())
	}
	// ... and logs in again, once, when CinetPay says it expired (705).
	simClock.Add(6 * time.Minute)
	if got, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || got.Outcome != gateway.Succeeded || sim.Logins() != 3 {
		t.Fatalf("an expired token: %+v, %v, %d logins", got, err, sim.Logins())
	}

	poor := p
	poor.Reference, poor.Phone = "b1111111-2222-4333-8444-555555555555", "+2250700000049"
	if st, err := c.Payout(ctx, poor); err != nil || st.Outcome != gateway.Failed || !st.LowBalance || !strings.Contains(st.Reason, "602") {
		t.Fatalf("low balance = %+v, %v", st, err)
	}
	refused := p
	refused.Reference, refused.Phone = "c1111111-2222-4333-8444-555555555555", "+2250700000039"
	if st, err := c.Payout(ctx, refused); err != nil || st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "802") {
		t.Fatalf("refused = %+v, %v", st, err)
	}
	small := p
	small.Reference, small.Amount = "d1111111-2222-4333-8444-555555555555", 150
	if st, _ := c.Payout(ctx, small); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "719") {
		t.Fatalf("too small = %+v", st)
	}
	lost := p
	lost.Reference, lost.Phone = "e1111111-2222-4333-8444-555555555555", "+2250700000029"
	if st, err := c.Payout(ctx, lost); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+lost.Reference)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: lost.Reference}); st.Outcome != gateway.Failed || st.LowBalance || !strings.Contains(st.Reason, "REJ") {
		t.Fatalf("failed payout = %+v", st)
	}
	stuck := p
	stuck.Reference, stuck.Phone = "f1111111-2222-4333-8444-555555555555", "+2250700000129"
	c.Payout(ctx, stuck)
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+stuck.Reference)
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: stuck.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("a stuck payout = %+v; want still pending", st)
	}
	if sim.Payouts() != 3 {
		t.Fatalf("%d payouts; want 3 accepted", sim.Payouts())
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown = %+v, %v", st, err)
	}
	_, _, n := hook.Last()
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+p.Reference+"?status=REJ") // a stale notification: the check still says VAL
	_, bodies = hook.Received()
	claimed, _ := url.ParseQuery(string(bodies[n]))
	if claimed.Get("treatment_status") != "REJ" {
		t.Fatalf("the claimed notification = %v", claimed)
	}
	if st, _ := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); st.Outcome != gateway.Succeeded {
		t.Fatalf("after a stale notification = %+v", st)
	}

	wrong := &Client{BaseURL: srv.URL, TransferBaseURL: srv.URL + "/v1", APIKey: "api-1", TransferPassword: "guess"}
	if _, err := wrong.Payout(ctx, p); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong transfer password: %v; want a lasting error", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v", err)
	}
	next := p
	next.Reference = "a2111111-2222-4333-8444-555555555555"
	if _, err := c.Payout(ctx, next); !gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("fault before sending: %v; want a transient error, nothing sent", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if st, err := c.Payout(ctx, next); err != nil || st.Outcome != gateway.Pending || sim.Payouts() != 4 {
		t.Fatalf("after the fault = %+v, %v, %d payouts", st, err, sim.Payouts())
	}
}

func TestPayout_SettleAfter(t *testing.T) {
	sim := &Simulator{APIKey: "k", TransferPassword: "pw", SettleAfter: 50 * time.Millisecond}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	hook := gatewaytest.NewReceiver(t)
	c := &Client{TransferBaseURL: srv.URL + "/v1", APIKey: "k", TransferPassword: "pw"}
	ctx := context.Background()
	p := gateway.Payout{Reference: "a3111111-2222-4333-8444-555555555555", Amount: 1000, Currency: "XOF", Phone: "+221771234567",
		Operator: "WAVESN", Country: "SN", NotifyURL: hook.URL}
	if st, err := c.Payout(ctx, p); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("payout = %+v, %v", st, err)
	}
	time.Sleep(300 * time.Millisecond)
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: p.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("after the delay = %+v, %v", st, err)
	}
}

// TestTransfer_OneLogin: concurrent transfer calls without a token share
// one login (the conformance suite's single-flight check reads collection
// statuses, which take no token here).
func TestTransfer_OneLogin(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	srv.Set("POST /auth/login", http.StatusOK, gatewaytest.Golden(t, "transfer_login.json"))
	srv.Set("GET /transfer/check/money", http.StatusOK, gatewaytest.Golden(t, "transfer_check_val.json"))
	c := &Client{TransferBaseURL: srv.URL, APIKey: "k", TransferPassword: "pw"}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.PayoutStatus(context.Background(), gateway.Ref{Reference: "Test_retrait_20230301_01"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, call := range srv.Calls() {
		if call == "POST /auth/login" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("20 concurrent status reads logged in %d times; want 1", n)
	}
}
