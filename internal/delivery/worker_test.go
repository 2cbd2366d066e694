package delivery

import (
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

func TestWorker_Next(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w := &Worker{Schedule: cauri.DefaultRetrySchedule}
	for _, tc := range []struct {
		name       string
		made, max  int // automatic attempts before this one; the delivery's cap
		retryAfter time.Duration
		want       time.Duration // -1: no next attempt
	}{
		{"AfterFirst", 0, 10, 0, time.Minute},
		{"AfterFifth", 4, 10, 0, 3 * time.Hour},
		{"AfterNinth", 8, 10, 0, 24 * time.Hour},
		{"AfterLast", 9, 10, 0, -1},
		{"RetryAfterLonger", 0, 10, 90 * time.Second, 90 * time.Second},
		{"RetryAfterCapped", 0, 10, time.Hour, 2 * time.Minute},
		{"RetryAfterShorter", 2, 10, time.Minute, 15 * time.Minute},
		{"RetryAfterOnLast", 9, 10, time.Hour, -1},
		{"CapBelowSchedule", 2, 3, 0, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := w.next(&cauri.Delivery{AutoAttempts: tc.made, MaxAttempts: tc.max}, now, tc.retryAfter)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("next = %v; want none", got)
			case tc.want >= 0 && (got == nil || got.Sub(now) != tc.want):
				t.Fatalf("next = %v; want now + %v", got, tc.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"120": 2 * time.Minute, "0": 0, "-5": 0, "soon": 0, "": 0,
		"Sun, 22 Nov 2026 10:05:00 GMT": 5 * time.Minute, "Sun, 22 Nov 2026 09:00:00 GMT": 0,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %v; want %v", in, got, want)
		}
	}
}

// TestNetworkError: what the delivery log shows the merchant names their
// host and the failure, never the service's resolver or ports.
func TestNetworkError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "https://shop.example/h", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "shop.example", Server: "10.0.0.2:53", IsNotFound: true}}}, "host shop.example does not resolve"},
		{&url.Error{Op: "Post", URL: "https://shop.example/h", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "server misbehaving", Name: "shop.example", Server: "10.0.0.2:53"}}}, "host shop.example could not be resolved: server misbehaving"},
		{&url.Error{Op: "Post", URL: "https://shop.example/h", Err: &net.OpError{Op: "dial", Net: "tcp",
			Source: &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 40123}, Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}, "connection refused"},
	} {
		got := networkError(tc.err)
		if got != tc.want || strings.Contains(got, "10.0.0") {
			t.Errorf("networkError(%v) = %q; want %q", tc.err, got, tc.want)
		}
	}
}

// TestWorker_EndpointShare: an endpoint that answers 2xx fast gains a slot
// per answer up to MaxPerEndpoint; a failure or a slow answer halves its
// share, never under PerEndpoint.
func TestWorker_EndpointShare(t *testing.T) {
	w := &Worker{Concurrency: 16, PerEndpoint: 2}
	w.init()
	ep := store.Endpoint{WorkspaceID: "ws_1"}
	w.eps[ep] = &endpointState{limit: w.PerEndpoint}
	answer := func(a store.DeliveryAttempt) int {
		w.running++
		w.eps[ep].inflight++
		w.settle(ep, a)
		return w.eps[ep].limit
	}
	fast := store.DeliveryAttempt{Delivered: true, ResponseMS: 3}
	for i := range 10 {
		if got, want := answer(fast), min(3+i, 8); got != want {
			t.Fatalf("after %d fast answers the share is %d; want %d (MaxPerEndpoint: half of Concurrency)", i+1, got, want)
		}
	}
	if got, want := answer(store.DeliveryAttempt{StatusCode: 500, ResponseMS: 3}), 4; got != want {
		t.Errorf("after a 500 the share is %d; want %d", got, want)
	}
	if got, want := answer(store.DeliveryAttempt{Delivered: true, ResponseMS: 900}), 2; got != want {
		t.Errorf("after a slow 2xx the share is %d; want %d", got, want)
	}
	if got, want := answer(store.DeliveryAttempt{Error: "timeout"}), 2; got != want {
		t.Errorf("after a timeout the share is %d; want %d (never under PerEndpoint)", got, want)
	}
	if w.running != 0 || w.eps[ep].inflight != 0 {
		t.Errorf("slots held after every answer: %d, %d; want none", w.running, w.eps[ep].inflight)
	}
}
