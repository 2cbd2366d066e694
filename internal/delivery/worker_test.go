package delivery

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
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

// drainStore is a WorkerStore whose endpoints A and B have deliveries in
// flight and none due, and C has some due: what the worker leases shows
// which endpoints its slots went to.
type drainStore struct {
	WorkerStore
	due     map[store.Endpoint][]string // not yet claimed
	claimed []string
}

func (f *drainStore) DueEndpoints(context.Context, time.Time, time.Time, int) ([]store.Endpoint, error) {
	var out []store.Endpoint
	for ep, ids := range f.due {
		if len(ids) > 0 {
			out = append(out, ep)
		}
	}
	return out, nil
}

func (f *drainStore) DueDeliveries(_ context.Context, _ time.Time, want map[store.Endpoint]int) ([]*cauri.Delivery, error) {
	var out []*cauri.Delivery
	for ep, n := range want {
		for _, id := range f.due[ep][:min(n, len(f.due[ep]))] {
			out = append(out, &cauri.Delivery{ID: id, WorkspaceID: ep.WorkspaceID, Livemode: ep.Livemode})
		}
	}
	return out, nil
}

func (f *drainStore) ClaimDeliveries(_ context.Context, ids []string, _, _ time.Time) (string, []string, error) {
	for _, id := range ids {
		f.claimed = append(f.claimed, id)
		for ep, list := range f.due {
			f.due[ep] = slices.DeleteFunc(list, func(x string) bool { return x == id })
		}
	}
	return "lease", ids, nil
}

func (f *drainStore) DeliveryTargets(_ context.Context, ids []string, _ time.Time) ([]*store.DeliveryTarget, error) {
	var out []*store.DeliveryTarget
	for _, id := range ids { // whd_<x>N belongs to ws_<x>
		ws := "ws_" + strings.TrimPrefix(id, "whd_")[:1]
		out = append(out, &store.DeliveryTarget{Delivery: &cauri.Delivery{ID: id, WorkspaceID: ws}, Problem: "not sent in this test"})
	}
	return out, nil
}

// TestWorker_DrainedEndpointsGiveWay: slots offered to endpoints whose
// deliveries are all in flight come back empty; the pass says to go again
// at once (not at the next poll), and those endpoints are passed over until
// new deliveries come due for them, so the free slots reach the endpoint
// that has work within a few passes, not one more endpoint per pass.
func TestWorker_DrainedEndpointsGiveWay(t *testing.T) {
	f := &drainStore{due: map[store.Endpoint][]string{{WorkspaceID: "ws_f"}: {"whd_f1", "whd_f2", "whd_f3"}}}
	w := &Worker{Store: f, Concurrency: 14, PerEndpoint: 2, MaxPerEndpoint: 4, Now: time.Now, Schedule: cauri.DefaultRetrySchedule,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w.init()
	// Five endpoints hold 2 attempts each and may take 2 more, with nothing
	// else due; F has work and comes last in turn. 4 slots are free.
	w.eps = map[store.Endpoint]*endpointState{{WorkspaceID: "ws_f"}: {limit: 2}}
	w.order = []store.Endpoint{{WorkspaceID: "ws_f"}}
	for _, id := range []string{"ws_a", "ws_b", "ws_c", "ws_d", "ws_e"} {
		ep := store.Endpoint{WorkspaceID: id}
		w.eps[ep], w.order = &endpointState{inflight: 2, limit: 4}, append(w.order, ep)
	}
	w.running, w.sweptAt, w.seenTo = 10, time.Now(), time.Now()
	ctx := context.Background()
	if again := w.dispatch(ctx); !again || len(f.claimed) != 0 {
		t.Fatalf("first pass: again %v, claimed %v; want the free slots offered to endpoints with nothing due, so again at once", again, f.claimed)
	}
	for pass := 2; pass <= 3 && len(f.claimed) == 0; pass++ {
		w.dispatch(ctx)
	}
	if !slices.Equal(f.claimed, []string{"whd_f1", "whd_f2"}) {
		t.Fatalf("after three passes claimed %v; want F's first two (its share), the drained endpoints passed over", f.claimed)
	}
	w.wg.Wait()
}
