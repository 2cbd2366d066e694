package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/partner"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/transfer"
	"github.com/prometheus/client_golang/prometheus"
)

// clock is the injected time of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// env is a running service on 127.0.0.1 over a real store, with one
// workspace and its keys.
type env struct {
	t     *testing.T
	url   string
	store *store.Store
	clock *clock
	srv   *Server
	ws    *cauri.Workspace
	keys  map[string]string // live_public, live_secret, test_public, test_secret
}

type envOption func(*Deps)

func trustProxies(cidrs ...string) envOption {
	return func(d *Deps) {
		for _, c := range cidrs {
			d.TrustedProxies = append(d.TrustedProxies, netip.MustParsePrefix(c))
		}
	}
}

// guardWith replaces the webhook address policy: exempt networks (none
// means the public-only rule applies to loopback too) and a resolver.
func guardWith(resolver delivery.Resolver, exempt ...string) envOption {
	return func(d *Deps) {
		var prefixes []netip.Prefix
		for _, c := range exempt {
			prefixes = append(prefixes, netip.MustParsePrefix(c))
		}
		d.Webhooks.Guard = delivery.NewGuard(prefixes, resolver)
		d.Partners.Guard = d.Webhooks.Guard
		d.Webhooks.Worker.Client = d.Webhooks.Guard.Client(d.Webhooks.Worker.Timeout)
	}
}

// workerWith changes the webhook worker's bounds.
func workerWith(concurrency, perEndpoint int, timeout time.Duration) envOption {
	return func(d *Deps) {
		d.Webhooks.Worker.Concurrency, d.Webhooks.Worker.PerEndpoint, d.Webhooks.Worker.Timeout = concurrency, perEndpoint, timeout
		d.Webhooks.Worker.Client = d.Webhooks.Guard.Client(timeout)
	}
}

func newEnv(t *testing.T, st *store.Store, opts ...envOption) *env {
	t.Helper()
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Loopback is exempt from the public-only rule, as CAURI_WEBHOOK_ALLOWED_CIDRS
	// makes it in development, so that receivers run on 127.0.0.1.
	guard := delivery.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}, nil)
	worker := &delivery.Worker{
		Store: st, Client: guard.Client(2 * time.Second), Schedule: cauri.DefaultRetrySchedule, Timeout: 2 * time.Second,
		Now: clk.Now, Logger: logger, Poll: 20 * time.Millisecond,
	}
	router := &routing.Router{Engine: routing.New(clk.Now, 1), Store: st}
	reg := prometheus.NewRegistry()
	failures := movement.NewFailures(logger, reg)
	conns := &movement.Connectors{Store: st, Build: connectors.New, Failures: failures}
	d := Deps{
		Checkout: &checkout.Service{Store: st, PayURL: ts.URL + "/pay", CallbackURL: ts.URL + "/callbacks", Now: clk.Now, Committed: worker.Wake,
			Connectors: conns, Failures: failures, Route: router},
		Transfers: &transfer.Service{Store: st, CallbackURL: ts.URL + "/callbacks", Now: clk.Now, Committed: worker.Wake, Connectors: conns,
			Failures: failures, Route: router},
		Accounts: &accounts.Service{Store: st, Now: clk.Now},
		Gateways: &gateways.Service{Store: st, Now: clk.Now},
		Reports:  &reports.Service{Store: st, Now: clk.Now},
		Health:   st,
		Partners: &partner.Service{Store: st, Gateways: &gateways.Service{Store: st, Now: clk.Now}, Guard: guard, Now: clk.Now},
		Webhooks: &delivery.Service{Store: st, Guard: guard, Worker: worker, Now: clk.Now},
		Router:   router,
		Limiter:  ratelimit.NewMemory(clk.Now),
		Logger:   logger,
		PayURL:   ts.URL + "/pay",
		BaseURL:  ts.URL,
		Now:      clk.Now,
		Registry: reg,
	}
	d.Refunds = &refund.Service{Store: st, Transfers: d.Transfers, Now: clk.Now, Connectors: conns, Failures: failures,
		PayURL: ts.URL + "/pay", CallbackURL: ts.URL + "/callbacks", Committed: worker.Wake}
	d.Transfers.Ended = d.Refunds.TransferEnded
	for _, o := range opts {
		o(&d)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { worker.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	srv, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	h = contract(t, srv)
	e := &env{t: t, url: ts.URL, store: st, clock: clk, srv: srv}
	e.ws, e.keys = e.newWorkspace("Boutique Adjoa", false)
	return e
}

func (e *env) newWorkspace(name string, verified bool) (*cauri.Workspace, map[string]string) {
	e.t.Helper()
	return createWorkspace(e.t, e.store, name, verified, e.clock.Now())
}

// createWorkspace stores a workspace with its four keys and returns the
// keys' plaintexts by name (live_public, live_secret, test_public, test_secret).
func createWorkspace(tb testing.TB, st *store.Store, name string, verified bool, now time.Time) (*cauri.Workspace, map[string]string) {
	tb.Helper()
	ws, _ := cauri.NewWorkspace(name, now)
	ws.Verified = verified
	list, plain := cauri.KeySet(ws.ID, now)
	if err := st.CreateWorkspace(context.Background(), ws, list); err != nil {
		tb.Fatal(err)
	}
	return ws, plain
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (r response) str(k string) string { s, _ := r.body[k].(string); return s }

// do sends a request; body is sent as is (a string) or as JSON; headers
// come in pairs.
func (e *env) do(method, path string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{status: res.StatusCode, header: res.Header, raw: string(raw)}
	json.Unmarshal(raw, &out.body)
	return out
}

func bearer(key string) []string { return []string{"Authorization", "Bearer " + key} }

func (e *env) createSession(key string, body any, headers ...string) response {
	e.t.Helper()
	return e.do("POST", "/v1/checkout/sessions", body, append(bearer(key), headers...)...)
}

func (e *env) mustSession(key string, body any) string {
	e.t.Helper()
	r := e.createSession(key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create session = %d %s; want 201", r.status, r.raw)
	}
	return r.str("id")
}

func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d (%s); want %d", r.status, r.raw, status)
	}
}

func wantError(t *testing.T, r response, status int, contains string) {
	t.Helper()
	wantStatus(t, r, status)
	msg := r.str("error")
	if msg == "" {
		msg = r.str("message")
	}
	if !strings.Contains(msg, contains) {
		t.Fatalf("error = %q; want it to contain %q", msg, contains)
	}
}
