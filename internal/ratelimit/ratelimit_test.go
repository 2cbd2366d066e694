package ratelimit

import (
	"context"
	"testing"
	"time"
)

func TestMemory_Allow(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	m := NewMemory(func() time.Time { return now })
	l := PerMinute("sessions", 60)
	ctx := context.Background()
	for i := range 60 {
		if d, _ := m.Allow(ctx, l, "1.2.3.4"); !d.Allowed {
			t.Fatalf("request %d refused; want 60 allowed", i+1)
		}
	}
	d, _ := m.Allow(ctx, l, "1.2.3.4")
	if d.Allowed || d.RetryAfterSeconds() != 1 {
		t.Fatalf("61st = %+v (Retry-After %d); want refused, retry after 1 s", d, d.RetryAfterSeconds())
	}
	if d, _ := m.Allow(ctx, l, "5.6.7.8"); !d.Allowed {
		t.Fatal("another IP was refused")
	}
	if d, _ := m.Allow(ctx, PerMinute("sandbox", 30), "1.2.3.4"); !d.Allowed {
		t.Fatal("another limit's budget was taken")
	}
	now = now.Add(time.Second)
	if d, _ := m.Allow(ctx, l, "1.2.3.4"); !d.Allowed {
		t.Fatal("refused after the refill of one token")
	}
	now = now.Add(2 * time.Minute)
	m.Allow(ctx, l, "9.9.9.9")
	if _, ok := m.buckets["sessions\x005.6.7.8"]; ok {
		t.Fatal("idle bucket not swept")
	}
}
