package routing

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
)

// Router is the engine shared by every node through the store: each node
// observes in memory on the request path, writes what it saw to the store
// in batches off it (every FlushEvery, and before each refresh) and, every
// RefreshEvery, rebuilds its engine's state from what all nodes recorded.
type Router struct {
	*Engine
	Store  Store
	Logger *slog.Logger

	pendingMu sync.Mutex
	pending   map[bucket]*store.RoutingCount // observed, not yet written
}

// Store is where the nodes share their counts (*store.Store).
type Store interface {
	RecordRoutingOutcomes(ctx context.Context, counts []store.RoutingCount) error
	RoutingCounts(ctx context.Context, since, until time.Time, step time.Duration) ([]store.RoutingCount, error)
	PurgeRoutingOutcomes(ctx context.Context, before time.Time) (int64, error)
}

// bucket is a count's row: its key and its minute.
type bucket struct {
	provider, country, operator, kind string
	minute                            int64
}

// FlushEvery is how often a node writes what it observed.
const FlushEvery = time.Second

// Memory is how far back a refresh reads: beyond it, outcomes weigh
// nothing worth reading (2^-8 with the default half-life).
const Memory = 48 * time.Hour

// RefreshEvery is how often a node reloads the shared counts.
const RefreshEvery = 10 * time.Second

// Record counts a payment's or payout's outcome here and for every node
// (an OverLimit with its amount, which teaches the ceiling; the failures
// an outage or an operator's incident takes back, from the minutes they
// were counted in).
func (r *Router) Record(ctx context.Context, k Key, o Outcome, latency time.Duration) {
	now := r.Now()
	r.mu.Lock()
	counted, back := r.observeLocked(k, o, latency, now)
	r.mu.Unlock()
	c := store.RoutingCount{Provider: k.Provider, Country: k.Country, Operator: k.Operator, Kind: string(k.Kind),
		Minute: now, LatencyMS: latency.Milliseconds()}
	switch {
	case o == Success && k.Retry:
		c.SucceededMax = k.Amount
	case o == Success:
		c.Successes, c.SucceededMax = 1, k.Amount
	case o == OverLimit:
		c.RefusedMin, c.Refusals = k.Amount, 1
	case !counted: // an operator's incident, or a retry's decline: not the provider's
	case o == Declined:
		c.Failures = 1
	default:
		c.Technical = 1
	}
	r.save(ctx, c)
	r.forgive(ctx, back)
}

// forgive takes failures back from the shared counts, in the minutes this
// node counted them in (so no minute's count goes negative).
func (r *Router) forgive(ctx context.Context, back []forgiven) {
	for _, f := range back {
		for _, m := range f.taken {
			r.save(ctx, store.RoutingCount{Provider: f.link.provider, Country: f.link.country, Operator: f.link.operator, Kind: string(f.link.kind),
				Minute: time.Unix(m.minute*60, 0).UTC(), Failures: -m.declined, Technical: -m.technical})
		}
	}
}

// RecordCall counts whether a provider answered one call.
func (r *Router) RecordCall(ctx context.Context, provider string, answered bool, latency time.Duration) {
	now := r.Now()
	r.mu.Lock()
	back := r.callLocked(provider, answered, now)
	r.mu.Unlock()
	r.forgive(ctx, back)
	c := store.RoutingCount{Provider: provider, Kind: "call", Minute: now, LatencyMS: latency.Milliseconds()}
	if answered {
		c.Successes = 1
	} else {
		c.Technical = 1
	}
	r.save(ctx, c)
}

// save adds c to the counts the next Flush writes.
func (r *Router) save(_ context.Context, c store.RoutingCount) {
	r.pendingMu.Lock()
	defer r.pendingMu.Unlock()
	r.add(c)
}

// add merges c into the pending counts; pendingMu is held.
func (r *Router) add(c store.RoutingCount) {
	if r.pending == nil {
		r.pending = map[bucket]*store.RoutingCount{}
	}
	k := bucket{c.Provider, c.Country, c.Operator, c.Kind, c.Minute.Unix() / 60}
	p := r.pending[k]
	if p == nil {
		p = &store.RoutingCount{Provider: c.Provider, Country: c.Country, Operator: c.Operator, Kind: c.Kind, Minute: c.Minute}
		r.pending[k] = p
	}
	p.Successes, p.Failures, p.Technical, p.LatencyMS = p.Successes+c.Successes, p.Failures+c.Failures, p.Technical+c.Technical, p.LatencyMS+c.LatencyMS
	if c.RefusedMin > 0 && (p.RefusedMin == 0 || c.RefusedMin < p.RefusedMin) {
		p.RefusedMin = c.RefusedMin
	}
	p.SucceededMax, p.Refusals = max(p.SucceededMax, c.SucceededMax), p.Refusals+c.Refusals
}

