package web

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestRateLimit_CreateSession(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for i := range 60 {
		if r := e.createSession(e.keys["test_secret"], `{"amount": 1}`); r.status != 201 {
			t.Fatalf("request %d = %d; want 60 allowed a minute", i+1, r.status)
		}
	}
	r := e.createSession(e.keys["test_secret"], `{"amount": 1}`)
	wantError(t, r, 429, "Too many requests")
	// At most 60 in any minute: the wait is until the first leaves the
	// window, a minute after it (the test's clock stands still).
	if r.header.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After = %q; want 60", r.header.Get("Retry-After"))
	}
	// Limited per IP, before authentication: even a bad key is counted.
	wantStatus(t, e.createSession("svc_test_sec_x", `{"amount": 1}`), 429)
	e.clock.Add(59 * time.Second)
	wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`), 429)
	e.clock.Add(time.Second)
	wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`), 201)
}

func TestRateLimit_Sandbox(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for range 30 {
		wantStatus(t, e.do("POST", "/checkout/sandbox", `{"transactionId": "cs_x", "issue": "succes"}`), 404)
	}
	r := e.do("POST", "/checkout/sandbox", `{"transactionId": "cs_x", "issue": "succes"}`)
	wantStatus(t, r, 429)
	if r.header.Get("Retry-After") == "" || r.body["success"] != false {
		t.Fatalf("429 = %s (Retry-After %q)", r.raw, r.header.Get("Retry-After"))
	}
}

func TestRateLimit_TrustedProxy(t *testing.T) {
	t.Run("Trusted", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite(t), trustProxies("127.0.0.0/8"))
		for i := range 60 {
			xff := fmt.Sprintf("203.0.113.%d", i) // 60 clients behind the proxy
			wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", xff), 201)
		}
		for range 60 {
			e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "198.51.100.7, 127.0.0.5")
		}
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "198.51.100.7"), 429)
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "198.51.100.8"), 201)
	})
	t.Run("HopWithPort", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite(t), trustProxies("127.0.0.0/8"))
		for range 60 {
			e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "198.51.100.9:4711")
		}
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "198.51.100.9"), 429)
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "[2001:db8::1]:443"), 201)
	})
	t.Run("IPv6By64", func(t *testing.T) {
		// One subscriber holds a whole /64: rotating within it walks past
		// no limit; the next /64 is someone else.
		e := newEnv(t, storetest.SQLite(t), trustProxies("127.0.0.0/8"))
		for i := range 60 {
			wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", fmt.Sprintf("2001:db8:7:1::%x", i+1)), 201)
		}
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "2001:db8:7:1:dead:beef:0:1"), 429)
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "2001:db8:7:2::1"), 201)
	})
	t.Run("Untrusted", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite(t))
		for i := range 60 {
			e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i))
		}
		wantStatus(t, e.createSession(e.keys["test_secret"], `{"amount": 1}`, "X-Forwarded-For", "203.0.113.250"), 429)
	})
}

