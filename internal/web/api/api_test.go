package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// These tests hold the handlers alone, over fakes of the services: what
// they decode, what they pass on, how they answer. The whole service, on
// both stores, is tested in internal/web.

var now = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// fakeKeys knows one secret and one public key of one workspace.
type fakeKeys struct{ ws *cauri.Workspace }

func (f fakeKeys) Authenticate(_ context.Context, key string) (*cauri.Workspace, *cauri.Key, error) {
	switch key {
	case "svc_test_sec_" + strings.Repeat("a", 32):
		return f.ws, &cauri.Key{Kind: cauri.KeySecret}, nil
	case "svc_test_pub_" + strings.Repeat("a", 32):
		return f.ws, &cauri.Key{Kind: cauri.KeyPublic}, nil
	case "svc_live_sec_" + strings.Repeat("a", 32):
		return f.ws, &cauri.Key{Kind: cauri.KeySecret, Live: true}, nil
	}
	return nil, nil, cauri.Errorf(cauri.ENotFound, "no such key")
}

// fakeCheckout records the session asked for and answers it.
type fakeCheckout struct {
	Checkout // any other method panics: the handler under test must not call it
	got      checkout.CreateParams
	called   bool
	replayed bool
	err      error
}

func (f *fakeCheckout) Create(_ context.Context, ws *cauri.Workspace, _ bool, p checkout.CreateParams) (*cauri.Session, bool, error) {
	f.got, f.called = p, true
	if f.err != nil {
		return nil, false, f.err
	}
	return &cauri.Session{ID: "cs_1", WorkspaceID: ws.ID, Amount: 5000, Currency: "XOF", Status: cauri.SessionPending, CreatedAt: now, UpdatedAt: now}, f.replayed, nil
}

// fakeTransfers finds no transfer.
type fakeTransfers struct{ Transfers }

func (fakeTransfers) Get(context.Context, string, string) (*cauri.Transfer, error) {
	return nil, cauri.NotFound("transfer", "tr_x")
}

func newAPI(c Checkout, t Transfers) http.Handler {
	a := &API{Kit: &httpx.Kit{Logger: slog.New(slog.DiscardHandler), Limiter: ratelimit.NewMemory(func() time.Time { return now })},
		Checkout: c, Transfers: t, Accounts: fakeKeys{ws: &cauri.Workspace{ID: "ws_1", Verified: true}},
		PayURL: "http://127.0.0.1/pay", Now: func() time.Time { return now }}
	mux := http.NewServeMux()
	a.Routes(mux)
	return mux
}

func call(h http.Handler, method, path, key, body string, header ...string) (*http.Response, map[string]any) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:4000"
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return res, out
}

var (
	secret = "svc_test_sec_" + strings.Repeat("a", 32)
	public = "svc_test_pub_" + strings.Repeat("a", 32)
	live   = "svc_live_sec_" + strings.Repeat("a", 32)
)

func TestCreateSession_PassesTheRequestOn(t *testing.T) {
	c := &fakeCheckout{}
	h := newAPI(c, nil)
	res, body := call(h, "POST", "/v1/checkout/sessions", public,
		`{"amount": 5000, "currency": "XOF", "customer_phone": "+221771234567", "metadata": {"order": "A-1"}}`, "Idempotency-Key", "k-1")
	if got, want := res.StatusCode, 201; got != want {
		t.Fatalf("status = %d; want %d (%v)", got, want, body)
	}
	if got, want := c.got.Amount, "5000"; got != want {
		t.Errorf("amount passed on = %q; want %q (the number's text)", got, want)
	}
	if got, want := c.got.IdempotencyKey, "k-1"; got != want {
		t.Errorf("idempotency key passed on = %q; want %q", got, want)
	}
	if got, want := c.got.Metadata["order"], "A-1"; got != want {
		t.Errorf("metadata passed on = %q; want %q", got, want)
	}
	if got, want := body["id"], "cs_1"; got != want {
		t.Errorf("answered id = %v; want %v", got, want)
	}

	c.replayed = true
	res, _ = call(h, "POST", "/v1/checkout/sessions", secret, `{"amount": 5000, "currency": "XOF"}`, "Idempotency-Key", "k-1")
	if got, want := res.StatusCode, 200; got != want {
		t.Errorf("replay status = %d; want %d", got, want)
	}
	if got, want := res.Header.Get("Idempotent-Replayed"), "true"; got != want {
		t.Errorf("replay header = %q; want %q", got, want)
	}
}

func TestCreateSession_RefusesBeforeTheService(t *testing.T) {
	for _, tc := range []struct {
		name, key, body string
		status          int
		message         string
	}{
		{"no key", "", `{}`, 401, "Missing API key"},
		{"unknown key", "svc_test_sec_" + strings.Repeat("b", 32), `{}`, 401, "Invalid API Key"},
		{"amount as a string", secret, `{"amount": "5000", "currency": "XOF"}`, 400, "amount must be a number"},
		{"unknown field", secret, `{"amount": 5000, "Currency": "XOF"}`, 400, `Unknown field "Currency"`},
		{"metadata not strings", secret, `{"amount": 5000, "metadata": {"n": 1}}`, 400, "metadata.n must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCheckout{}
			res, body := call(newAPI(c, nil), "POST", "/v1/checkout/sessions", tc.key, tc.body)
			if got, want := res.StatusCode, tc.status; got != want {
				t.Fatalf("status = %d; want %d (%v)", got, want, body)
			}
			if got, _ := body["error"].(string); !strings.Contains(got, tc.message) {
				t.Errorf("error = %q; want it to say %q", got, tc.message)
			}
			if c.called {
				t.Errorf("the service was called with %+v; want no call", c.got)
			}
		})
	}
}

func TestCreateSession_ServiceErrorKeepsItsStatus(t *testing.T) {
	c := &fakeCheckout{err: cauri.Errorf(cauri.EUnprocessable, "Idempotency-Key reused")}
	res, body := call(newAPI(c, nil), "POST", "/v1/checkout/sessions", secret, `{"amount": 5000}`)
	if got, want := res.StatusCode, 422; got != want {
		t.Fatalf("status = %d; want %d", got, want)
	}
	if got, want := body["error"], "Idempotency-Key reused"; got != want {
		t.Errorf("error = %v; want %v", got, want)
	}
}

func TestTransferRoutes_GiveEveryErrorItsCode(t *testing.T) {
	h := newAPI(nil, fakeTransfers{})
	for _, tc := range []struct {
		name, key, path string
		status          int
		code            string
	}{
		{"no key", "", "/v1/transfers/tr_x", 401, "unauthorized"},
		{"public key", public, "/v1/transfers/tr_x", 401, "unauthorized"},
		{"test key", secret, "/v1/transfers/tr_x", 403, "test_mode"},
		{"not found", live, "/v1/transfers/tr_x", 404, "transfert_introuvable"},
		{"bad query", live, "/v1/transfers?limit=%zz", 400, "invalid_body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := call(h, "GET", tc.path, tc.key, "")
			if got, want := res.StatusCode, tc.status; got != want {
				t.Fatalf("status = %d; want %d (%v)", got, want, body)
			}
			if got, want := body["code"], tc.code; got != want {
				t.Errorf("code = %v; want %v", got, want)
			}
		})
	}
}
