// Package routing ranks the aggregators (providers) that can carry a
// payment or a payout in a given context (country, operator, amount), from
// the outcomes observed across the service: a success rate with a Bayesian
// prior, time decay, a ceiling learned per provider and operator from the
// amounts it refused at once, fast demotion of a provider (or of one of its
// operator links) that stops working, blame put on an operator when every
// provider fails on it together, the providers that already failed this
// customer ranked last, latency as a tie-breaker and an exploration share
// that tries newcomers sooner. A decision is pure in-memory work over state
// that observations and the background refresh from the store keep current.
// docs/routing.md explains the model.
//
// The engine imports only the standard library; the Router that shares it
// between nodes imports the store.
package routing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// Key is one outcome's provider and context. Outcomes are counted by
// provider, country, operator and kind (a link); the amount is not counted
// by but teaches the link's ceiling (OverLimit) and clears it (a success
// above it).
type Key struct {
	Provider, Country, Operator string
	Kind                        Kind
	Amount                      int64 // minor units; 0 when unknown
	// Retry: the customer's attempt after one that failed them. Its
	// success or decline is left out of the rate: retries fail more
	// whoever carries them (the customer's own trouble often remains), and
	// they go to the providers that did not fail the customer, which would
	// then look worse than they are. Its technical failure or refusal for
	// the amount counts as any.
	Retry bool
}

// link is what outcomes are counted by: a provider's integration with one
// operator of one country, for one kind.
type link struct {
	provider, country, operator string
	kind                        Kind
}

func (k Key) link() link { return link{k.Provider, k.Country, k.Operator, k.Kind} }

// opKey is an operator's context, whatever the provider.
type opKey struct {
	country, operator string
	kind              Kind
}

// Outcome is how one payment or payout ended at its provider.
type Outcome int

const (
	Success   Outcome = iota // the money moved
	Declined                 // refused or failed at the customer's or operator's end
	Technical                // the provider did not answer, answered 5xx or could not start it
	OverLimit                // refused at once for its amount: above the provider's ceiling for the operator
)

// Knobs of the model (docs/routing.md).
type Knobs struct {
	HalfLife      time.Duration // an outcome weighs half as much after this long
	FastHalfLife  time.Duration // ... in the fast memory, which shows a change sooner
	PriorStrength float64       // how many payments the prior is worth
	DefaultPrior  float64       // the success rate assumed where nothing is known
	DownAfter     int           // technical failures in a row, with no answer since, that mark a provider (or one link) down
	Caution       float64       // standard deviations taken off a rate to rank it
	Explore       float64       // share of decisions that try a runner-up that could still be the best
	LatencyWeight float64       // score per millisecond of mean latency (a tie-breaker)

	// A newcomer is a provider first seen in the context less than
	// NewcomerAge ago with less than NewcomerEvidence outcomes: it is
	// tried in up to NewcomerExplore of the decisions (less as its
	// evidence grows), unless it is almost surely worse than the leader.
	NewcomerAge                       time.Duration
	NewcomerEvidence, NewcomerExplore float64
	// LinkDemoteP: a link whose failures in a row, with no success since,
	// were this unlikely at its own rate is demoted (ranked below the links
	// that work) and tried again after RetestAfter, doubling at each
	// failed try up to 32 times.
	LinkDemoteP float64
	RetestAfter time.Duration
	// IncidentFails: failures in a row on an operator, with no success on
	// it by any provider and none more than IncidentWindow after the one
	// before, of at least this many of two providers or more each, are the
	// operator's incident: they are not held against the providers, nor
	// are those seen until IncidentGrace after the operator's next success
	// (declines come when the push expires).
	IncidentFails  int
	IncidentWindow time.Duration
	IncidentGrace  time.Duration
	// CeilingMemory: how long a ceiling is believed after its latest
	// refusal; CeilingAfter: how many refusals for the amount (at or above
	// it, since it was last cleared) make it believed.
	CeilingMemory time.Duration
	CeilingAfter  int
	// ExploreMatch: a runner-up that may well be better is tried in this
	// share of the decisions times that probability (when more than
	// Explore): close rivals are compared often, where it costs little,
	// plainly worse ones seldom.
	ExploreMatch float64
	// NewcomerOptimism: next to an established leader, a newcomer that is
	// new to the service too (the provider's first outcome anywhere less
	// than NewcomerAge ago: a provider that goes live, not an old one first
	// tried in a quiet context) is sent real payments while this many
	// standard deviations above its estimate would put it ahead of the
	// leader (optimism in the face of uncertainty: a better newcomer keeps
	// the traffic while it proves itself, a worse one loses it as its
	// evidence grows). docs/routing.md, "Newcomers"; 0 turns it off.
	// NewcomerShare: the share of those payments it is sent, by a random
	// draw (the others are decided as if it were not optimistic): until
	// its first outcomes land (a decline when the push expires, minutes
	// later; other nodes see them at their refresh) a newcomer that does
	// not work would otherwise fail every payment of its contexts.
	NewcomerOptimism, NewcomerShare float64
	// NewcomerInFlight: a newcomer (new in the context) that has this many
	// payments from this node under way (chosen by Choose, no outcome seen
	// yet) is not explored, optimistically or not, until one of them ends:
	// a newcomer that does not work fails at most this many payments per
	// context and node before its first decline lands, however busy the
	// context, unless its prior alone ranks it first. PriorStrength's
	// worth: a guess is not trusted with more payments than the prior it
	// rests on, and outcomes landing a minute or two later still bring a
	// better newcomer hundreds an hour (docs/routing.md, "Newcomers"); 0
	// turns the bound off. NewcomerInFlightFor: a payment under way longer
	// than this (to the minute) is no longer counted: an outcome lost or a
	// node restarted keeps the newcomer out that long, not for ever. Well
	// past a push's expiry (minutes: 2 assumed in the market) and the 5
	// minutes an initiation may take (movement.InitiationDeadline), so
	// that an outcome landing as usual finds its payment still counted.
	NewcomerInFlight    int
	NewcomerInFlightFor time.Duration
}

