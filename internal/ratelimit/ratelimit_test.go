package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
)

// TestMemory_SlidingWindow: at most Count accepted in any window of Per,
// and Retry-After the true wait (the oldest accepted leaving the window),
// not a bucket's burst plus refill (which let about twice the figure
// through in a minute).
func TestMemory_SlidingWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	now := t0
	m := NewMemory(func() time.Time { return now })
	l := PerMinute("sessions", 60)
	ctx := context.Background()
	for i := range 30 {
		if d, _ := m.Allow(ctx, l, "1.2.3.4"); !d.Allowed {
			t.Fatalf("request %d refused; want 30 allowed", i+1)
		}
	}
	now = t0.Add(30 * time.Second)
	for i := range 30 {
		if d, _ := m.Allow(ctx, l, "1.2.3.4"); !d.Allowed {
			t.Fatalf("request %d at +30 s refused; want 30 more allowed", i+1)
		}
	}
	d, _ := m.Allow(ctx, l, "1.2.3.4")
	if d.Allowed || d.RetryAfter != 30*time.Second {
		t.Fatalf("61st within the minute = %+v; want refused, retry after 30 s (when the first 30 leave)", d)
	}
	now = t0.Add(59 * time.Second)
	if d, _ := m.Allow(ctx, l, "1.2.3.4"); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("at +59 s = %+v; want refused, 1 s to wait", d)
	}
	if d, _ := m.Allow(ctx, l, "5.6.7.8"); !d.Allowed {
		t.Fatal("another IP was refused")
	}
	if d, _ := m.Allow(ctx, PerMinute("sandbox", 30), "1.2.3.4"); !d.Allowed {
		t.Fatal("another limit's budget was taken")
	}
	now = t0.Add(60*time.Second + time.Nanosecond)
	for i := range 30 {
		if d, _ := m.Allow(ctx, l, "1.2.3.4"); !d.Allowed {
			t.Fatalf("request %d after the first half left refused", i+1)
		}
	}
	if d, _ := m.Allow(ctx, l, "1.2.3.4"); d.Allowed {
		t.Fatal("31st after the first half left allowed; the second half is still in the window")
	}
}

// TestMemory_NeverMoreThanCountInAWindow checks the promise on random
// traffic: for every request accepted, the accepted ones in the window
// that ends with it are at most Count.
func TestMemory_NeverMoreThanCountInAWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	m := NewMemory(func() time.Time { return now })
	l := PerMinute("transfers", 30)
	var accepted []time.Time
	for range 5000 {
		now = now.Add(time.Duration(r.IntN(400)) * time.Millisecond)
		if d, _ := m.Allow(context.Background(), l, "ws_1"); d.Allowed {
			accepted = append(accepted, now)
		}
	}
	for i, at := range accepted {
		n := 0
		for j := i; j >= 0 && at.Sub(accepted[j]) < time.Minute; j-- {
			n++
		}
		if n > l.Count {
			t.Fatalf("%d accepted in the minute ending %s; want at most %d", n, at, l.Count)
		}
	}
	if len(accepted) < 30*int(now.Sub(accepted[0])/time.Minute) {
		t.Fatalf("only %d accepted over %s; the limit refuses too much", len(accepted), now.Sub(accepted[0]))
	}
}

// TestMemory_BoundedKeys: a flood of distinct keys costs bounded memory.
func TestMemory_BoundedKeys(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	m := &Memory{Now: func() time.Time { return now }, MaxKeys: 1000}
	for i := range 200_000 {
		if d, _ := m.Allow(context.Background(), PerMinute("login", 20), fmt.Sprint("2001:db8::", i)); !d.Allowed {
			t.Fatalf("a new key was refused")
		}
	}
	if n := m.Len(); n != 1000 {
		t.Fatalf("keys remembered = %d; want the bound, 1000", n)
	}
}

func TestIPKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
	} {
		if IPKey(netip.MustParseAddr(tc.a)) != IPKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("IPKey(%s) = %s, IPKey(%s) = %s; want one key", tc.a, IPKey(netip.MustParseAddr(tc.a)), tc.b, IPKey(netip.MustParseAddr(tc.b)))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"192.0.2.1", "192.0.2.2"},
	} {
		if IPKey(netip.MustParseAddr(tc.a)) == IPKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s share a key; want two", tc.a, tc.b)
		}
	}
}
