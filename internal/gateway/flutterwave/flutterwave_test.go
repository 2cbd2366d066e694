package flutterwave

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	var answer []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(answer) }))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "k"}
	answer = gatewaytest.Golden(t, "charge_initiated.json")
	if st, err := c.Collect(context.Background(), gateway.Collection{Reference: "MC-1585230950508", Country: "UG", Currency: "UGX", Amount: 1500}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("initiated = %+v, %v", st, err)
	}
	answer = gatewaytest.Golden(t, "verify_successful.json")
	if st, err := c.CollectionStatus(context.Background(), gateway.Ref{Reference: "MC-1585230950508"}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef != "1191376" {
		t.Fatalf("verify = %+v, %v", st, err)
	}
}

func TestClient_AgainstSimulator(t *testing.T) {
	var mu sync.Mutex
	var hooks []*http.Request
	var bodies [][]byte
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hooks, bodies = append(hooks, r), append(bodies, b)
		mu.Unlock()
	}))
	defer hook.Close()
	sim := &Simulator{SecretKey: "FLWSECK_TEST-sim", SecretHash: "hash-123", WebhookURL: hook.URL}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "FLWSECK_TEST-sim", SecretHash: "hash-123", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	ctx := context.Background()
	control := func(path string) {
		res, err := http.Post(srv.URL+path, "", nil)
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("control %s: %v %v", path, res, err)
		}
		res.Body.Close()
	}
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 15000, Currency: "UGX", Phone: "+256771234567", Operator: "MTN", Country: "UG"}
	if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	control("/_sim/settle/" + col.Reference)
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("status = %+v, %v", st, err)
	}
	mu.Lock()
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks", len(hooks))
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	_, forged := c.CallbackReference(http.Header{"Verif-Hash": {"guess"}}, bodies[0])
	mu.Unlock()
	if err != nil || ref != col.Reference || forged == nil {
		t.Fatalf("webhook = %q, %v; forged accepted: %v", ref, err, forged == nil)
	}
	poor := col
	poor.Reference, poor.Phone = "31111111-2222-4333-8444-555555555555", "+256770000049"
	if st, err := c.Collect(ctx, poor); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	control("/_sim/callback/" + poor.Reference + "?status=successful") // early: the charge is pending
	mu.Lock()
	early, earlyBody := hooks[len(hooks)-1], bodies[len(bodies)-1]
	mu.Unlock()
	if ref, err := c.CallbackReference(early.Header, earlyBody); err != nil || ref != poor.Reference || !strings.Contains(string(earlyBody), `"successful"`) {
		t.Fatalf("claimed webhook = %q, %v (%s)", ref, err, earlyBody)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("status after an early webhook = %+v; the charge is still pending", st)
	}
	control("/_sim/settle/" + poor.Reference)
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
	control("/_sim/fault?mode=500")
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v", err)
	}
}
