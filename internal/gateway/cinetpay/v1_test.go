package cinetpay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestNewV1_Host(t *testing.T) {
	for _, tc := range []struct{ base, key, want string }{
		{"", "sk_test_abc", V1SandboxURL},
		{"", "sk_live_abc", V1LiveURL},
		{"http://127.0.0.1:9", "sk_live_abc", "http://127.0.0.1:9"},
	} {
		if got := NewV1(tc.base, tc.key, "pw", nil).BaseURL; got != tc.want {
			t.Errorf("NewV1(%q, %q): got %s; want %s", tc.base, tc.key, got, tc.want)
		}
	}
}

func TestEncodeV1_Golden(t *testing.T) {
	col := gateway.Collection{Reference: "CMD-1764080000", Amount: 5000, Currency: "XOF", Description: "Commande",
		Email: "client@email.com", Name: "Jean Dupont", ReturnURL: "https://monsite.com/success", NotifyURL: "https://monsite.com/webhook"}
	mine, documented := gatewaytest.DocumentedFields(t, encodeV1Payment(col, 5000), "v1_payment_request.json")
	for k := range mine {
		if _, ok := documented[k]; !ok {
			t.Errorf("field %q is not in the documented request", k)
		}
	}
	gatewaytest.DocumentedFields(t, v1Login{APIKey: "sk_test_4f1c2b7a9e", APIPassword: "pw-sandbox-1"}, "v1_login_request.json")
}

func TestV1_AgainstSimulator(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	var mu sync.Mutex
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	sim := &V1Simulator{APIKey: "sk_test_sim", APIPassword: "pw-1", Now: clock}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := NewV1(srv.URL, "sk_test_sim", "pw-1", &http.Client{Timeout: 300 * time.Millisecond})
	c.Now = clock
	ctx := context.Background()
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 1500, Currency: "XOF", Phone: "+2250707123456",
		Name: "Awa Kone", Email: "awa@example.com", NotifyURL: hook.URL + "/notify", ReturnURL: hook.URL + "/return"}
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || st.RedirectURL == "" {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("before paying = %+v, %v; want pending (INITIATED)", st, err)
	}
	if st, _ := c.Collect(ctx, col); st.Outcome != gateway.Failed {
		t.Fatalf("a reused merchant_transaction_id = %+v; want refused", st)
	}
	res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("after paying = %+v, %v", st, err)
	}
	all, bodies := hook.Received()
	var reqs []*http.Request
	var notes [][]byte
	for i, r := range all {
		if r.URL.Path == "/notify" {
			reqs, notes = append(reqs, r), append(notes, bodies[i])
		}
	}
	if len(reqs) != 1 {
		t.Fatalf("%d notifications; want 1", len(reqs))
	}
	h := reqs[0].Header.Clone()
	h.Set(gateway.CallbackQueryHeader, reqs[0].URL.RawQuery)
	if ref, err := c.CallbackReference(h, notes[0]); err != nil || ref != col.Reference {
		t.Fatalf("notification = %q, %v; want our reference from the address", ref, err)
	}
	if ref, err := c.CallbackReference(http.Header{}, notes[0]); err != nil || ref != col.Reference {
		t.Fatalf("notification without its query = %q, %v; want merchant_transaction_id", ref, err)
	}
	// The outcomes by number, and a stuck one waiting at the operator.
	for _, tc := range []struct {
		phone, control string
		want           gateway.Outcome
		reason         string
	}{
		{"+2250700000049", "", gateway.Failed, "INSUFFICIENT_BALANCE"},
		{"+2250707000001", "?status=FAILED", gateway.Failed, "FAILED"},
		{"+2250707000002", "?status=EXPIRED", gateway.Failed, "EXPIRED"},
		{"+2250707000003", "?status=PENDING", gateway.Pending, ""},
	} {
		one := col
		one.Reference, one.Phone = "2"+tc.phone[5:], tc.phone
		if _, err := c.Collect(ctx, one); err != nil {
			t.Fatal(err)
		}
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+one.Reference+tc.control)
		st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: one.Reference})
		if err != nil || st.Outcome != tc.want || !strings.Contains(st.Reason, tc.reason) {
			t.Errorf("%s%s: got %+v, %v; want %s (%s)", tc.phone, tc.control, st, err, tc.want, tc.reason)
		}
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown = %+v, %v; want not found", st, err)
	}
	// The token expires: one new login, the call goes through.
	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || sim.Logins() != 2 {
		t.Fatalf("after the token's life: %v, %d logins; want 2", err, sim.Logins())
	}
	// Refused before sending: a non-multiple of 5; wrong credentials are lasting.
	odd := col
	odd.Reference, odd.Amount = "31111111-2222-4333-8444-555555555555", 1502
	if _, err := c.Collect(ctx, odd); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("1502 XOF: %v; want refused before sending", err)
	}
	wrong := NewV1(srv.URL, "sk_test_sim", "guess", nil)
	if _, err := wrong.Collect(ctx, col); err == nil || gateway.IsTransient(err) || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("wrong password: %v; want a lasting error, nothing sent", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v; want transient", err)
	}
}

func TestV1_NoCredentials(t *testing.T) {
	_, err := NewV1("http://127.0.0.1:9", "", "", nil).Collect(context.Background(), gateway.Collection{Reference: "r", Amount: 100, Currency: "XOF"})
	if e := gateway.ErrorOf(err); e == nil || !e.NotSent || !strings.Contains(e.Message, "api_password") {
		t.Fatalf("no credentials: %v; want NotSent naming them", err)
	}
	var b map[string]any
	json.Unmarshal(gatewaytest.Golden(t, "v1_payment_created.json"), &b)
	if b["payment_url"] == nil {
		t.Fatal("fixture without payment_url")
	}
}