func TestObserve_PanicIs500(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var logs bytes.Buffer
	e.srv.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := e.srv.observe(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/x", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"error":"Internal error"`) {
		t.Fatalf("panic answered %d %s; want 500 {error}", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}

func TestObserve_LogsNoSecret(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var logs bytes.Buffer
	e.srv.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	e.createSession(e.keys["test_secret"], `{"amount": 1}`)
	e.do("POST", "/v1/checkout/sessions", `{"amount": 1}`, "x-api-key", e.keys["live_secret"])
	out := logs.String()
	if !strings.Contains(out, `"route":"POST /v1/checkout/sessions"`) || !strings.Contains(out, `"status":201`) {
		t.Fatalf("request log = %s", out)
	}
	for _, k := range e.keys {
		if strings.Contains(out, k) || strings.Contains(out, k[13:]) {
			t.Fatal("a key appears in the logs")
		}
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	if r := e.do("GET", "/healthz", nil); r.status != 200 || r.str("status") != "ok" {
		t.Fatalf("healthz = %d %s", r.status, r.raw)
	}
	e.createSession(e.keys["test_secret"], `{"amount": 1}`)
	r := e.do("GET", "/metrics", nil)
	if !strings.Contains(r.raw, `cauri_http_requests_total{method="POST",route="POST /v1/checkout/sessions",status="201"} 1`) ||
		!strings.Contains(r.raw, "cauri_http_request_duration_seconds_bucket") {
		t.Fatalf("metrics lack the request counters:\n%s", r.raw)
	}
	// Odd methods and unknown paths do not grow the metrics.
	for i := range 50 {
		e.do(fmt.Sprintf("X%dMETHOD", i), fmt.Sprintf("/nope/%d", i), nil)
	}
	r = e.do("GET", "/metrics", nil)
	if strings.Contains(r.raw, "X1METHOD") || strings.Contains(r.raw, "/nope/1") ||
		!strings.Contains(r.raw, `cauri_http_requests_total{method="other",route="unmatched"`) {
		t.Fatalf("odd methods and paths became labels:\n%s", r.raw)
	}
	if r := e.do("GET", "/readyz", nil); r.status != 200 || r.str("status") != "ok" {
		t.Fatalf("readyz = %d %s", r.status, r.raw)
	}
	e.store.Close()
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := e.do("GET", path, nil); r.status != 503 {
			t.Fatalf("%s with the database closed = %d; want 503", path, r.status)
		}
	}
}

// TestMetrics_Access: with a token, /metrics asks for it; without, it
// answers this host only (the test's requests come from loopback, so the
// non-loopback case is the handler's refusal of another address).
func TestMetrics_Access(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), func(d *Deps) { d.MetricsToken = "scrape-me" })
	wantStatus(t, e.do("GET", "/metrics", nil), 401)
	wantStatus(t, e.do("GET", "/metrics", nil, "Authorization", "Bearer nope"), 401)
	if r := e.do("GET", "/metrics", nil, "Authorization", "Bearer scrape-me"); r.status != 200 || !strings.Contains(r.raw, "cauri_http_requests_total") {
		t.Fatalf("metrics with the token = %d", r.status)
	}
	open := newEnv(t, storetest.SQLite(t))
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.RemoteAddr = "203.0.113.9:4711"
	rec := httptest.NewRecorder()
	open.srv.ServeHTTP(rec, req)
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "CAURI_METRICS_TOKEN") {
		t.Fatalf("metrics for another host = %d %s; want 403 naming the setting", rec.Code, rec.Body)
	}
}

// TestReadyz_StoreCannotWrite: a store that answers reads but cannot write
// (here another process holds SQLite's write lock, as a full disk refuses
// every write) makes the node not ready, while /healthz says it is alive.
func TestReadyz_StoreCannotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cauri.db")
	st, err := store.Open(context.Background(), "sqlite:"+path, storetest.Vault(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, st)
	wantStatus(t, e.do("GET", "/readyz", nil), 200)
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	if r := e.do("GET", "/readyz", nil); r.status != 503 {
		t.Fatalf("readyz while writes are refused = %d %s; want 503", r.status, r.raw)
	}
	wantStatus(t, e.do("GET", "/healthz", nil), 200)
}

func TestAuthenticate_SecretOnlyRoute(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	wantError(t, e.do("GET", "/v1/config/webhook", nil, bearer(e.keys["test_public"])...), 401, "needs a secret key")
	wantStatus(t, e.do("GET", "/v1/config/webhook", nil, bearer(e.keys["test_secret"])...), 200)
}

func TestUnknownRouteIsJSON(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	wantError(t, e.do("GET", "/v1/nothing", nil), 404, "No route")
}

// TestQueryString: a query that cannot be read as meant (a malformed
// escape that would drop its filter, a NUL byte or invalid UTF-8 that no
// database text holds) is a 400 naming the problem on every route that
// reads one, on both stores (it was a 500 on PostgreSQL, and an export of
// every date);
// the aggregators' callbacks still get their 200.
func TestQueryString(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Queries", true)
		secret := bearer(keys["live_secret"])
		for _, path := range []string{
			"/v1/webhooks/deliveries?transaction_id=%00",
			"/v1/webhooks/deliveries?transaction_id=%FF",
			"/v1/webhooks/deliveries?status=failed&limit=%zz",
			"/v1/transfers?status=%00processing",
			"/v1/route?country=%FF",
		} {
			r := e.do("GET", path, nil, secret...)
			if r.status != 400 || !strings.Contains(r.raw, "uery") {
				t.Errorf("GET %s = %d %s; want 400 naming the query", path, r.status, r.raw)
			}
		}
		addUser(t, st, "q@example.com", "correct horse battery", ws.ID)
		b := e.newBrowserish()
		b.login("q@example.com", "correct horse battery")
		if res, body := b.get("/v1/transactions/export?from=%zz"); res.StatusCode != 400 || !strings.Contains(body, "uery") {
			t.Errorf("an export with a malformed date = %d %s; want 400, not every date", res.StatusCode, body)
		}
		g, _, _ := e.addSimulatedGateway(ws, "SN")
		if r := e.do("POST", "/callbacks/"+g.ID+"?ref=%zz", `{"depositId": "x"}`); r.status != 200 {
			t.Errorf("a callback with a malformed query = %d %s; want 200", r.status, r.raw)
		}
	})
}

