package web

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkSessionStatus reads a session's status through the whole
// server (router, auth, store, JSON, logs, metrics) on SQLite, in-process:
// it is for profiling the route; the bench harness measures it over the
// network against its limit.
func BenchmarkSessionStatus(b *testing.B) {
	st := storetest.SQLite(b)
	// As serve runs: the keys cached in memory.
	if err := st.CacheKeys(b.Context(), 0, func(err error) { b.Error(err) }); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Deps{
		Accounts: &accounts.Service{Store: st, Now: time.Now}, Checkout: &checkout.Service{Store: st, PayURL: "http://x/pay", Now: time.Now},
		Limiter: ratelimit.Unlimited{}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		PayURL: "http://x/pay", Now: time.Now, Registry: prometheus.NewRegistry(),
	})
	if err != nil {
		b.Fatal(err)
	}
	_, keys := createWorkspace(b, st, "Bench", false, time.Now())
	req := httptest.NewRequest("POST", "/v1/checkout/sessions", strings.NewReader(`{"amount": 15000, "customer_email": "a@example.com", "metadata": {"order_id": "1"}}`))
	req.Header.Set("Authorization", "Bearer "+keys["test_secret"])
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	id := jsonID(b, rec.Body.Bytes())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "/v1/checkout/sessions/"+id+"/status", nil)
			req.Header.Set("Authorization", "Bearer "+keys["test_secret"])
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
}

func jsonID(b *testing.B, body []byte) string {
	var v struct{ ID string }
	if err := json.Unmarshal(body, &v); err != nil || v.ID == "" {
		b.Fatalf("create: %s", body)
	}
	return v.ID
}
