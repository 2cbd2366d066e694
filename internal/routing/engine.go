// Package routing ranks the aggregators (providers) that can carry a
// payment or a payout in a given context (country, operator, amount), from
// the outcomes observed across the service: a success rate with a Bayesian
// prior, time decay, fast demotion of a provider that stops answering,
// latency as a tie-breaker and a small exploration share. A decision is
// pure in-memory work over state that observations and the background
// refresh from the store keep current. docs/routing.md explains the model.
//
// The engine imports only the standard library; the Router that shares it
// between nodes imports the store.
package routing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
)

// Kind is what a route carries.
type Kind string

const (
	Collect Kind = "collect"
	Payout  Kind = "payout"
)

// Key is what outcomes are counted by.
type Key struct {
	Provider, Country, Operator string
	Kind                        Kind
}

// Outcome is how one payment or payout ended at its provider.
type Outcome int

const (
	Success   Outcome = iota // the money moved
	Declined                 // refused or failed at the customer's or operator's end
	Technical                // the provider did not answer, answered 5xx or could not start it
)

// Knobs of the model (docs/routing.md).
type Knobs struct {
	HalfLife      time.Duration // an outcome weighs half as much after this long
	FastHalfLife  time.Duration // ... in the fast memory, which shows a change sooner
	PriorStrength float64       // how many payments the prior is worth
	DefaultPrior  float64       // the success rate assumed where nothing is known
	DownAfter     int           // technical failures in a row, with no answer since, that mark a provider down
	Caution       float64       // standard deviations taken off a rate to rank it
	Explore       float64       // share of decisions that try a runner-up that could still be the best
	LatencyWeight float64       // score per millisecond of mean latency (a tie-breaker)
}

// DefaultKnobs are the values the simulation was tuned with.
var DefaultKnobs = Knobs{
	HalfLife: 6 * time.Hour, FastHalfLife: 30 * time.Minute, PriorStrength: 10, DefaultPrior: 0.85, DownAfter: 3, Caution: 0, Explore: 0.01, LatencyWeight: 1e-6,
}

// counts are decayed outcome counts, as of at: a slow memory (HalfLife)
// for a steady provider, and a fast one (FastHalfLife) that shows a change
// sooner.
type counts struct {
	ok, ko         float64 // successes, failures (declined or technical), slow memory
	fastOK, fastKO float64 // the same, fast memory
	latencyMS      float64 // exponentially weighted mean latency
	at             time.Time
}

func (c *counts) decay(now time.Time, k Knobs) {
	if c.at.IsZero() {
		c.at = now
		return
	}
	if dt := now.Sub(c.at); dt > 0 {
		f, g := math.Exp2(-float64(dt)/float64(k.HalfLife)), math.Exp2(-float64(dt)/float64(k.FastHalfLife))
		c.ok, c.ko, c.fastOK, c.fastKO, c.at = c.ok*f, c.ko*f, c.fastOK*g, c.fastKO*g, now
	}
}

// estimate is the evidence and the observed rate: the slow memory's,
// unless the fast memory has moved away from it by more than its noise
// explains (then the provider changed, and the fast memory is believed).
func (c *counts) estimate() (ok, n float64) {
	n, fn := c.ok+c.ko, c.fastOK+c.fastKO
	if n == 0 || fn < 1 {
		return c.ok, n
	}
	slow, fast := c.ok/n, c.fastOK/fn
	if math.Abs(fast-slow) > 2*sd(slow, fn) {
		return c.fastOK, fn
	}
	return c.ok, n
}

// health is a provider's recent answering record, for fast demotion.
type health struct {
	streak     int       // technical failures since the last answer
	lastFail   time.Time // the latest technical failure
	lastAnswer time.Time // the latest call the provider answered
}

// down: the provider failed DownAfter calls in a row and has answered none
// since. It stays down until it answers again (a call, or the prober's
// check of its API): no real payment is sent to find out.
func (h *health) down(k Knobs) bool { return h.streak >= k.DownAfter }

// Engine holds the observed state and decides. It is safe for concurrent use.
type Engine struct {
	Knobs Knobs
	Now   func() time.Time

	mu     sync.RWMutex
	stats  map[Key]*counts
	health map[string]*health
	rng    *rand.Rand
}

