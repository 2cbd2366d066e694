package pay

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

// These tests hold the pages' script routes alone, over a fake of the
// checkout service. The pages themselves are tested in a real browser over
// the whole service (internal/web).

var now = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// fakeCheckout settles a test session and records the request.
type fakeCheckout struct {
	Checkout  // any other method panics: the handler under test must not call it
	id, issue string
	payment   checkout.Payment
}

func (f *fakeCheckout) SettleSandbox(_ context.Context, id, issue string) (*cauri.Session, error) {
	f.id, f.issue = id, issue
	status := cauri.SessionSuccess
	if issue == checkout.IssueFailure {
		status = cauri.SessionFailed
	}
	return &cauri.Session{ID: id, Status: status}, nil
}

func (f *fakeCheckout) Initiate(_ context.Context, id string, p checkout.Payment) (*cauri.PaymentAttempt, error) {
	f.id, f.payment = id, p
	return nil, cauri.Errorf(cauri.EBadGateway, "The operator refused: insufficient funds")
}

func newPages(t *testing.T, c Checkout) http.Handler {
	p, err := New(Pages{Kit: &httpx.Kit{Logger: slog.New(slog.DiscardHandler), Limiter: ratelimit.NewMemory(func() time.Time { return now })},
		Checkout: c, PayURL: "http://127.0.0.1/pay", LinkURL: "http://127.0.0.1/pay/l"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Routes(mux)
	return mux
}

func post(h http.Handler, path, body string) (int, map[string]any) {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:4000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Result().Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return rec.Code, out
}

func TestSandbox_SettlesWhatItWasAsked(t *testing.T) {
	c := &fakeCheckout{}
	status, body := post(newPages(t, c), "/checkout/sandbox", `{"transactionId": "cs_1", "issue": "echec"}`)
	if got, want := status, 200; got != want {
		t.Fatalf("status = %d; want %d (%v)", got, want, body)
	}
	if c.id != "cs_1" || c.issue != checkout.IssueFailure {
		t.Errorf("settled %q as %q; want cs_1 as %q", c.id, c.issue, checkout.IssueFailure)
	}
	if got, want := body["message"], "Test payment failed"; got != want {
		t.Errorf("message = %v; want %v", got, want)
	}
}

func TestSandbox_RefusesInTheScriptsShape(t *testing.T) {
	for _, tc := range []struct{ name, body, message string }{
		{"no session", `{"issue": "succes"}`, "transactionId is required"},
		{"unknown issue", `{"transactionId": "cs_1", "issue": "maybe"}`, `issue must be "succes" or "echec"`},
		{"not an object", `issue=succes`, "Request body must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCheckout{}
			status, body := post(newPages(t, c), "/checkout/sandbox", tc.body)
			if got, want := status, 400; got != want {
				t.Fatalf("status = %d; want %d (%v)", got, want, body)
			}
			if got, want := body["success"], false; got != want {
				t.Errorf("success = %v; want %v", got, want)
			}
			if got, _ := body["message"].(string); !strings.HasPrefix(got, tc.message) {
				t.Errorf("message = %q; want it to start %q", got, tc.message)
			}
			if c.id != "" {
				t.Errorf("the service settled %q; want no call", c.id)
			}
		})
	}
}

func TestSandbox_LimitedPerIP(t *testing.T) {
	h := newPages(t, &fakeCheckout{})
	for i := range httpx.LimitSandbox.Count {
		if status, body := post(h, "/checkout/sandbox", `{"transactionId": "cs_1", "issue": "succes"}`); status != 200 {
			t.Fatalf("request %d = %d %v; want 200 within the limit", i+1, status, body)
		}
	}
	status, body := post(h, "/checkout/sandbox", `{"transactionId": "cs_1", "issue": "succes"}`)
	if got, want := status, 429; got != want {
		t.Fatalf("request %d = %d; want %d", httpx.LimitSandbox.Count+1, got, want)
	}
	if got, _ := body["message"].(string); !strings.Contains(got, "at most 30 a minute per IP") {
		t.Errorf("message = %q; want the limit named", got)
	}
}

func TestInitiate_PassesTheChoiceOnAndTheRefusalBack(t *testing.T) {
	c := &fakeCheckout{}
	status, body := post(newPages(t, c), "/checkout/initiate",
		`{"transactionId": "cs_1", "gatewayId": "gw_1", "code": "ORANGE_SEN", "phone": "+221771234567", "holder": {"name": "Awa Ndiaye", "city": "Dakar"}}`)
	if got, want := status, 502; got != want {
		t.Fatalf("status = %d; want %d (%v)", got, want, body)
	}
	if got, want := body["message"], "The operator refused: insufficient funds"; got != want {
		t.Errorf("message = %v; want %v", got, want)
	}
	if got, want := body["again"], true; got != want {
		t.Errorf("again = %v; want %v (the page, shown again, says why in the customer's words)", got, want)
	}
	p := c.payment
	if c.id != "cs_1" || p.GatewayID != "gw_1" || p.Code != "ORANGE_SEN" || p.Phone != "+221771234567" {
		t.Errorf("initiated %q with %+v; want cs_1 through gw_1, ORANGE_SEN, +221771234567", c.id, p)
	}
	if got, want := p.Holder.Name+"/"+p.Holder.Billing.City, "Awa Ndiaye/Dakar"; got != want {
		t.Errorf("holder passed on = %q; want %q", got, want)
	}
}
