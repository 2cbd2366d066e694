package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
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

// TestEncodeCharge_Golden: every field of Paystack's own sample is sent the
// same; the connector adds its reference.
func TestEncodeCharge_Golden(t *testing.T) {
	mine, _ := gatewaytest.DocumentedFields(t, encodeCharge(gateway.Collection{Reference: "ref-1", Amount: 100, Currency: "KES",
		Phone: "+254700000000", Operator: "mpesa_offline", Email: "customer@email.com"}), "charge_request.json")
	if mine["reference"] != "ref-1" {
		t.Errorf("reference = %v", mine["reference"])
	}
	noEmail := encodeCharge(gateway.Collection{Reference: "ref-2"})
	if noEmail.Email != "customer-ref-2@cauri.invalid" {
		t.Errorf("email without one = %q", noEmail.Email)
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
	sim := &Simulator{SecretKey: "sk_test_sim", WebhookURL: hook.URL}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, SecretKey: "sk_test_sim", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	ctx := context.Background()
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 2500, Currency: "GHS", Phone: "+233241234567", Operator: "mtn"}
	control := func(path string) {
		res, err := http.Post(srv.URL+path, "", nil)
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("control %s: %v %v", path, res, err)
		}
		res.Body.Close()
	}

	if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	if st, _ := c.Collect(ctx, col); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Duplicate") {
		t.Fatalf("same reference again = %+v; want refused", st)
	}
	control("/_sim/settle/" + col.Reference)
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded {
		t.Fatalf("after settling = %+v, %v", st, err)
	}
	mu.Lock()
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks; want 1", len(hooks))
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	forged := hooks[0].Header.Clone()
	forged.Set("X-Paystack-Signature", strings.Repeat("0", 128))
	_, forgedErr := c.CallbackReference(forged, bodies[0])
	mu.Unlock()
	if err != nil || ref != col.Reference {
		t.Fatalf("signed webhook = %q, %v", ref, err)
	}
	if forgedErr == nil {
		t.Fatal("a webhook with a wrong signature was read")
	}
	mac := hmac.New(sha512.New, []byte("another key"))
	mac.Write(bodies[0])
	if _, err := c.CallbackReference(http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}}, bodies[0]); err == nil {
		t.Fatal("a webhook signed with another key was read")
	}

	refused := col
	refused.Reference, refused.Phone = "21111111-2222-4333-8444-555555555555", "+233240000039"
	if st, _ := c.Collect(ctx, refused); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "phone") {
		t.Fatalf("refused number = %+v", st)
	}
	failing := col
	failing.Reference, failing.Phone = "31111111-2222-4333-8444-555555555555", "+233240000029"
	c.Collect(ctx, failing)
	control("/_sim/settle/" + failing.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: failing.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("declined = %+v", st)
	}
	poor := col
	poor.Reference, poor.Phone = "41111111-2222-4333-8444-555555555555", "+233240000049"
	c.Collect(ctx, poor)
	control("/_sim/callback/" + poor.Reference) // early: a signed charge.success while the charge is pending
	mu.Lock()
	early, earlyBody := hooks[len(hooks)-1], bodies[len(bodies)-1]
	mu.Unlock()
	if ref, err := c.CallbackReference(early.Header, earlyBody); err != nil || ref != poor.Reference {
		t.Fatalf("claimed webhook = %q, %v", ref, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("status after an early webhook = %+v; the charge is still pending", st)
	}
	control("/_sim/settle/" + poor.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Insufficient Funds") {
		t.Fatalf("low balance = %+v", st)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown reference = %+v, %v", st, err)
	}
	if _, err := (&Client{BaseURL: srv.URL, SecretKey: "wrong"}).Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key = %v; want a lasting error", err)
	}
	for _, mode := range []string{"500", "malformed", "slow&seconds=2"} {
		control("/_sim/fault?mode=" + mode)
		if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
			t.Errorf("fault %s: %v; want transient", mode, err)
		}
	}
}