// DefaultKnobs are the values the simulations were tuned with.
var DefaultKnobs = Knobs{
	HalfLife: 6 * time.Hour, FastHalfLife: 30 * time.Minute, PriorStrength: 10, DefaultPrior: 0.85, DownAfter: 3, Caution: 0, Explore: 0.01, LatencyWeight: 1e-6,
	NewcomerAge: 6 * time.Hour, NewcomerEvidence: 100, NewcomerExplore: 0.1, LinkDemoteP: 0.005, RetestAfter: time.Minute,
	IncidentFails: 2, IncidentWindow: 10 * time.Minute, IncidentGrace: 5 * time.Minute, CeilingMemory: 24 * time.Hour, CeilingAfter: 2, ExploreMatch: 0.1, NewcomerOptimism: 1, NewcomerShare: 0.5,
	NewcomerInFlight: 10, NewcomerInFlightFor: 10 * time.Minute,
}

// counts are a link's decayed outcome counts, as of at: a slow memory
// (HalfLife) for a steady provider, and a fast one (FastHalfLife) that
// shows a change sooner; and the link's health and ceiling.
type counts struct {
	ok, ko         float64 // successes, failures (declined or technical), slow memory
	fastOK, fastKO float64 // the same, fast memory
	latencyMS      float64 // exponentially weighted mean latency
	at             time.Time

	linkHealth
}

// linkHealth is what a node saw of one link lately: kept across refreshes.
type linkHealth struct {
	fails, techs int       // failures, technical ones, in a row (no success, no answer since)
	lastFail     time.Time // the latest failure
	retests      int       // failed tries since the link was demoted
	first        time.Time // the link's first outcome within Memory
	ceiling      int64     // the smallest amount refused at once; 0: none known
	ceilingAt    time.Time // its latest refusal
	refusals     int       // refusals for the amount since the ceiling was last cleared
	paidMax      int64     // the largest amount collected lately (CeilingMemory): no ceiling is at or below it
	paidAt       time.Time // its latest success
	gen          uint64    // the operator's failure streak the held failures belong to
	held         float64   // failures counted during that streak (forgiven if it is an incident)
	streakKO     float64   // failures counted since the link's last success (forgiven if it was an outage, now over)
	trying       time.Time // when a payment last tried the link while it was broken; zero once an outcome came
	// The minutes of the link's latest counted failures, oldest first:
	// what is forgiven is always the latest, and the shared counts take it
	// back in the minutes it was counted in (so they never go negative).
	counted []failedMinute
}

// failedMinute is the failures one node counted on a link in one minute.
type failedMinute struct {
	minute              int64 // Unix minutes
	declined, technical int64
}

// maxCounted bounds a link's log of counted failures (in minutes that
// saw one): a streak forgiven spans far fewer (a demoted link is tried
// again at most every 32 minutes; an incident declares within a few
// failures).
const maxCounted = 64

// count logs a failure counted at now.
func (h *linkHealth) count(now time.Time, technical bool) {
	m := now.Unix() / 60
	if n := len(h.counted); n == 0 || h.counted[n-1].minute != m {
		if n == maxCounted {
			h.counted = append(h.counted[:0], h.counted[1:]...)
		}
		h.counted = append(h.counted, failedMinute{minute: m})
	}
	if f := &h.counted[len(h.counted)-1]; technical {
		f.technical++
	} else {
		f.declined++
	}
}

