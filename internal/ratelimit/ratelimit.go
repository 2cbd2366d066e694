// Package ratelimit decides whether a request fits its rate limit. Limits
// are token buckets: N requests per period, refilled evenly, full when idle.
// Limiter is the seam: Memory serves one node; a shared implementation
// (Redis) serves several nodes behind the same interface.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a named budget of Count requests per Per.
type Limit struct {
	Name  string
	Count int
	Per   time.Duration
}

// PerMinute is a budget of n requests a minute.
func PerMinute(name string, n int) Limit { return Limit{Name: name, Count: n, Per: time.Minute} }

// Decision is the answer for one request.
type Decision struct {
	Allowed    bool
	RetryAfter time.Duration // when refused: how long until one request fits
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1,
// for the Retry-After header.
func (d Decision) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(d.RetryAfter.Seconds())))
}

// Limiter takes one request from key's budget under l.
type Limiter interface {
	Allow(ctx context.Context, l Limit, key string) (Decision, error)
}

// Unlimited allows everything. It exists for benchmarks only (cauri serve
// --unsafe-no-rate-limits), never for production.
type Unlimited struct{}

// Allow implements Limiter.
func (Unlimited) Allow(context.Context, Limit, string) (Decision, error) {
	return Decision{Allowed: true}, nil
}

// Memory is a Limiter for a single node.
type Memory struct {
	Now func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
	per  time.Duration
}

// NewMemory returns an in-memory limiter reading time from now.
func NewMemory(now func() time.Time) *Memory {
	return &Memory{Now: now, buckets: map[string]*bucket{}}
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, l Limit, key string) (Decision, error) {
	now := m.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	id := l.Name + "\x00" + key
	b := m.buckets[id]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(l.Count)/l.Per.Seconds()), l.Count), per: l.Per}
		m.buckets[id] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		return Decision{RetryAfter: delay}, nil
	}
	return Decision{Allowed: true}, nil
}

// sweep forgets buckets idle for longer than their period: they are full
// again, exactly like a new one.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < time.Minute {
		return
	}
	m.lastSweep = now
	for id, b := range m.buckets {
		if now.Sub(b.seen) > b.per {
			delete(m.buckets, id)
		}
	}
}
