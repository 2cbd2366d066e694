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