// Flush writes the counts observed since the last flush, in one
// transaction; if the store refuses them, they are kept for the next.
func (r *Router) Flush(ctx context.Context) error {
	r.pendingMu.Lock()
	batch := make([]store.RoutingCount, 0, len(r.pending))
	for _, c := range r.pending {
		batch = append(batch, *c)
	}
	r.pending = nil
	r.pendingMu.Unlock()
	err := r.Store.RecordRoutingOutcomes(ctx, batch)
	if err != nil {
		r.pendingMu.Lock()
		for _, c := range batch {
			r.add(c)
		}
		r.pendingMu.Unlock()
	}
	return err
}

// Refresh rebuilds the engine's state from every node's counts (this
// node's flushed first): minute buckets for the last hours, hourly ones
// before.
func (r *Router) Refresh(ctx context.Context) error {
	if err := r.Flush(ctx); err != nil {
		return err
	}
	now := r.Now()
	recent := now.Add(-6 * time.Hour).Truncate(time.Hour)
	old, err := r.Store.RoutingCounts(ctx, now.Add(-Memory), recent, time.Hour)
	if err != nil {
		return err
	}
	fresh, err := r.Store.RoutingCounts(ctx, recent, now.Add(time.Minute), time.Minute)
	if err != nil {
		return err
	}
	r.load(append(old, fresh...), now)
	return nil
}

