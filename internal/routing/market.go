package routing

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// MarketConfig describes the second simulated world, a market (issue 23):
// countries with a few operators each, aggregators a few points apart that
// serve some of them, traffic that is heavy in a few contexts and sparse in
// the rest, amounts with ceilings, operator-wide outages, one provider's
// integration with one operator breaking, whole-API outages, customers who
// retry after a failure, drift, a daily congestion, a leader that slowly
// degrades, and a new provider going live. Outcomes reach the engine when
// production would see them: a 5xx or a refusal for the amount at once, a
// success when the customer approves, a decline when the push expires.
// docs/routing.md says where each number comes from.
type MarketConfig struct {
	Seed     uint64
	Payments int           // customers' first attempts; retries come on top
	Span     time.Duration // simulated time they spread over
	Knobs    Knobs
	Calm     bool // the hard situations switched off (outages, ceilings, retries, degradation, newcomer)
	// NewcomerLead: the newcomer's base rate above the best incumbent's in
	// each of its contexts (negative: a worse newcomer).
	NewcomerLead float64
	// EngineSeed seeds the engine's own random choices (which payments it
	// explores with); 0: the world's seed.
	EngineSeed uint64
}

// MarketSim is the market docs/routing.md reports, on seed 101.
var MarketSim = MarketConfig{Seed: 101, Payments: 250_000, Span: 4 * 24 * time.Hour, Knobs: DefaultKnobs, NewcomerLead: 0.03}

// Numbers of the market (docs/routing.md, "The market": where each comes from).
const (
	marketProviders  = 6
	pushExpiry       = 2 * time.Minute // a decline is seen when the push expires
	retryFirst       = 0.6             // a failed customer tries again...
	retrySecond      = 0.4             // ... and once more
	stickyKeep       = 0.4             // a provider that failed a customer for its own reason: its chance left with them
	ableShare        = 0.93            // customers whose wallet can pay (funds, limits) at the median amount
	topUp            = 0.35            // of those who could not, the share who can at their retry
	newcomerLiveFrac = 0.4             // the new provider goes live at 40 % of the span
)

// marketCountries: each country's operators and median amount (minor
// units of its currency).
var marketCountries = []struct {
	operators int
	median    float64
}{{3, 5_000}, {3, 4_000}, {3, 3_000}, {3, 50_000}, {2, 2_000}, {2, 1_500}}

type interval struct{ from, to time.Duration }

type within []interval

func (w within) at(t time.Duration) bool {
	for _, i := range w {
		if t >= i.from && t < i.to {
			return true
		}
	}
	return false
}

// after: t is in an interval or less than d after one.
func (w within) after(t, d time.Duration) bool {
	for _, i := range w {
		if t >= i.from && t < i.to+d {
			return true
		}
	}
	return false
}

type market struct {
	cfg      MarketConfig
	nC       int
	country  []int       // context -> country
	weight   []float64   // context -> cumulative traffic share
	sparse   []bool      // the contexts with the least traffic
	serves   [][]bool    // provider, context
	base     [][]float64 // provider, context: the true rate at the median amount, no congestion
	phase    [][]float64
	congHour []float64   // provider: the hour its congestion peaks
	congPts  [][]float64 // provider, context: how deep
	ceiling  [][]int64   // provider, country: 0 none
	fiveXX   []bool      // the provider answers 5xx when an operator fails (others: the push never comes)
	live     []time.Duration
	opOut    []within   // context
	linkOut  [][]within // provider, context
	linkTech [][]bool   // provider, context: the link's outage answers 5xx (else declines)
	apiOut   []within   // provider
	degrade  [][]interval
}