// forgive takes the latest n counted failures back from c's counts (the
// technical ones first within a minute when technical) and returns where
// they were counted, for the shared counts. In this node's counts each
// weighs one until the next refresh, which reads them taken back where
// they were counted (taking them at their decayed weight here was
// measured: docs/routing.md). Failures older than the log (or than
// Memory, less an hour: their rows may be purged) are not taken back:
// they weigh next to nothing.
func (c *counts) forgive(n float64, technical bool, now time.Time) forgiven {
	var taken []failedMinute
	left := int64(math.Round(n))
	for i := len(c.counted) - 1; i >= 0 && left > 0; i-- {
		f := &c.counted[i]
		at := time.Unix(f.minute*60, 0)
		if now.Sub(at) > Memory-time.Hour {
			break
		}
		t := failedMinute{minute: f.minute}
		takeTech := func() { t.technical = min(left, f.technical); left -= t.technical }
		takeDecl := func() { t.declined = min(left, f.declined); left -= t.declined }
		if technical {
			takeTech()
			takeDecl()
		} else {
			takeDecl()
			takeTech()
		}
		f.declined, f.technical = f.declined-t.declined, f.technical-t.technical
		w := float64(t.declined + t.technical)
		c.ko, c.fastKO = math.Max(0, c.ko-w), math.Max(0, c.fastKO-w)
		taken = append(taken, t)
	}
	c.counted = slices.DeleteFunc(c.counted, func(f failedMinute) bool { return f.declined == 0 && f.technical == 0 })
	return forgiven{taken: taken}
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

// estimate is the observed rate and its evidence m: the slow memory's
// rate, moved towards the fast memory's by the weight w = d²/(d² + v) of
// their difference d beyond the fast memory's noise v (a drift the slow
// memory lags behind moves it in part, a change far beyond the noise makes
// the fast memory believed). A fast memory of fewer than PriorStrength
// outcomes is filled up to that many with the slow rate, and v is that
// read's variance: one or two outcomes in a quiet context move a steady
// provider by a few points at most (one decline of a 90 % provider is no
// news), and as the fast memory forgets its outcomes its weight fades to
// nothing, with no jump back to the slow memory. A fast memory that holds
// PriorStrength outcomes or more is read as it is: added on top of them,
// the slow rate slowed the following of a drop at moderate traffic (one
// payment every 2 minutes holds about 20, and it weighed a third of the
// read; review of issue 23, M1). The evidence is the mix's variance's, 1/((1-w)²/n + w²/fn), not the
// slow memory's outcomes: a rate that comes from a few recent outcomes is
// backed by those few, so the provider stays explored and its next
// outcomes correct it. The fast outcomes are among the slow memory's, not
// beside them: the mix is never backed by more than the slow memory's n.
func (c *counts) estimate(k Knobs) (rate, m float64) {
	n, fn := c.ok+c.ko, c.fastOK+c.fastKO
	if n == 0 {
		return 0, 0
	}
	slow := c.ok / n
	if fn == 0 {
		return slow, n
	}
	r := (c.ok + 1) / (n + 2) // never 0 or 1: a variance of 0 would make any difference decisive
	fill := max(k.PriorStrength-fn, 0)
	d := (c.fastOK+fill*slow)/(fn+fill) - slow
	v := r * (1 - r) / (fn + fill + 1)
	w := d * d / (d*d + v)
	m = min(1/((1-w)*(1-w)/n+w*w/fn), n)
	return slow + w*d, m
}

// broken: the link failed DownAfter times in a row technically, or its
// failures in a row were too unlikely at its own rate.
func (c *counts) broken(k Knobs) bool {
	if c.techs >= k.DownAfter {
		return true
	}
	if c.fails < 2 {
		return false
	}
	rate := (c.ok + k.PriorStrength*k.DefaultPrior) / (c.ok + c.ko + k.PriorStrength)
	return math.Pow(1-rate, float64(c.fails)) < k.LinkDemoteP
}

// outage: broken beyond doubt (DownAfter technical failures in a row, or
// failures in a row that its rate makes 50 times less likely than
// LinkDemoteP): when it works again, the streak's failures were an outage's.
func (c *counts) outage(k Knobs) bool {
	if c.techs >= k.DownAfter {
		return true
	}
	rate := (c.ok + k.PriorStrength*k.DefaultPrior) / (c.ok + c.ko + k.PriorStrength)
	return c.fails >= 2 && math.Pow(1-rate, float64(c.fails)) < k.LinkDemoteP/50
}

// demoted: broken, and not yet due for another try, or tried again and
// its outcome not yet seen (a decline comes when the push expires: one
// payment tries a broken link, not all those of the next minutes).
func (c *counts) demoted(k Knobs, now time.Time) bool {
	return c.broken(k) && (now.Sub(c.lastFail) < k.RetestAfter<<min(c.retests, 5) || now.Sub(c.trying) < 3*time.Minute)
}

// above: amount is at or above the link's ceiling, believed (CeilingAfter
// refusals: one customer's wallet limit, which reads the same, does not
// make a ceiling) and not forgotten.
func (c *counts) above(amount int64, now time.Time, k Knobs) bool {
	return amount > 0 && c.ceiling > 0 && amount >= c.ceiling && c.refusals >= k.CeilingAfter && now.Sub(c.ceilingAt) < k.CeilingMemory
}

// health is a provider's recent answering record, for fast demotion.
type health struct {
	first      time.Time // the provider's first outcome, in any context (within Memory)
	streak     int       // technical failures since the last answer
	lastFail   time.Time // the latest technical failure
	lastAnswer time.Time // the latest call the provider answered
	// The links the streak's payments failed on: when they were all on
	// one link, that link (its operator's trouble) explains the streak,
	// not the provider.
	link  link
	linkN int
	links int
}

// down: the provider failed DownAfter calls in a row and has answered none
// since, and not only for one operator. It stays down until it answers
// again (a call, or the prober's check of its API): no real payment is sent
// to find out.
func (h *health) down(k Knobs) bool {
	return h.streak >= k.DownAfter && !(h.links == 1 && h.linkN >= h.streak)
}

// suspect: down, or failing technically on one operator's link (its API
// may still answer: the prober tells).
func (h *health) suspect(k Knobs) bool {
	return h.down(k) || h.streak > 0 && h.linkN >= k.DownAfter
}

// opState is an operator's current failure streak, across providers.
type opState struct {
	gen        uint64         // the streak's number
	fails      map[string]int // failures per provider in the streak
	last       time.Time      // the streak's latest failure
	incident   bool           // declared: every provider fails on the operator
	since      time.Time      // when it was declared
	graceUntil time.Time      // failures seen before then are the incident's tail
}

// forgiven is failures taken back from a link's counts, with the minutes
// they were counted in (the Router takes them back from the shared counts
// there too).
type forgiven struct {
	link  link
	taken []failedMinute
}

// flight is the payments this node sent to a newcomer's link whose
// outcomes have not come yet, counted per minute sent, oldest first: at
// most NewcomerInFlightFor's minutes, however busy the link.
type flight []sentMinute

type sentMinute struct {
	minute int64 // Unix minutes
	n      int
}

// expire drops the payments sent more than d before now.
func (f flight) expire(now time.Time, d time.Duration) flight {
	i := 0
	for i < len(f) && now.Sub(time.Unix(f[i].minute*60, 0)) > d {
		i++
	}
	return f[i:]
}

func (f flight) n() (n int) {
	for _, m := range f {
		n += m.n
	}
	return n
}

// landed takes the oldest payment out: outcomes carry no payment's
// identity, and the oldest is the likeliest to have ended.
func (f flight) landed() flight {
	if len(f) == 0 {
		return f
	}
	if f[0].n--; f[0].n == 0 {
		return f[1:]
	}
	return f
}

// sent adds a payment sent at now.
func (f flight) sent(now time.Time) flight {
	m := now.Unix() / 60
	if n := len(f); n > 0 && f[n-1].minute >= m {
		f[n-1].n++
		return f
	}
	return append(f, sentMinute{minute: m, n: 1})
}

// Engine holds the observed state and decides. It is safe for concurrent use.
type Engine struct {
	Knobs Knobs
	Now   func() time.Time

	mu     sync.RWMutex
	stats  map[link]*counts
	health map[string]*health
	ops    map[opKey]*opState
	flying map[link]*flight // payments under way to newcomers (NewcomerInFlight)
	rng    *rand.Rand
}

// New returns an engine with the default knobs; seed fixes its exploration.
func New(now func() time.Time, seed uint64) *Engine {
	return &Engine{Knobs: DefaultKnobs, Now: now, stats: map[link]*counts{}, health: map[string]*health{}, ops: map[opKey]*opState{},
		flying: map[link]*flight{}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Observe counts one payment's or payout's outcome (live only; the caller
// filters).
func (e *Engine) Observe(k Key, o Outcome, latency time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observeLocked(k, o, latency, e.Now())
}

// observeLocked counts an outcome; it returns whether the failure was
// counted against the provider, and the failures an incident declared by
// it takes back.
func (e *Engine) observeLocked(k Key, o Outcome, latency time.Duration, now time.Time) (counted bool, back []forgiven) {
	lk := k.link()
	c := e.stats[lk]
	if c == nil {
		c = &counts{latencyMS: float64(latency.Milliseconds())}
		c.first = now
		e.stats[lk] = c
		if h := e.healthOf(k.Provider); h.first.IsZero() {
			h.first = now
		}
	}
	c.decay(now, e.Knobs)
	c.trying = time.Time{}
	e.landedLocked(lk)
	outage := c.outage(e.Knobs) // before an answer resets the technical streak
	if latency > 0 {
		c.latencyMS = 0.8*c.latencyMS + 0.2*float64(latency.Milliseconds())
	}
	if o != Technical {
		back = e.callLocked(k.Provider, true, now)
		c.techs = 0
	}
	switch o {
	case OverLimit:
		// Says nothing of smaller amounts: it teaches the ceiling only. Not
		// at or below an amount collected lately: that refusal was for a
		// payment too small (CinetPay's 641, pawaPay's AMOUNT_OUT_OF_BOUNDS
		// below its minimum) or the customer's own wallet limit.
		if k.Amount > 0 && (k.Amount > c.paidMax || now.Sub(c.paidAt) >= e.Knobs.CeilingMemory) {
			if c.ceiling == 0 || now.Sub(c.ceilingAt) >= e.Knobs.CeilingMemory {
				c.ceiling, c.refusals = k.Amount, 0
			}
			c.ceiling, c.ceilingAt, c.refusals = min(c.ceiling, k.Amount), now, c.refusals+1
		}
		return false, back
	case Success:
		if k.Amount > 0 {
			if now.Sub(c.paidAt) >= e.Knobs.CeilingMemory {
				c.paidMax = 0
			}
			c.paidMax, c.paidAt = max(c.paidMax, k.Amount), now
		}
		if c.ceiling > 0 && k.Amount >= c.ceiling {
			c.ceiling, c.refusals = 0, 0 // a larger amount went through: no ceiling there (or it rose)
		}
		if outage && c.streakKO > 0 {
			// The link was broken and works again: its failures since were
			// the outage's, which demotion dealt with, not its rate.
			f := c.forgive(c.streakKO, false, now)
			f.link = lk
			back = append(back, f)
		}
		c.fails, c.retests, c.streakKO = 0, 0, 0
		// Any success on the operator, a retry's too, shows it works: it
		// ends its incident and its failure streak.
		if op := e.ops[opKey{k.Country, k.Operator, k.Kind}]; op != nil && (op.incident || len(op.fails) > 0) {
			if op.incident {
				op.incident, op.graceUntil = false, now.Add(e.Knobs.IncidentGrace)
			}
			op.gen++
			clear(op.fails)
		}
		if k.Retry {
			return false, back
		}
		c.ok, c.fastOK = c.ok+1, c.fastOK+1
		return true, back
	}
	if k.Retry && o == Declined {
		return false, back
	}
	ok := opKey{k.Country, k.Operator, k.Kind}
	op := e.ops[ok]
	if op == nil {
		op = &opState{fails: map[string]int{}, gen: 1}
		e.ops[ok] = op
	}
	if o == Technical {
		e.attributeLocked(k.Provider, lk)
	}
	if op.incident || now.Before(op.graceUntil) {
		return false, back // the operator's outage, not the provider's
	}
	if len(op.fails) > 0 && now.Sub(op.last) > e.Knobs.IncidentWindow {
		// A failure long after the streak's latest: a quiet operator's
		// failures, not one outage's. A new streak.
		op.gen++
		clear(op.fails)
	}
	op.last = now
	if c.gen != op.gen {
		c.gen, c.held = op.gen, 0
	}
	if c.broken(e.Knobs) {
		c.retests++ // a demoted link tried again, and still failing
	}
	c.ko, c.fastKO, c.held, c.streakKO = c.ko+1, c.fastKO+1, c.held+1, c.streakKO+1
	c.count(now, o == Technical)
	c.fails++
	c.lastFail = now
	if o == Technical {
		c.techs++
	}
	op.fails[k.Provider]++
	failing := 0
	for _, n := range op.fails {
		if n >= e.Knobs.IncidentFails {
			failing++
		}
	}
	if failing < 2 || e.Knobs.IncidentFails <= 0 {
		return true, back
	}
	// Every provider tried on the operator failed, several times each,
	// with no success in between: the operator's incident. What the
	// streak counted against them is taken back.
	op.incident, op.since = true, now
	for p := range op.fails {
		l := link{p, k.Country, k.Operator, k.Kind}
		s := e.stats[l]
		if s == nil || s.gen != op.gen {
			continue
		}
		f := s.forgive(s.held, false, now)
		f.link = l
		back = append(back, f)
		s.streakKO = math.Max(0, s.streakKO-s.held)
		s.held, s.fails, s.techs, s.retests = 0, 0, 0, 0
	}
	return true, back
}

// attributeLocked notes that a technical failure of the provider's current
// streak was a payment's on l.
func (e *Engine) attributeLocked(provider string, l link) {
	if h := e.health[provider]; h != nil && h.streak > 0 {
		h.attribute(l, 1)
	}
}

// attribute notes n technical failures of the provider's streak on l.
func (h *health) attribute(l link, n int) {
	switch {
	case h.links == 0:
		h.link, h.linkN, h.links = l, n, 1
	case h.link == l:
		h.linkN += n
	default:
		h.links = 2
	}
}

// Call records whether a provider answered one call (any call: an
// initiation, a status read, a probe): technical failures in a row mark it
// down, unless its payments' failures were all on one operator; any answer
// brings it back.
func (e *Engine) Call(provider string, answered bool) {
	now := e.Now()
	e.mu.Lock()
	e.callLocked(provider, answered, now)
	e.mu.Unlock()
}

// callLocked records a call; when it brings a provider that was down
// back, it returns the failures its outage's streak took back.
func (e *Engine) callLocked(provider string, answered bool, now time.Time) (back []forgiven) {
	h := e.healthOf(provider)
	if answered {
		if h.down(e.Knobs) {
			// The whole API is back: its links' technical failures were
			// the outage's, which the demotion dealt with, not their rate.
			for l, c := range e.stats {
				if l.provider == provider && c.techs > 0 {
					n := math.Min(float64(c.techs), c.streakKO)
					f := c.forgive(n, true, now)
					f.link = l
					c.streakKO = c.streakKO - n
					c.techs, c.fails = 0, max(0, c.fails-int(n))
					back = append(back, f)
				}
			}
		}
		h.streak, h.lastAnswer, h.links, h.linkN = 0, now, 0, 0
		return back
	}
	h.streak++
	h.lastFail = now
	return nil
}

// healthOf is the provider's health, created if need be.
func (e *Engine) healthOf(provider string) *health {
	h := e.health[provider]
	if h == nil {
		h = &health{}
		e.health[provider] = h
	}
	return h
}

// Down reports whether the provider is marked down now.
func (e *Engine) Down(provider string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	h := e.health[provider]
	return h != nil && h.down(e.Knobs)
}

// Suspect reports whether the provider is down or failing technically in
// its current streak (even on one operator's link only): the prober checks
// its API, which tells a whole outage (the check fails too: down) from one
// operator's trouble (it answers).
func (e *Engine) Suspect(provider string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	h := e.health[provider]
	return h != nil && h.suspect(e.Knobs)
}

// Context is what a decision is about. Without an operator, a provider's
// outcomes over every operator of the country count.
type Context struct {
	Country, Operator string
	Kind              Kind
	Amount            int64 // minor units; 0 when unknown
	Providers         []string
	// Avoid is the providers that already failed this customer (this
	// session's earlier attempts): ranked after every other that works.
	Avoid []string
}

// Scored is one provider's standing in a decision.
type Scored struct {
	Provider  string
	Score     float64 // estimated success rate, adjusted for latency; -1 when down
	Rate      float64 // posterior mean success rate
	Evidence  float64 // decayed number of observed outcomes
	LatencyMS float64
	New       bool // a newcomer in the context
	fresh     bool // ... and new to the service (NewcomerOptimism)
	Down      bool // the provider is not answering
	Avoided   bool // it failed this customer already
	Demoted   bool // its link with the operator is failing
	OverLimit bool // the amount is above its ceiling for the operator
}

// tier: the ranking's first criterion, before the score.
func (s Scored) tier() int {
	switch {
	case s.Down:
		return 4
	case s.OverLimit:
		return 3
	case s.Demoted:
		return 2
	case s.Avoided:
		return 1
	}
	return 0
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
// runner-up that answers and could still be the best (a newcomer more
// often, or while it could be ahead: NewcomerOptimism), so that its
// estimate stays fresh; a provider that is down never is.
func (e *Engine) Choose(c Context) Decision { return e.decide(c, true) }

func (e *Engine) decide(c Context, explore bool) Decision {
	now := e.Now()
	e.mu.Lock() // decay and the random source mutate
	defer e.mu.Unlock()
	k := e.Knobs
	// The prior: the pooled rate of every provider in this context, or
	// the default where nothing is known.
	var stats [8]*counts
	stat := func(i int, p string) *counts {
		if i < len(stats) {
			return stats[i]
		}
		return e.stat(p, c, now)
	}
	var pooledOK, pooledN float64
	for i, p := range c.Providers {
		if i < len(stats) {
			stats[i] = e.stat(p, c, now)
		}
		if s := stat(i, p); s != nil {
			rate, m := s.estimate(k)
			pooledOK, pooledN = pooledOK+rate*m, pooledN+m
		}
	}
	prior := k.DefaultPrior
	if pooledN >= 1 {
		prior = (pooledOK + k.PriorStrength*k.DefaultPrior) / (pooledN + k.PriorStrength)
	}
	ranked := make([]Scored, 0, len(c.Providers))
	for i, p := range c.Providers {
		if slices.Contains(c.Providers[:i], p) {
			continue
		}
		sc := Scored{Provider: p, Rate: prior, Avoided: slices.Contains(c.Avoid, p), New: true}
		if s := stat(i, p); s != nil {
			sc.New = !s.first.IsZero() && now.Sub(s.first) < k.NewcomerAge
			rate, m := s.estimate(k)
			sc.Evidence, sc.LatencyMS = m, s.latencyMS
			// The context's prior weighs PriorStrength against the slow
			// memory's outcomes: against m, a drop (little evidence, since
			// it comes from a few recent outcomes) was drawn back towards
			// the context's rate a second time, after the fast memory's
			// read (review of issue 23, M1). m says how sure the rate is:
			// exploration, caution, confidence.
			n := s.ok + s.ko
			sc.Rate = (rate*n + k.PriorStrength*prior) / (n + k.PriorStrength)
			sc.Demoted = s.demoted(k, now)
			sc.OverLimit = s.above(c.Amount, now, k)
		}
		// Ranked by a cautious estimate (a lower confidence bound): a
		// provider seen a few times cannot jump ahead on luck alone.
		sc.Score = sc.Rate - k.Caution*sd(sc.Rate, sc.Evidence+k.PriorStrength) - k.LatencyWeight*sc.LatencyMS
		h := e.health[p]
		if h != nil && h.down(k) {
			sc.Down, sc.Score = true, -1
		}
		sc.fresh = sc.New && (h == nil || h.first.IsZero() || now.Sub(h.first) < k.NewcomerAge)
		ranked = append(ranked, sc)
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		if ti, tj := ranked[i].tier(), ranked[j].tier(); ti != tj {
			return ti < tj
		}
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
	op := e.ops[opKey{c.Country, c.Operator, c.Kind}]
	incident := c.Operator != "" && op != nil && op.incident
	switch {
	case explore && incident:
		// Every provider fails on the operator: spread the payments over
		// those that answer, so that the first to succeed again is found.
		n := 0
		for n < len(ranked) && ranked[n].tier() == ranked[0].tier() && ranked[n].tier() < 2 {
			n++
		}
		if n > 1 {
			i := e.rng.IntN(n)
			ranked[0], ranked[i] = ranked[i], ranked[0]
		}
	case explore && len(ranked) > 1 && ranked[0].tier() <= 1:
		d.Explored = e.exploreLocked(ranked, c, now)
	}
	d.Provider = ranked[0].Provider
	if explore && ranked[0].New && k.NewcomerInFlight > 0 {
		// Every payment sent to a newcomer is under way until an outcome
		// lands on its link, whatever chose it: outcomes do not say which
		// payment they end, and what the bound holds is the payments that
		// could still fail unseen.
		l := link{d.Provider, c.Country, c.Operator, c.Kind}
		f := e.flying[l]
		if f == nil {
			if e.flying == nil {
				e.flying = map[link]*flight{}
			}
			f = &flight{}
			e.flying[l] = f
		}
		*f = f.expire(now, k.NewcomerInFlightFor).sent(now)
	}
	if explore && c.Operator != "" {
		if s := e.stats[link{d.Provider, c.Country, c.Operator, c.Kind}]; s != nil && s.broken(k) {
			s.trying = now // a real payment tries the broken link: the next wait for its outcome
		}
	}
	for _, s := range ranked[1:] {
		d.Alternates = append(d.Alternates, s.Provider)
	}
	d.Confidence, d.Reason = e.explain(ranked, d.Explored)
	if incident {
		d.Confidence, d.Reason = 0, fmt.Sprintf("operator_incident: every provider tried has been failing on %s since %s; not held against them",
			c.Operator, op.since.UTC().Format(time.TimeOnly))
	}
	return d
}

// exploreLocked may swap a runner-up of the leader's tier into first place:
// the one most likely to be better than the leader, if that is at all
// likely, in Explore of the decisions, or more often while it is a
// newcomer (little evidence). So its estimate stays fresh, a better
// newcomer is found within tens of its payments, and no payment goes to a
// provider that is down, demoted or plainly worse, nor to a newcomer with
// NewcomerInFlight payments under way (full).
func (e *Engine) exploreLocked(ranked []Scored, c Context, now time.Time) bool {
	k := e.Knobs
	// Optimism: the newcomer whose estimate, this many standard deviations
	// up, is furthest ahead of an established leader, in NewcomerShare of
	// the decisions.
	if k.NewcomerOptimism > 0 && !ranked[0].New {
		opt, optScore := 0, ranked[0].Score
		for i, s := range ranked[1:] {
			if s.tier() != ranked[0].tier() {
				break
			}
			if u := s.Rate + k.NewcomerOptimism*sd(s.Rate, s.Evidence+k.PriorStrength); s.fresh && u > optScore && !e.fullLocked(c, s.Provider, now) {
				opt, optScore = i+1, u
			}
		}
		if opt > 0 && e.rng.Float64() < k.NewcomerShare {
			ranked[0], ranked[opt] = ranked[opt], ranked[0]
			return true
		}
	}
	best, bestP, share := 0, 0.05, 0.0
	for i, s := range ranked[1:] {
		if s.tier() != ranked[0].tier() {
			break
		}
		p := better(s, ranked[0], k)
		newcomer := s.New && s.Evidence < k.NewcomerEvidence
		if p <= 0.05 && !(newcomer && p > 0.001) || s.New && e.fullLocked(c, s.Provider, now) {
			continue
		}
		sh := math.Max(k.Explore, k.ExploreMatch*p)
		if newcomer {
			sh = math.Max(sh, k.NewcomerExplore*(1-s.Evidence/k.NewcomerEvidence))
		}
		if sh*p > share*bestP {
			best, bestP, share = i+1, p, sh
		}
	}
	if best == 0 || e.rng.Float64() >= share {
		return false
	}
	ranked[0], ranked[best] = ranked[best], ranked[0]
	return true
}

// fullLocked: newcomer p has NewcomerInFlight payments from this node
// under way in c (sent within NewcomerInFlightFor, no outcome seen).
func (e *Engine) fullLocked(c Context, p string, now time.Time) bool {
	k := e.Knobs
	if k.NewcomerInFlight <= 0 || len(e.flying) == 0 {
		return false
	}
	f := e.flying[link{p, c.Country, c.Operator, c.Kind}]
	if f == nil {
		return false
	}
	*f = f.expire(now, k.NewcomerInFlightFor)
	return f.n() >= k.NewcomerInFlight
}

// landedLocked: a payment on l ended, so the oldest of those under way
// there is no longer (or of those decided without the operator, in its
// country).
func (e *Engine) landedLocked(l link) {
	if len(e.flying) == 0 {
		return
	}
	f := e.flying[l]
	if f == nil {
		l.operator = ""
		if f = e.flying[l]; f == nil {
			return
		}
	}
	if *f = f.landed(); len(*f) == 0 {
		delete(e.flying, l)
	}
}

// stat is a provider's decayed counts in a context; with no operator, the
// sum over every operator of the country.
func (e *Engine) stat(p string, c Context, now time.Time) *counts {
	if c.Operator != "" {
		s := e.stats[link{p, c.Country, c.Operator, c.Kind}]
		if s != nil {
			s.decay(now, e.Knobs)
		}
		return s
	}
	var sum *counts
	for key, s := range e.stats {
		if key.provider != p || key.country != c.Country || key.kind != c.Kind {
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
	switch {
	case second.Down && first.tier() == 0:
		return round(evidence), fmt.Sprintf("provider_down: %s is not answering; %s at %s", second.Provider, first.Provider, pct(first.Rate))
	case first.tier() == 0 && second.tier() > 0 && second.Rate > first.Rate: // the tier, not the rate, put it second
		why := map[int]string{1: "already failed this customer", 2: "is failing on this operator", 3: "refused amounts this large"}[second.tier()]
		return round(evidence), fmt.Sprintf("ranked_after: %s %s; %s at %s", second.Provider, why, first.Provider, pct(first.Rate))
	case first.tier() == 3:
		return 0, fmt.Sprintf("over_limit: every provider refused amounts this large; %s at %s", first.Provider, pct(first.Rate))
	case first.tier() == 2:
		return 0, fmt.Sprintf("link_demoted: every provider is failing on this operator; %s is tried again first", first.Provider)
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
