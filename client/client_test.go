package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// These tests pin the client's own behaviour against a scripted server; the
// end-to-end tests in cmd/cauri run it against the real service.

func TestClient_RetriesAfter429(t *testing.T) {
	var calls atomic.Int32
	var gotKey, gotIdem, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":"Too many requests"}`)
			return
		}
		gotKey, gotIdem = r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(200)
		io.WriteString(w, `{"id":"cs_1","amount":15.5,"currency":"GHS","status":"PENDING","created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z","completed_at":null}`)
	}))
	defer srv.Close()
	c := New(srv.URL, "svc_test_sec_x")
	start := time.Now()
	sess, replayed, err := c.CreateSession(context.Background(), CreateSessionRequest{Amount: "15.5"}, "order-1")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || time.Since(start) < time.Second {
		t.Fatalf("%d calls in %v; want a retry after Retry-After (1 s)", calls.Load(), time.Since(start))
	}
	if !replayed || sess.Id != "cs_1" || sess.Amount.String() != "15.5" || sess.CompletedAt != nil {
		t.Fatalf("session = %+v, replayed %v", sess, replayed)
	}
	if gotKey != "Bearer svc_test_sec_x" || gotIdem != "order-1" || gotBody != `{"amount":15.5}` {
		t.Fatalf("request: auth %q, idempotency %q, body %s", gotKey, gotIdem, gotBody)
	}
}

func TestClient_Errors(t *testing.T) {
	for _, tc := range []struct {
		name, body, retryAfter string
		status                 int
		want                   APIError
	}{
		{"API", `{"error":"amount is required"}`, "", 400, APIError{Status: 400, Message: "amount is required"}},
		{"Coded", `{"error":"Transfers are closed","code":"transferts_inactifs"}`, "", 403, APIError{Status: 403, Message: "Transfers are closed", Code: "transferts_inactifs"}},
		{"Page", `{"success":false,"message":"Session is SUCCESS and can no longer be paid"}`, "", 409, APIError{Status: 409, Message: "Session is SUCCESS and can no longer be paid"}},
		{"NotJSON", `oops`, "", 502, APIError{Status: 502, Message: "Bad Gateway"}},
		{"RetryTooLong", `{"error":"Too many requests"}`, "3600", 429, APIError{Status: 429, Message: "Too many requests", RetryAfter: time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.Header().Set("X-Request-Id", "req_1")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			_, err := New(srv.URL, "k").SessionStatus(context.Background(), "cs_1")
			var got *APIError
			if !errors.As(err, &got) {
				t.Fatalf("err = %v; want an *APIError", err)
			}
			tc.want.RequestID = "req_1"
			if *got != tc.want {
				t.Fatalf("err = %+v; want %+v", *got, tc.want)
			}
			if !strings.Contains(got.Error(), tc.want.Message) {
				t.Fatalf("Error() = %q", got.Error())
			}
		})
	}
}
