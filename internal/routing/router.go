package routing

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
)

// Router is the engine shared by every node through the store: each node
// records what it sees there and, every RefreshEvery, rebuilds its
// engine's state from what all nodes recorded.
type Router struct {
	*Engine
	Store  *store.Store
	Logger *slog.Logger
}

// Memory is how far back a refresh reads: beyond it, outcomes weigh
// nothing worth reading (2^-8 with the default half-life).
const Memory = 48 * time.Hour

// RefreshEvery is how often a node reloads the shared counts.
const RefreshEvery = 10 * time.Second

// Record counts a payment's or payout's outcome here and for every node.
func (r *Router) Record(ctx context.Context, k Key, o Outcome, latency time.Duration) {
	r.Observe(k, o, latency)
	c := store.RoutingCount{Provider: k.Provider, Country: k.Country, Operator: k.Operator, Kind: string(k.Kind),
		Minute: r.Now(), LatencyMS: latency.Milliseconds()}
	switch o {
	case Success:
		c.Successes = 1
	case Declined:
		c.Failures = 1
	default:
		c.Technical = 1
	}
	r.save(ctx, c)
}

// RecordCall counts whether a provider answered one call.
func (r *Router) RecordCall(ctx context.Context, provider string, answered bool, latency time.Duration) {
	r.Call(provider, answered)
	c := store.RoutingCount{Provider: provider, Kind: "call", Minute: r.Now(), LatencyMS: latency.Milliseconds()}
	if answered {
		c.Successes = 1
	} else {
		c.Technical = 1
	}
	r.save(ctx, c)
}

func (r *Router) save(ctx context.Context, c store.RoutingCount) {
	if err := r.Store.RecordRoutingOutcome(context.WithoutCancel(ctx), c); err != nil && r.Logger != nil {
		r.Logger.Warn("routing: outcome not recorded", "err", err)
	}
}

// Refresh rebuilds the engine's state from every node's counts: minute
// buckets for the last hours, hourly ones before.
func (r *Router) Refresh(ctx context.Context) error {
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

// load replaces the engine's counts with the decayed sum of the buckets,
// and marks down a provider that every node saw fail, unanswered, in the
// last two minutes.
func (r *Router) load(buckets []store.RoutingCount, now time.Time) {
	k := r.Knobs
	stats := map[Key]*counts{}
	technical, answered := map[string]int64{}, map[string]int64{}
	for _, b := range buckets {
		if b.Kind == "call" {
			if now.Sub(b.Minute) <= 2*time.Minute {
				technical[b.Provider] += b.Technical
				answered[b.Provider] += b.Successes
			}
			continue
		}
		key := Key{b.Provider, b.Country, b.Operator, Kind(b.Kind)}
		c := stats[key]
		if c == nil {
			c = &counts{at: now}
			stats[key] = c
		}
		age := float64(now.Sub(b.Minute))
		f, g := math.Exp2(-age/float64(k.HalfLife)), math.Exp2(-age/float64(k.FastHalfLife))
		ok, ko := float64(b.Successes), float64(b.Failures+b.Technical)
		c.ok, c.ko = c.ok+ok*f, c.ko+ko*f
		c.fastOK, c.fastKO = c.fastOK+ok*g, c.fastKO+ko*g
		if n := b.Successes + b.Failures + b.Technical; n > 0 && b.LatencyMS > 0 {
			c.latencyMS = float64(b.LatencyMS) / float64(n) // the latest bucket's mean, as buckets come in time order per key
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = stats
	for p, n := range technical {
		h := r.health[p]
		if h == nil {
			h = &health{}
			r.health[p] = h
		}
		if answered[p] == 0 && int(n) > h.streak {
			h.streak, h.lastFail = int(n), now
		}
	}
}

// ProbeDown asks check about every provider marked down: a call that moves
// no money (a status read of a payment that does not exist), whose answer
// the connector's observer records (RecordCall), bringing the provider back.
func (r *Router) ProbeDown(ctx context.Context, check func(ctx context.Context, provider string) error) (int, error) {
	r.mu.RLock()
	var down []string
	for p, h := range r.health {
		if h.down(r.Knobs) {
			down = append(down, p)
		}
	}
	r.mu.RUnlock()
	for _, p := range down {
		check(ctx, p)
	}
	return len(down), nil
}

// Run refreshes the engine every RefreshEvery, and forgets counts older
// than Memory hourly, until ctx ends.
func (r *Router) Run(ctx context.Context) {
	tick := time.NewTicker(RefreshEvery)
	defer tick.Stop()
	var purged time.Time
	for {
		if err := r.Refresh(ctx); err != nil && ctx.Err() == nil && r.Logger != nil {
			r.Logger.Warn("routing: refresh", "err", err)
		}
		if now := r.Now(); now.Sub(purged) > time.Hour {
			purged = now
			r.Store.PurgeRoutingOutcomes(ctx, now.Add(-Memory))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