func newMarket(cfg MarketConfig) *market {
	rng := rand.New(rand.NewPCG(cfg.Seed, 23))
	m := &market{cfg: cfg}
	span := cfg.Span
	for ci, c := range marketCountries {
		for range c.operators {
			m.country = append(m.country, ci)
		}
	}
	m.nC = len(m.country)
	// Traffic: a few heavy contexts, a long sparse tail (Zipf, s = 1.2).
	order := rng.Perm(m.nC)
	total, w := 0.0, make([]float64, m.nC)
	for rank, c := range order {
		w[c] = 1 / math.Pow(float64(rank+1), 1.2)
		total += w[c]
		m.sparse = append(m.sparse, false)
	}
	for rank, c := range order {
		if rank >= m.nC-6 {
			m.sparse[c] = true
		}
	}
	acc := 0.0
	for c := range m.nC {
		acc += w[c] / total
		m.weight = append(m.weight, acc)
	}
	// Providers: a quality a few points apart, per context a few more.
	quality := make([]float64, marketProviders)
	for p := range quality {
		quality[p] = -0.03 + 0.06*rng.Float64()
	}
	ctxBase := make([]float64, m.nC)
	for c := range ctxBase {
		ctxBase[c] = 0.72 + 0.18*rng.Float64()
	}
	for p := range marketProviders {
		var serves []bool
		var base, phase, cong []float64
		countries := map[int]bool{}
		for ci := range marketCountries {
			countries[ci] = rng.Float64() < 0.7
		}
		for c := range m.nC {
			serves = append(serves, countries[m.country[c]])
			base = append(base, math.Min(0.98, ctxBase[c]+quality[p]+0.02*rng.NormFloat64()))
			phase = append(phase, 2*math.Pi*rng.Float64())
			cong = append(cong, 0.06*rng.Float64())
		}
		m.serves, m.base, m.phase, m.congPts = append(m.serves, serves), append(m.base, base), append(m.phase, phase), append(m.congPts, cong)
		m.congHour = append(m.congHour, 9+11*rng.Float64())
		var ceil []int64
		for _, c := range marketCountries {
			var v int64
			if !cfg.Calm && rng.Float64() < 0.5 {
				v = int64(c.median * (4 + 16*rng.Float64())) // refuses the largest payments: a few % of them
			}
			ceil = append(ceil, v)
		}
		m.ceiling = append(m.ceiling, ceil)
		m.fiveXX = append(m.fiveXX, rng.Float64() < 0.5)
		m.live = append(m.live, 0)
	}
	// Every context has two providers at least.
	for c := range m.nC {
		for n := 0; ; n++ {
			k := 0
			for p := range marketProviders - 1 {
				if m.serves[p][c] {
					k++
				}
			}
			if k >= 2 {
				break
			}
			m.serves[n%(marketProviders-1)][c] = true
		}
	}
	// The newcomer: two countries, better than the incumbents there.
	newP := marketProviders - 1
	for c := range m.nC {
		m.serves[newP][c] = false
	}
	if !cfg.Calm {
		m.live[newP] = time.Duration(newcomerLiveFrac * float64(span))
		for _, ci := range rng.Perm(len(marketCountries))[:2] {
			for c := range m.nC {
				if m.country[c] != ci {
					continue
				}
				best := 0.0
				for p := range newP {
					if m.serves[p][c] {
						best = math.Max(best, m.base[p][c])
					}
				}
				m.serves[newP][c], m.base[newP][c] = true, math.Min(0.98, best+cfg.NewcomerLead)
			}
		}
	}
	outages := func(perDay float64, minD, maxD time.Duration) within {
		var out within
		if cfg.Calm {
			return out
		}
		for t := time.Duration(0); ; {
			t += time.Duration(rng.ExpFloat64() * float64(24*time.Hour) / perDay)
			if t >= span {
				return out
			}
			d := minD + time.Duration(rng.Float64()*float64(maxD-minD))
			out = append(out, interval{t, t + d})
			t += d
		}
	}
	for range m.nC {
		m.opOut = append(m.opOut, outages(0.4, 10*time.Minute, 60*time.Minute))
	}
	for p := range marketProviders {
		var links []within
		var tech []bool
		for c := range m.nC {
			var w within
			if m.serves[p][c] {
				w = outages(0.25, 5*time.Minute, 45*time.Minute)
			}
			links = append(links, w)
			tech = append(tech, rng.Float64() < 0.5)
		}
		m.linkOut, m.linkTech = append(m.linkOut, links), append(m.linkTech, tech)
		m.apiOut = append(m.apiOut, outages(0.3, 3*time.Minute, 30*time.Minute))
	}
	// A slowly degrading leader in the three busiest contexts: 10 points
	// lost over 8 hours, for a day.
	m.degrade = make([][]interval, marketProviders)
	for p := range m.degrade {
		m.degrade[p] = make([]interval, m.nC)
	}
	if !cfg.Calm {
		for _, c := range order[:3] {
			lead := m.leader(c)
			start := time.Duration((0.2 + 0.5*rng.Float64()) * float64(span))
			m.degrade[lead][c] = interval{start, start + 8*time.Hour}
		}
	}
	return m
}