// New returns an engine with the default knobs; seed fixes its exploration.
func New(now func() time.Time, seed uint64) *Engine {
	return &Engine{Knobs: DefaultKnobs, Now: now, stats: map[Key]*counts{}, health: map[string]*health{},
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Observe counts one payment's or payout's outcome (live only; the caller
// filters).
func (e *Engine) Observe(k Key, o Outcome, latency time.Duration) {
	now := e.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.stats[k]
	if c == nil {
		c = &counts{latencyMS: float64(latency.Milliseconds())}
		e.stats[k] = c
	}
	c.decay(now, e.Knobs)
	if o == Success {
		c.ok++
		c.fastOK++
	} else {
		c.ko++
		c.fastKO++
	}
	if latency > 0 {
		c.latencyMS = 0.8*c.latencyMS + 0.2*float64(latency.Milliseconds())
	}
	e.callLocked(k.Provider, o != Technical, now)
}

// Call records whether a provider answered one call (any call: an
// initiation, a status read, a probe): technical failures in a row mark it
// down; any answer brings it back.
func (e *Engine) Call(provider string, answered bool) {
	now := e.Now()
	e.mu.Lock()
	e.callLocked(provider, answered, now)
	e.mu.Unlock()
}

func (e *Engine) callLocked(provider string, answered bool, now time.Time) {
	h := e.health[provider]
	if h == nil {
		h = &health{}
		e.health[provider] = h
	}
	if answered {
		h.streak, h.lastAnswer = 0, now
		return
	}
	h.streak++
	h.lastFail = now
}

// Down reports whether the provider is marked down now.
func (e *Engine) Down(provider string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	h := e.health[provider]
	return h != nil && h.down(e.Knobs)
}

// Context is what a decision is about. Without an operator, a provider's
// outcomes over every operator of the country count.
type Context struct {
	Country, Operator string
	Kind              Kind
	Amount            int64 // minor units; 0 when unknown
	Providers         []string
}

// Scored is one provider's standing in a decision.
type Scored struct {
	Provider  string
	Score     float64 // estimated success rate, adjusted for latency; -1 when down
	Rate      float64 // posterior mean success rate
	Evidence  float64 // decayed number of observed outcomes
	LatencyMS float64
	Down      bool
}

// Decision is a ranking with its reason and confidence.
type Decision struct {
	Provider   string
	Reason     string // a label, a colon, words: "success_rate: ..."
	Alternates []string
	Confidence float64 // in [0, 1]
	Ranked     []Scored
	Explored   bool // the provider is a runner-up tried on purpose
}

// Rank orders the context's providers, best first, without exploring:
// what the routing API answers.
func (e *Engine) Rank(c Context) Decision { return e.decide(c, false) }

// Choose is Rank for a real payment: a small share of decisions try a
// runner-up that answers and could still be the best, so that its
// estimate stays fresh; a provider that is down never is.
func (e *Engine) Choose(c Context) Decision { return e.decide(c, true) }

func (e *Engine) decide(c Context, explore bool) Decision {
	now := e.Now()
	e.mu.Lock() // decay and the random source mutate
	defer e.mu.Unlock()
	k := e.Knobs
	// The prior: the pooled rate of every provider in this context, or
	// the default where nothing is known.
	stat := func(p string) *counts { return e.stat(p, c, now) }
	var pooledOK, pooledN float64
	for _, p := range c.Providers {
		if s := stat(p); s != nil {
			ok, n := s.estimate()
			pooledOK, pooledN = pooledOK+ok, pooledN+n
		}
	}
	prior := k.DefaultPrior
	if pooledN >= 1 {
		prior = (pooledOK + k.PriorStrength*k.DefaultPrior) / (pooledN + k.PriorStrength)
	}
	ranked := make([]Scored, 0, len(c.Providers))
	seen := map[string]bool{}
	for _, p := range c.Providers {
		if seen[p] {
			continue
		}
		seen[p] = true
		sc := Scored{Provider: p, Rate: prior}
		if s := stat(p); s != nil {
			ok, n := s.estimate()
			sc.Evidence, sc.LatencyMS = n, s.latencyMS
			sc.Rate = (ok + k.PriorStrength*prior) / (n + k.PriorStrength)
		}
		// Ranked by a cautious estimate (a lower confidence bound): a
		// provider seen a few times cannot jump ahead on luck alone.
		sc.Score = sc.Rate - k.Caution*sd(sc.Rate, sc.Evidence+k.PriorStrength) - k.LatencyWeight*sc.LatencyMS
		if h := e.health[p]; h != nil && h.down(k) {
			sc.Down, sc.Score = true, -1
		}
		ranked = append(ranked, sc)
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].Score != ranked[j].Score {
			return ranked[i].Score > ranked[j].Score
		}
		if ranked[i].Down { // all down: the one that answered last first
			return e.lastAnswer(ranked[i].Provider).After(e.lastAnswer(ranked[j].Provider))
		}
		return false
	})
	d := Decision{Ranked: ranked}
	if len(ranked) == 0 {
		d.Reason = "no_provider: no provider serves this context"
		return d
	}
	if explore && len(ranked) > 1 && !ranked[1].Down && e.rng.Float64() < k.Explore {
		// Try the runner-up most likely to be better than the leader, if
		// that is at all likely: its estimate stays fresh, and no payment
		// goes to a provider that is down or plainly worse.
		best, bestP := 0, 0.05
		for i, s := range ranked[1:] {
			if s.Down {
				break
			}
			if p := better(s, ranked[0], k); p > bestP {
				best, bestP = i+1, p
			}
		}
		if best != 0 {
			ranked[0], ranked[best] = ranked[best], ranked[0]
			d.Explored = true
		}
	}
	d.Provider = ranked[0].Provider
	for _, s := range ranked[1:] {
		d.Alternates = append(d.Alternates, s.Provider)
	}
	d.Confidence, d.Reason = e.explain(ranked, d.Explored)
	return d
}

// stat is a provider's decayed counts in a context; with no operator, the
// sum over every operator of the country.
func (e *Engine) stat(p string, c Context, now time.Time) *counts {
	if c.Operator != "" {
		s := e.stats[Key{p, c.Country, c.Operator, c.Kind}]
		if s != nil {
			s.decay(now, e.Knobs)
		}
		return s
	}
	var sum *counts
	for key, s := range e.stats {
		if key.Provider != p || key.Country != c.Country || key.Kind != c.Kind {
			continue
		}
		s.decay(now, e.Knobs)
		if sum == nil {
			sum = &counts{at: now, latencyMS: s.latencyMS}
		}
		sum.ok, sum.ko, sum.fastOK, sum.fastKO = sum.ok+s.ok, sum.ko+s.ko, sum.fastOK+s.fastOK, sum.fastKO+s.fastKO
	}
	return sum
}

func (e *Engine) lastAnswer(p string) time.Time {
	if h := e.health[p]; h != nil {
		return h.lastAnswer
	}
	return time.Time{}
}

// explain gives the decision's confidence and reason. Confidence is the
// probability that the first is truly better than the second (a normal
// approximation of their posteriors), weighed by how much evidence backs
// the first: little data, or a thin margin, is low confidence.
func (e *Engine) explain(r []Scored, explored bool) (float64, string) {
	k := e.Knobs
	first := r[0]
	evidence := first.Evidence / (first.Evidence + k.PriorStrength)
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	switch {
	case first.Down:
		return 0, "all_down: every provider is failing to answer; " + first.Provider + " answered most recently"
	case explored:
		return round(0.5 * evidence), fmt.Sprintf("exploration: %s is tried to keep its estimate fresh (%s over %.0f recent outcomes)",
			first.Provider, pct(first.Rate), first.Evidence)
	case len(r) == 1:
		return round(evidence), fmt.Sprintf("only_provider: %s is the only provider for this context (%s over %.0f recent outcomes)",
			first.Provider, pct(first.Rate), first.Evidence)
	}
	second := r[1]
	if second.Down {
		return round(evidence), fmt.Sprintf("provider_down: %s is not answering; %s at %s", second.Provider, first.Provider, pct(first.Rate))
	}
	conf := round(better(first, second, k) * evidence)
	if first.Evidence < 1 {
		return conf, fmt.Sprintf("cold_start_prior: no recent outcome for %s; the prior (%s) ranks it first", first.Provider, pct(first.Rate))
	}
	if math.Abs(first.Rate-second.Rate) < 1e-9 {
		return conf, fmt.Sprintf("latency: %s and %s succeed alike (%s); %s answers faster", first.Provider, second.Provider, pct(first.Rate), first.Provider)
	}
	return conf, fmt.Sprintf("success_rate: %s at %s over %.0f recent outcomes, ahead of %s at %s",
		first.Provider, pct(first.Rate), first.Evidence, second.Provider, pct(second.Rate))
}

// better is the probability that a's true rate is above b's (a normal
// approximation of their posteriors).
func better(a, b Scored, k Knobs) float64 {
	va, vb := a.Rate*(1-a.Rate)/(a.Evidence+k.PriorStrength+1), b.Rate*(1-b.Rate)/(b.Evidence+k.PriorStrength+1)
	return 0.5 * math.Erfc(-(a.Rate-b.Rate)/math.Sqrt(2*(va+vb)))
}

// sd is the standard deviation of a rate estimated over n outcomes.
func sd(rate, n float64) float64 { return math.Sqrt(rate * (1 - rate) / (n + 1)) }

func round(x float64) float64 { return math.Round(math.Max(0, math.Min(1, x))*1000) / 1000 }