// TestThrottle_Credentials: refused API keys and partner secrets are
// throttled per client address (30 a minute, then 429 with Retry-After),
// without touching a good key's requests; wrong passwords are throttled per
// address and network, so guessing the owner's password from elsewhere
// never locks the owner out.
func TestThrottle_Credentials(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), trustProxies("127.0.0.0/8"), func(d *Deps) { d.Partners.Secret = "partner-secret-0123456789" })
	bad := "svc_test_sec_" + strings.Repeat("x", 40)
	for i := range 30 {
		if r := e.do("GET", "/v1/config/webhook", nil, "Authorization", "Bearer "+bad, "X-Forwarded-For", "198.51.100.66"); r.status != 401 {
			t.Fatalf("refused key %d = %d; want 401", i+1, r.status)
		}
	}
	r := e.do("GET", "/v1/partner/merchants", nil, "x-partner-secret", "guess", "X-Forwarded-For", "198.51.100.66")
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(r.raw, "refused keys or secrets") {
		t.Fatalf("31st refused credential = %d %s %v; want 429 with Retry-After", r.status, r.raw, r.header)
	}
	if r := e.do("GET", "/v1/config/webhook", nil, "Authorization", "Bearer "+e.keys["test_secret"], "X-Forwarded-For", "198.51.100.66"); r.status != 200 {
		t.Fatalf("a good key from the same address = %d; want 200", r.status)
	}
	if r := e.do("GET", "/v1/config/webhook", nil, "Authorization", "Bearer "+bad, "X-Forwarded-For", "203.0.113.5"); r.status != 401 {
		t.Fatalf("a refused key from another address = %d; want 401", r.status)
	}

	addUser(t, e.store, "owner@example.com", "correct horse battery", e.ws.ID)
	attacker := e.newBrowserish().from("198.51.100.77")
	var last *http.Response
	for range 6 {
		last = attacker.login("owner@example.com", "guess")
	}
	if last.StatusCode != 429 {
		t.Fatalf("sixth wrong password = %d; want 429", last.StatusCode)
	}
	if res := e.newBrowserish().from("203.0.113.5").login("owner@example.com", "correct horse battery"); res.StatusCode != 303 {
		t.Fatalf("the owner from their own network = %d; want signed in (303)", res.StatusCode)
	}
}

// TestErrorsThatTeach: the usual mistakes get an answer that says the fix
// (issue 21, point 7), as JSON.
func TestErrorsThatTeach(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"))
		for _, tc := range []struct {
			name, method, path string
			headers            []string
			status             int
			want               string
		}{
			{"KeyWithoutBearer", "GET", "/v1/config/webhook", []string{"Authorization", key}, 401, "Authorization: Bearer svc_test_sec_..."},
			{"BasicAuth", "GET", "/v1/config/webhook", []string{"Authorization", basic}, 401, "Basic authentication is not taken"},
			{"NoKey", "GET", "/v1/config/webhook", nil, 401, "Authorization: Bearer <key>"},
			{"WrongMethodAPI", "GET", "/v1/checkout/sessions", nil, 405, "takes POST"},
			{"WrongMethodPage", "GET", "/checkout/initiate", nil, 405, "takes POST"},
			{"Root", "GET", "/", nil, 404, "/docs"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(tc.method, tc.path, nil, tc.headers...)
				if r.status != tc.status || !strings.Contains(r.raw, tc.want) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
					t.Fatalf("%s %s = %d %s (%s); want %d saying %q, JSON", tc.method, tc.path, r.status, r.raw, r.header.Get("Content-Type"), tc.status, tc.want)
				}
				if tc.status == 405 && r.header.Get("Allow") != "POST" {
					t.Fatalf("Allow = %q; want POST", r.header.Get("Allow"))
				}
				if strings.Contains(r.raw, key) {
					t.Fatal("the answer echoes the key")
				}
			})
		}
		// A key of the other mode names the mode, not just 404.
		_, keys := e.newWorkspace("Verified shop", true)
		test := e.mustSession(keys["test_public"], `{"amount": 100}`)
		wantError(t, e.do("GET", "/v1/checkout/sessions/"+test+"/status", nil, bearer(keys["live_secret"])...), 404,
			"it is a test session; read it with the workspace's test key")
	})
}