// load replaces the engine's counts with the decayed sum of the buckets
// and the ceilings they teach (ceilings), keeps what this node
// saw of each link's health, and marks down a provider that every node saw
// fail, unanswered, in the last two minutes.
func (r *Router) load(buckets []store.RoutingCount, now time.Time) {
	k := r.Knobs
	stats := map[link]*counts{}
	technical, answered := map[string]int64{}, map[string]int64{}
	linked := map[string]*health{}  // each provider's recent technical payment failures, by link
	first := map[string]time.Time{} // each provider's first outcome, in any context
	for _, b := range buckets {
		if b.Kind != "call" && b.Technical > 0 && now.Sub(b.Minute) <= 2*time.Minute {
			h := linked[b.Provider]
			if h == nil {
				h = &health{}
				linked[b.Provider] = h
			}
			h.attribute(link{b.Provider, b.Country, b.Operator, Kind(b.Kind)}, int(b.Technical))
		}
		if b.Kind == "call" {
			if now.Sub(b.Minute) <= 2*time.Minute {
				technical[b.Provider] += b.Technical
				answered[b.Provider] += b.Successes
			}
			continue
		}
		key := link{b.Provider, b.Country, b.Operator, Kind(b.Kind)}
		c := stats[key]
		if c == nil {
			c = &counts{at: now}
			c.first = b.Minute
			stats[key] = c
			if f, ok := first[b.Provider]; !ok || b.Minute.Before(f) {
				first[b.Provider] = b.Minute
			}
		}
		// No minute's count is negative now (failures are taken back where
		// they were counted); older nodes wrote them as negative counts in
		// the minute they forgave them: read as none.
		b.Failures, b.Technical = max(0, b.Failures), max(0, b.Technical)
		age := float64(now.Sub(b.Minute))
		f, g := math.Exp2(-age/float64(k.HalfLife)), math.Exp2(-age/float64(k.FastHalfLife))
		ok, ko := float64(b.Successes), float64(b.Failures+b.Technical)
		c.ok, c.ko = c.ok+ok*f, c.ko+ko*f
		c.fastOK, c.fastKO = c.fastOK+ok*g, c.fastKO+ko*g
		if n := b.Successes + b.Failures + b.Technical; n > 0 && b.LatencyMS > 0 {
			c.latencyMS = float64(b.LatencyMS) / float64(n) // the latest bucket's mean, as buckets come in time order per key
		}
	}
	for key, ceil := range ceilings(buckets, now, k.CeilingMemory) {
		if c := stats[key]; c != nil {
			c.ceiling, c.ceilingAt, c.refusals = ceil.ceiling, ceil.ceilingAt, ceil.refusals
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, c := range stats {
		c.ok, c.ko, c.fastOK, c.fastKO = math.Max(0, c.ok), math.Max(0, c.ko), math.Max(0, c.fastOK), math.Max(0, c.fastKO)
		if old := r.stats[key]; old != nil {
			// The ceiling is every node's (this node's flushed first);
			// the rest of the link's health is this node's own.
			ceiling, at, n, first := c.ceiling, c.ceilingAt, c.refusals, c.first
			c.linkHealth = old.linkHealth
			c.ceiling, c.ceilingAt, c.refusals, c.first = ceiling, at, n, first
		}
	}
	for key, old := range r.stats {
		if stats[key] == nil && old.fails > 0 {
			stats[key] = &counts{at: now, linkHealth: old.linkHealth}
			stats[key].ceiling, stats[key].refusals = 0, 0
		}
	}
	r.stats = stats
	for l, f := range r.flying { // what no decision reads again is not kept
		if *f = f.expire(now, k.NewcomerInFlightFor); len(*f) == 0 {
			delete(r.flying, l)
		}
	}
	for p, f := range first {
		if h := r.healthOf(p); h.first.IsZero() || f.Before(h.first) {
			h.first = f
		}
	}
	for p, n := range technical {
		h := r.healthOf(p)
		if answered[p] == 0 && int(n) > h.streak {
			h.streak, h.lastFail = int(n), now
			if l := linked[p]; l != nil {
				h.link, h.linkN, h.links = l.link, l.linkN, l.links // one operator's trouble does not mark it down
			}
		}
	}
}

// ceilings reads each link's ceiling from the buckets (in time order per
// link). A bucket keeps the smallest amount refused at once in it, how
// many were refused so and the largest that succeeded, but not their
// order: refusals then a larger success (the ceiling lifted, or never one)
// read the same as a success then refusals. So a bucket's refusals are
// believed only when no success at or above its smallest one was seen in
// that bucket or a later one: a ceiling wrongly believed keeps a provider
// from amounts it carries for CeilingMemory (one is never explored above
// its ceiling), while one wrongly dropped costs CeilingAfter refusals to
// learn again. The ceiling is the smallest refusal believed within
// CeilingMemory, counted with every refusal believed.
func ceilings(buckets []store.RoutingCount, now time.Time, memory time.Duration) map[link]linkHealth {
	out := map[link]linkHealth{}
	paid := map[link]int64{} // the largest success in the bucket or a later one
	for i := len(buckets) - 1; i >= 0; i-- {
		b := buckets[i]
		if b.Kind == "call" {
			continue
		}
		l := link{b.Provider, b.Country, b.Operator, Kind(b.Kind)}
		p := max(paid[l], b.SucceededMax)
		paid[l] = p
		if b.RefusedMin == 0 || b.RefusedMin <= p || now.Sub(b.Minute) >= memory {
			continue
		}
		c := out[l]
		if c.ceiling == 0 || b.RefusedMin < c.ceiling {
			c.ceiling = b.RefusedMin
		}
		c.refusals += int(b.Refusals)
		if b.Minute.After(c.ceilingAt) {
			c.ceilingAt = b.Minute
		}
		out[l] = c
	}
	return out
}

// ProbeDown asks check about every provider marked down, or suspect (Suspect): a call that moves
// no money (a status read of a payment that does not exist), whose answer
// the connector's observer records (RecordCall), bringing the provider back.
func (r *Router) ProbeDown(ctx context.Context, check func(ctx context.Context, provider string) error) (int, error) {
	r.mu.RLock()
	var down []string
	for p, h := range r.health {
		if h.suspect(r.Knobs) {
			down = append(down, p)
		}
	}
	r.mu.RUnlock()
	for _, p := range down {
		check(ctx, p)
	}
	return len(down), nil
}

// Run writes what this node observed every FlushEvery, refreshes the
// engine every RefreshEvery, and forgets counts older than Memory hourly,
// until ctx ends; then it writes what is left (within 5 seconds).
func (r *Router) Run(ctx context.Context) {
	flush := time.NewTicker(FlushEvery)
	defer flush.Stop()
	var purged time.Time
	for tick := 0; ; tick++ {
		now := r.Now()
		var err error
		if tick%int(RefreshEvery/FlushEvery) == 0 {
			err = r.Refresh(ctx)
		} else {
			err = r.Flush(ctx)
		}
		if err != nil && ctx.Err() == nil && r.Logger != nil {
			r.Logger.Warn("routing: counts not shared", "err", err)
		}
		if now.Sub(purged) > time.Hour {
			purged = now
			r.Store.PurgeRoutingOutcomes(ctx, now.Add(-Memory))
		}
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := r.Flush(last); err != nil && r.Logger != nil {
				r.Logger.Warn("routing: counts lost at shutdown", "err", err)
			}
			return
		case <-flush.C:
		}
	}
}