func (m *market) leader(c int) int {
	best, bp := -1.0, 0
	for p := range marketProviders {
		if m.serves[p][c] && m.base[p][c] > best {
			best, bp = m.base[p][c], p
		}
	}
	return bp
}

// rate is provider p's true success rate in context c at t for a customer
// who can pay: its base, drifting ±2.5 points over about two days, less its
// congestion around its peak hour and a degradation.
func (m *market) rate(p, c int, t time.Duration) float64 {
	r := m.base[p][c] + 0.025*math.Sin(2*math.Pi*t.Hours()/45+m.phase[p][c])
	h := math.Mod(t.Hours(), 24)
	dh := math.Min(math.Abs(h-m.congHour[p]), 24-math.Abs(h-m.congHour[p]))
	r -= m.congPts[p][c] * math.Exp(-dh*dh/4)
	if d := m.degrade[p][c]; d.to > 0 && t >= d.from {
		r -= 0.10 * math.Min(1, float64(t-d.from)/float64(d.to-d.from))
		if t > d.to+16*time.Hour {
			r += 0.10
		}
	}
	return math.Max(0.05, math.Min(0.99, r))
}

// serving: the providers that are live for context c at t.
func (m *market) serving(c int, t time.Duration) []int {
	var out []int
	for p := range marketProviders {
		if m.serves[p][c] && t >= m.live[p] {
			out = append(out, p)
		}
	}
	return out
}

