// Package ratelimit decides whether a request fits its rate limit. A limit
// means at most Count requests accepted in any window of Per (a sliding
// window, not a bucket with a burst and a refill), and a refusal's
// Retry-After is the true wait until one fits. Limiter is the seam: Memory
// serves one node; Redis shares the limits across every node behind the
// same Redis, and falls back to its node's Memory while Redis is
// unreachable, so payments keep flowing.
//
// It imports only the standard library and go-redis.
package ratelimit

import (
	"container/list"
	"context"
	"math"
	"net/netip"
	"sync"
	"time"
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

// IPKey is the key of a client address in per-IP limits: the address
// itself for IPv4, its /64 for IPv6, since one subscriber holds a whole /64
// and could otherwise walk past every limit by rotating within it.
func IPKey(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// DefaultMaxKeys bounds how many keys a Memory limiter remembers.
const DefaultMaxKeys = 100_000

// Memory is a Limiter for a single node: for each key, the times of the
// requests it accepted within the window. It remembers at most MaxKeys
// keys, forgetting the one used least recently beyond that, so a flood of
// distinct keys costs bounded memory (a forgotten key starts afresh).
type Memory struct {
	Now     func() time.Time
	MaxKeys int // DefaultMaxKeys when 0

	mu   sync.Mutex
	keys map[string]*list.Element // of *window
	lru  list.List                // most recently used first
}

type window struct {
	id    string
	times []int64 // accepted requests, unix nanoseconds, oldest first
}

// NewMemory returns an in-memory limiter reading time from now.
func NewMemory(now func() time.Time) *Memory {
	return &Memory{Now: now}
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, l Limit, key string) (Decision, error) {
	now := m.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[string]*list.Element{}
	}
	id := l.Name + "\x00" + key
	e := m.keys[id]
	if e == nil {
		e = m.lru.PushFront(&window{id: id})
		m.keys[id] = e
		max := m.MaxKeys
		if max <= 0 {
			max = DefaultMaxKeys
		}
		for len(m.keys) > max {
			oldest := m.lru.Back()
			m.lru.Remove(oldest)
			delete(m.keys, oldest.Value.(*window).id)
		}
	} else {
		m.lru.MoveToFront(e)
	}
	w := e.Value.(*window)
	start := now - int64(l.Per)
	i := 0
	for i < len(w.times) && w.times[i] <= start {
		i++
	}
	w.times = w.times[i:]
	if len(w.times) >= l.Count {
		return Decision{RetryAfter: time.Duration(w.times[0] + int64(l.Per) - now)}, nil
	}
	w.times = append(w.times, now)
	return Decision{Allowed: true}, nil
}

// Len is how many keys the limiter remembers.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}