// hash01 is a uniform draw fixed by its arguments: every policy meets the
// same customer, amount and luck (common random numbers).
func hash01(seed uint64, xs ...uint64) float64 {
	h := seed ^ 0x9e3779b97f4a7c15
	for _, x := range xs {
		h ^= x + 0x9e3779b97f4a7c15 + h<<6 + h>>2
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return float64(h>>11) / (1 << 53)
}

// marketPayment is one customer's first attempt.
type marketPayment struct {
	at     time.Duration
	ctx    int
	amount int64
}

func (m *market) payments() []marketPayment {
	rng := rand.New(rand.NewPCG(m.cfg.Seed, 77))
	out := make([]marketPayment, 0, m.cfg.Payments)
	for len(out) < m.cfg.Payments {
		t := time.Duration(rng.Float64() * float64(m.cfg.Span))
		// More payments by day than at night.
		if rng.Float64() > 0.5+0.5*math.Sin(2*math.Pi*(math.Mod(t.Hours(), 24)-8)/24) {
			continue
		}
		u := rng.Float64()
		c := sort.SearchFloat64s(m.weight, u)
		c = min(c, m.nC-1)
		amount := int64(marketCountries[m.country[c]].median * math.Exp(1.1*rng.NormFloat64()))
		out = append(out, marketPayment{at: t, ctx: c, amount: max(amount, 100)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// marketOutcome is what one attempt met, and when it is seen.
type marketOutcome struct {
	o       Outcome
	seenIn  time.Duration
	call    bool // the initiation's call answered
	ownFail bool // a failure of the provider's own (it sticks to this customer)
}

// outcome of customer x's attempt k through p at t.
func (m *market) outcome(x, k, p, c int, amount int64, t time.Duration, sticky bool) marketOutcome {
	seed := m.cfg.Seed
	approve := time.Duration(20+70*hash01(seed, uint64(x), uint64(k), 5)) * time.Second
	switch {
	case m.apiOut[p].at(t):
		return marketOutcome{o: Technical}
	case m.ceiling[p][m.country[c]] > 0 && amount >= m.ceiling[p][m.country[c]]:
		return marketOutcome{o: OverLimit, call: true, ownFail: true}
	case m.opOut[c].at(t):
		if m.fiveXX[p] {
			return marketOutcome{o: Technical}
		}
		return marketOutcome{o: Declined, seenIn: pushExpiry, call: true}
	case m.linkOut[p][c].at(t):
		if m.linkTech[p][c] {
			return marketOutcome{o: Technical, ownFail: true}
		}
		return marketOutcome{o: Declined, seenIn: pushExpiry, call: true, ownFail: true}
	}
	// The customer's wallet: larger amounts fail more often (funds, limits).
	able := ableShare - 0.03*math.Log10(float64(amount)/marketCountries[m.country[c]].median)
	if hash01(seed, uint64(x), 1) >= able && (k == 0 || hash01(seed, uint64(x), uint64(k), 2) >= topUp) {
		seen := pushExpiry
		if hash01(seed, uint64(x), uint64(k), 3) < 0.5 {
			seen = 5 * time.Second // refused at once for the funds
		}
		return marketOutcome{o: Declined, seenIn: seen, call: true}
	}
	s := m.rate(p, c, t) / ableShare
	if sticky {
		s *= stickyKeep
	}
	if hash01(seed, uint64(x), uint64(k), uint64(p), 4) < s {
		return marketOutcome{o: Success, seenIn: approve, call: true}
	}
	return marketOutcome{o: Declined, seenIn: pushExpiry, call: true, ownFail: true}
}

// oracleChoice knows the world: the rates, outages, ceilings and whom each
// provider failed for a reason of its own.
func (m *market) oracleChoice(c int, amount int64, t time.Duration, cands []int, sticky uint16) int {
	best, bp := -1.0, cands[0]
	for _, p := range cands {
		v := m.rate(p, c, t)
		if sticky&(1<<p) != 0 {
			v *= stickyKeep
		}
		if m.apiOut[p].at(t) || m.linkOut[p][c].at(t) || m.ceiling[p][m.country[c]] > 0 && amount >= m.ceiling[p][m.country[c]] {
			v = -1 + v
		}
		if v > best {
			best, bp = v, p
		}
	}
	return bp
}

// meanRate is p's mean true rate in c over the span (for the best fixed
// provider in hindsight).
func (m *market) meanRate(p, c int) float64 {
	var s float64
	for i := range 200 {
		t := time.Duration(float64(m.cfg.Span) * (float64(i) + 0.5) / 200)
		if !m.apiOut[p].at(t) && !m.linkOut[p][c].at(t) {
			s += m.rate(p, c, t)
		}
	}
	return s / 200
}

// A marketPolicy chooses a provider and learns from what it sees.
type marketPolicy interface {
	choose(c int, amount int64, t time.Duration, cands []int, failed []int, sticky uint16) int
	observe(p, c int, amount int64, o Outcome, t time.Duration, retry bool)
	call(p int, answered bool, t time.Duration)
	probe(t time.Duration, api func(p int) bool)
}

// Scenarios of the market, each a situation an attempt may be in.
var MarketScenarios = []string{"calm", "operator outage", "integration outage", "API outage", "above a ceiling", "retry", "newcomer", "degrading leader", "sparse context"}

// MarketResult is one policy's figures in the market: attempts and
// successes in total and per scenario.
type MarketResult struct {
	Policy               string
	Attempts, Successes  int
	Customers, Paid      int
	ScenarioN, ScenarioS map[string]int
	// The newcomer's contexts' attempts in its first hour live, in its
	// second hour (has it won them within an hour?) and in its first 6
	// hours, and those it carried: all of them (Newcomer), and those for
	// which it was the best choice, as the oracle knows (NewcomerBest).
	Newcomer, NewcomerBest Share
}

// Share is the attempts of a set in the newcomer's first hour live, its
// second hour and its first 6 hours (N), and those it carried (To).
type Share struct{ N, To [3]int }

func (s Share) add(o Share) Share {
	for i := range s.N {
		s.N[i], s.To[i] = s.N[i]+o.N[i], s.To[i]+o.To[i]
	}
	return s
}

func (s *Share) count(since time.Duration, carried bool) {
	for i, in := range []bool{since < time.Hour, since >= time.Hour && since < 2*time.Hour, true} {
		if in {
			s.N[i]++
			if carried {
				s.To[i]++
			}
		}
	}
}

func (s Share) String() string {
	pct := func(i int) float64 { return 100 * float64(s.To[i]) / float64(max(s.N[i], 1)) }
	return fmt.Sprintf("%.0f%%, %.0f%% and %.0f%%", pct(0), pct(1), pct(2))
}

// Rate is the share of attempts that succeeded.
func (r MarketResult) Rate() float64 { return float64(r.Successes) / float64(max(r.Attempts, 1)) }

// ScenarioRate is the share of a scenario's attempts that succeeded.
func (r MarketResult) ScenarioRate(s string) float64 {
	return float64(r.ScenarioS[s]) / float64(max(r.ScenarioN[s], 1))
}

// tags: the scenarios an attempt at t in c is in.
func (m *market) tags(c int, amount int64, t time.Duration, k int, dst []string) []string {
	dst = dst[:0]
	if m.opOut[c].after(t, 2*time.Hour) {
		dst = append(dst, "operator outage")
	}
	link, api, ceil, newc, deg := false, false, false, false, false
	for p := range marketProviders {
		if !m.serves[p][c] || t < m.live[p] {
			continue
		}
		link = link || m.linkOut[p][c].after(t, 30*time.Minute)
		api = api || m.apiOut[p].after(t, 30*time.Minute)
		ceil = ceil || m.ceiling[p][m.country[c]] > 0 && amount >= m.ceiling[p][m.country[c]]
		newc = newc || m.live[p] > 0 && t < m.live[p]+6*time.Hour
		d := m.degrade[p][c]
		deg = deg || d.to > 0 && t >= d.from && t < d.to+6*time.Hour
	}
	for i, on := range []bool{link, api, ceil, k > 0, newc, deg, m.sparse[c]} {
		if on {
			dst = append(dst, MarketScenarios[2+i])
		}
	}
	if len(dst) == 0 || len(dst) == 1 && dst[0] == "sparse context" {
		dst = append(dst, "calm")
	}
	return dst
}

type marketEvent struct {
	at       time.Duration
	retry    bool
	x, k     int // customer, attempt
	p, c     int
	amount   int64
	o        Outcome
	failedBy int // retry: the provider that failed them (observed)
}

type eventHeap []marketEvent

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(marketEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type customer struct {
	failed []int
	sticky uint16
}

// run replays the market's payments through one policy; oracle: the
// policy is the oracle (it reads the world).
func (m *market) run(name string, pol marketPolicy, pays []marketPayment, oracle bool) MarketResult {
	res := MarketResult{Policy: name, ScenarioN: map[string]int{}, ScenarioS: map[string]int{}, Customers: len(pays)}
	var h eventHeap
	custs := make([]customer, len(pays))
	var tags []string
	nextProbe := 30 * time.Second
	deliver := func(until time.Duration) {
		for h.Len() > 0 && h[0].at <= until {
			e := heap.Pop(&h).(marketEvent)
			if e.retry {
				m.attempt(&res, pol, &h, custs, pays, e.x, e.k, e.at, oracle, &tags)
				continue
			}
			pol.observe(e.p, e.c, e.amount, e.o, e.at, e.k > 0)
			if e.o == Success {
				continue
			}
			// The customer sees the failure, and may try again.
			custs[e.x].failed = append(custs[e.x].failed, e.p)
			chance := retryFirst
			if e.k > 0 {
				chance = retrySecond
			}
			if m.cfg.Calm || e.k >= 2 || hash01(m.cfg.Seed, uint64(e.x), uint64(e.k), 6) >= chance {
				continue
			}
			wait := time.Duration(30+150*hash01(m.cfg.Seed, uint64(e.x), uint64(e.k), 7)) * time.Second
			heap.Push(&h, marketEvent{at: e.at + wait, retry: true, x: e.x, k: e.k + 1})
		}
	}
	for x, py := range pays {
		for nextProbe <= py.at {
			deliver(nextProbe)
			t := nextProbe
			pol.probe(t, func(p int) bool { return !m.apiOut[p].at(t) })
			nextProbe += 30 * time.Second
		}
		deliver(py.at)
		m.attempt(&res, pol, &h, custs, pays, x, 0, py.at, oracle, &tags)
	}
	deliver(m.cfg.Span + 24*time.Hour)
	return res
}

func (m *market) attempt(res *MarketResult, pol marketPolicy, h *eventHeap, custs []customer, pays []marketPayment, x, k int, t time.Duration, oracle bool, tags *[]string) {
	py := pays[x]
	cands := m.serving(py.ctx, t)
	cu := &custs[x]
	var p int
	if oracle {
		p = m.oracleChoice(py.ctx, py.amount, t, cands, cu.sticky)
	} else {
		p = pol.choose(py.ctx, py.amount, t, cands, cu.failed, cu.sticky)
	}
	out := m.outcome(x, k, p, py.ctx, py.amount, t, cu.sticky&(1<<p) != 0)
	pol.call(p, out.call, t)
	if out.ownFail {
		cu.sticky |= 1 << p
	}
	res.Attempts++
	if newP := marketProviders - 1; m.live[newP] > 0 && m.serves[newP][py.ctx] && t >= m.live[newP] && t < m.live[newP]+6*time.Hour {
		res.Newcomer.count(t-m.live[newP], p == newP)
		if m.oracleChoice(py.ctx, py.amount, t, cands, cu.sticky) == newP {
			res.NewcomerBest.count(t-m.live[newP], p == newP)
		}
	}
	*tags = m.tags(py.ctx, py.amount, t, k, *tags)
	for _, s := range *tags {
		res.ScenarioN[s]++
	}
	if out.o == Success {
		res.Successes++
		res.Paid++
		for _, s := range *tags {
			res.ScenarioS[s]++
		}
	}
	heap.Push(h, marketEvent{at: t + out.seenIn, x: x, k: k, p: p, c: py.ctx, amount: py.amount, o: out.o})
}

// enginePolicy is the engine, told who failed the customer.
type enginePolicy struct {
	eng   *Engine
	clock *time.Duration
	names []string
	ctxs  []Context
}

func (e *enginePolicy) choose(c int, amount int64, t time.Duration, cands []int, failed []int, _ uint16) int {
	*e.clock = t
	ctx := e.ctxs[c]
	ctx.Amount, ctx.Providers, ctx.Avoid = amount, ctx.Providers[:0], nil
	for _, p := range cands {
		ctx.Providers = append(ctx.Providers, e.names[p])
	}
	for _, p := range failed {
		ctx.Avoid = append(ctx.Avoid, e.names[p])
	}
	d := e.eng.Choose(ctx)
	return slices.Index(e.names, d.Provider)
}

func (e *enginePolicy) observe(p, c int, amount int64, o Outcome, t time.Duration, retry bool) {
	*e.clock = t
	e.eng.Observe(Key{Provider: e.names[p], Country: e.ctxs[c].Country, Operator: e.ctxs[c].Operator, Kind: Collect, Amount: amount, Retry: retry}, o, 0)
}

func (e *enginePolicy) call(p int, answered bool, t time.Duration) {
	*e.clock = t
	e.eng.Call(e.names[p], answered)
}

func (e *enginePolicy) probe(t time.Duration, api func(p int) bool) {
	*e.clock = t
	for p, name := range e.names {
		if e.eng.Suspect(name) {
			e.eng.Call(name, api(p))
		}
	}
}

// banditPolicy is a peer baseline over decayed counts per provider and
// context: discounted Thompson sampling (thompson) or epsilon-greedy.
type banditPolicy struct {
	thompson bool
	epsilon  float64
	halfLife time.Duration
	ok, ko   [][]float64 // provider, context
	at       [][]time.Duration
	rng      *rand.Rand
}

func newBandit(nC int, seed uint64, thompson bool) *banditPolicy {
	b := &banditPolicy{thompson: thompson, epsilon: 0.05, halfLife: 3 * time.Hour, rng: rand.New(rand.NewPCG(seed, 99))}
	for range marketProviders {
		b.ok, b.ko, b.at = append(b.ok, make([]float64, nC)), append(b.ko, make([]float64, nC)), append(b.at, make([]time.Duration, nC))
	}
	return b
}

func (b *banditPolicy) decay(p, c int, t time.Duration) {
	f := math.Exp2(-float64(t-b.at[p][c]) / float64(b.halfLife))
	b.ok[p][c], b.ko[p][c], b.at[p][c] = b.ok[p][c]*f, b.ko[p][c]*f, t
}

func (b *banditPolicy) choose(c int, _ int64, t time.Duration, cands []int, _ []int, _ uint16) int {
	if !b.thompson && b.rng.Float64() < b.epsilon {
		return cands[b.rng.IntN(len(cands))]
	}
	best, bp := -1.0, cands[0]
	for _, p := range cands {
		b.decay(p, c, t)
		var v float64
		if b.thompson {
			v = betaSample(b.rng, b.ok[p][c]+1, b.ko[p][c]+1)
		} else {
			v = (b.ok[p][c] + 0.85) / (b.ok[p][c] + b.ko[p][c] + 1)
		}
		if v > best {
			best, bp = v, p
		}
	}
	return bp
}

func (b *banditPolicy) observe(p, c int, _ int64, o Outcome, t time.Duration, _ bool) {
	b.decay(p, c, t)
	if o == Success {
		b.ok[p][c]++
	} else {
		b.ko[p][c]++
	}
}

func (b *banditPolicy) call(int, bool, time.Duration)         {}
func (b *banditPolicy) probe(time.Duration, func(p int) bool) {}

// betaSample draws from Beta(a, b) through two gamma draws.
func betaSample(rng *rand.Rand, a, b float64) float64 {
	x, y := gammaSample(rng, a), gammaSample(rng, b)
	return x / (x + y)
}

// gammaSample draws from Gamma(a, 1) (Marsaglia and Tsang; a < 1 boosted).
func gammaSample(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaSample(rng, a+1) * math.Pow(rng.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// fixedPolicy sends each context to one provider, the best on average
// over the span (known in hindsight), or the first that serves it.
type fixedPolicy struct{ best []int }

func (f *fixedPolicy) choose(c int, _ int64, _ time.Duration, cands []int, _ []int, _ uint16) int {
	if slices.Contains(cands, f.best[c]) {
		return f.best[c]
	}
	return cands[0]
}
func (f *fixedPolicy) observe(int, int, int64, Outcome, time.Duration, bool) {}
func (f *fixedPolicy) call(int, bool, time.Duration)                         {}
func (f *fixedPolicy) probe(time.Duration, func(p int) bool)                 {}

// SimulateMarket replays the market through the engine, three peer
// baselines on the same customers and luck (discounted Thompson sampling,
// epsilon-greedy, the best fixed provider per context in hindsight) and an
// oracle. The oracle is last.
func SimulateMarket(cfg MarketConfig) []MarketResult {
	m := newMarket(cfg)
	pays := m.payments()
	fixed := &fixedPolicy{}
	for c := range m.nC {
		best, bp := -1.0, 0
		for p := range marketProviders {
			if m.serves[p][c] && m.live[p] == 0 {
				if r := m.meanRate(p, c); r > best {
					best, bp = r, p
				}
			}
		}
		fixed.best = append(fixed.best, bp)
	}
	return []MarketResult{
		m.runEngine(cfg, pays),
		m.run("discounted Thompson sampling", newBandit(m.nC, cfg.Seed, true), pays, false),
		m.run("epsilon-greedy (5 %)", newBandit(m.nC, cfg.Seed, false), pays, false),
		m.run("best fixed provider in hindsight", fixed, pays, false),
		m.run("oracle", &fixedPolicy{}, pays, true),
	}
}

// SimulateMarketEngine replays the market through the engine alone: its
// figures with another EngineSeed, next to SimulateMarket's baselines and
// oracle on the same world.
func SimulateMarketEngine(cfg MarketConfig) MarketResult {
	m := newMarket(cfg)
	return m.runEngine(cfg, m.payments())
}

func (m *market) runEngine(cfg MarketConfig, pays []marketPayment) MarketResult {
	names := make([]string, marketProviders)
	for p := range names {
		names[p] = fmt.Sprintf("agg%d", p)
	}
	var ctxs []Context
	for c := range m.nC {
		ctxs = append(ctxs, Context{Country: fmt.Sprint("C", m.country[c]), Operator: fmt.Sprint("op", c), Kind: Collect,
			Providers: make([]string, 0, marketProviders)})
	}
	var clock time.Duration
	eng := simEngine(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), &clock, cfg.Seed, cfg.EngineSeed, cfg.Knobs)
	return m.run("engine", &enginePolicy{eng: eng, clock: &clock, names: names, ctxs: ctxs}, pays, false)
}

// MarketTable writes the market's results as Markdown: each policy's
// success rate and gap to the oracle, overall and per scenario.
func MarketTable(cfg MarketConfig, results []MarketResult) string {
	var b strings.Builder
	oracle := results[len(results)-1]
	fmt.Fprintf(&b, "Seed %d: %d customers over %s (%d attempts with the engine).\n\n", cfg.Seed, cfg.Payments, cfg.Span, results[0].Attempts)
	b.WriteString("| scenario | attempts (oracle) | oracle |")
	for _, r := range results[:len(results)-1] {
		fmt.Fprintf(&b, " %s |", r.Policy)
	}
	b.WriteString("\n|---|---:|---:|" + strings.Repeat("---:|", len(results)-1) + "\n")
	row := func(name string, n int, rate func(MarketResult) float64) {
		fmt.Fprintf(&b, "| %s | %d | %.2f%% |", name, n, 100*rate(oracle))
		for _, r := range results[:len(results)-1] {
			fmt.Fprintf(&b, " %.2f%% (%+.2f) |", 100*rate(r), 100*(rate(r)-rate(oracle)))
		}
		b.WriteString("\n")
	}
	row("overall", oracle.Attempts, MarketResult.Rate)
	for _, s := range MarketScenarios {
		row(s, oracle.ScenarioN[s], func(r MarketResult) float64 { return r.ScenarioRate(s) })
	}
	b.WriteString("\nThe newcomer's share of its contexts' attempts in its first hour live, its second hour, and its first 6 hours:")
	for _, r := range results {
		fmt.Fprintf(&b, " %s %s;", r.Policy, r.Newcomer)
	}
	b.WriteString("\n\nIts share of those for which it was the best choice (the oracle's):")
	for _, r := range results[:len(results)-1] {
		fmt.Fprintf(&b, " %s %s;", r.Policy, r.NewcomerBest)
	}
	b.WriteString("\n")
	return b.String()
}
