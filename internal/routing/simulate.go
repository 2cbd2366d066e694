package routing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// SimConfig describes a reproducible routing simulation: providers whose
// true success rates differ by context, drift over time and suffer outages.
type SimConfig struct {
	Seed          uint64
	Payments      int
	Span          time.Duration // simulated time the payments spread over
	Providers     int
	Contexts      int
	Drift         float64 // how far true rates drift from their base, up or down
	OutagesPerDay float64 // outages per provider per day
	Knobs         Knobs
	EngineSeed    uint64 // seeds the engine's own random choices; 0: Seed
}

// DefaultSim is the simulation docs/benchmarks.md reports.
var DefaultSim = SimConfig{Seed: 42, Payments: 100_000, Span: 7 * 24 * time.Hour, Providers: 4, Contexts: 6, Drift: 0.06, OutagesPerDay: 1,
	Knobs: DefaultKnobs}

// SimResult is one policy's figures.
type SimResult struct {
	Policy    string
	Succeeded int
	Lost      int // payments sent to a provider in an outage
}

// Rate is the share of payments that succeeded.
func (r SimResult) Rate(payments int) float64 { return float64(r.Succeeded) / float64(payments) }

type simWorld struct {
	base    [][]float64 // provider x context: the true rate at time 0
	phase   [][]float64
	drift   float64
	outages [][][2]time.Duration // provider: [start, end) intervals
	span    time.Duration
}

// trueRate is provider p's success rate in context c at t: a base that
// drifts by up to ±6 points over a period of about two days.
func (w *simWorld) trueRate(p, c int, t time.Duration) float64 {
	drift := w.drift * math.Sin(2*math.Pi*t.Hours()/50+w.phase[p][c])
	return math.Max(0.05, math.Min(0.99, w.base[p][c]+drift))
}

func (w *simWorld) down(p int, t time.Duration) bool {
	for _, o := range w.outages[p] {
		if t >= o[0] && t < o[1] {
			return true
		}
	}
	return false
}

func newWorld(cfg SimConfig, rng *rand.Rand) *simWorld {
	w := &simWorld{span: cfg.Span, drift: cfg.Drift}
	for range cfg.Providers {
		var base, phase []float64
		for range cfg.Contexts {
			base = append(base, 0.70+0.27*rng.Float64())
			phase = append(phase, 2*math.Pi*rng.Float64())
		}
		w.base, w.phase = append(w.base, base), append(w.phase, phase)
		// About one outage a day, from 3 minutes to an hour.
		var outs [][2]time.Duration
		for t := time.Duration(0); t < cfg.Span && cfg.OutagesPerDay > 0; {
			t += time.Duration(rng.ExpFloat64() * float64(24*time.Hour) / cfg.OutagesPerDay)
			d := 3*time.Minute + time.Duration(rng.Float64()*float64(57*time.Minute))
			outs = append(outs, [2]time.Duration{t, t + d})
			t += d
		}
		w.outages = append(w.outages, outs)
	}
	return w
}

// simEngine is a simulation's engine, its clock start plus *clock, its
// random choices seeded by engineSeed (0: the world's seed).
func simEngine(start time.Time, clock *time.Duration, seed, engineSeed uint64, k Knobs) *Engine {
	if engineSeed != 0 {
		seed = engineSeed
	}
	eng := New(func() time.Time { return start.Add(*clock) }, seed)
	eng.Knobs = k
	return eng
}

// Simulate replays cfg.Payments payments through the engine and through
// three baselines: the provider with the best mean rate, always; round
// robin; and an oracle that knows the true rates and the outages.
func Simulate(cfg SimConfig) []SimResult {
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	w := newWorld(cfg, rng)
	names := make([]string, cfg.Providers)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	var clock time.Duration
	eng := simEngine(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), &clock, cfg.Seed, cfg.EngineSeed, cfg.Knobs)
	fixed, best := 0, -1.0
	for p := range cfg.Providers {
		var sum float64
		for c := range cfg.Contexts {
			sum += w.base[p][c]
		}
		if sum > best {
			fixed, best = p, sum
		}
	}
	results := []SimResult{{Policy: "engine"}, {Policy: "fixed best provider"}, {Policy: "round robin"}, {Policy: "oracle"}}
	outcome := func(p, c int) Outcome {
		switch {
		case w.down(p, clock):
			return Technical
		case rng.Float64() < w.trueRate(p, c, clock):
			return Success
		}
		return Declined
	}
	tally := func(r *SimResult, o Outcome) {
		switch o {
		case Success:
			r.Succeeded++
		case Technical:
			r.Lost++
		}
	}
	step := cfg.Span / time.Duration(cfg.Payments)
	for i := range cfg.Payments {
		clock = time.Duration(i) * step
		// The prober: every 30 s, each provider the engine holds down (or suspect) is
		// checked (an API call that moves no money).
		if i > 0 && clock/(30*time.Second) != (clock-step)/(30*time.Second) {
			for q, name := range names {
				if eng.Suspect(name) {
					eng.Call(name, !w.down(q, clock))
				}
			}
		}
		c := rng.IntN(cfg.Contexts)
		ctx := Context{Country: "C", Operator: fmt.Sprint("op", c), Kind: Collect, Providers: names}
		// The engine.
		d := eng.Choose(ctx)
		var p int
		fmt.Sscanf(d.Provider, "p%d", &p)
		o := outcome(p, c)
		if o == Technical {
			eng.Call(d.Provider, false) // the connector's observer saw the call fail
		}
		eng.Observe(Key{Provider: d.Provider, Country: ctx.Country, Operator: ctx.Operator, Kind: Collect}, o, 0)
		tally(&results[0], o)
		// The baselines.
		tally(&results[1], outcome(fixed, c))
		tally(&results[2], outcome(i%cfg.Providers, c))
		oracle, bestRate := 0, -1.0
		for q := range cfg.Providers {
			if r := w.trueRate(q, c, clock); !w.down(q, clock) && r > bestRate {
				oracle, bestRate = q, r
			}
		}
		tally(&results[3], outcome(oracle, c))
	}
	return results
}

// SimTable writes the simulation's results as a Markdown table.
func SimTable(cfg SimConfig, results []SimResult) string {
	var b strings.Builder
	oracle := results[len(results)-1].Rate(cfg.Payments)
	fmt.Fprintf(&b, "Seed %d: %d payments over %s, %d providers, %d contexts (true rates 70-97%%, drifting ±6 points, about one outage a day per provider, 3 to 60 minutes).\n\n",
		cfg.Seed, cfg.Payments, cfg.Span, cfg.Providers, cfg.Contexts)
	b.WriteString("| policy | success rate | share of the oracle's | payments lost in outages |\n|---|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %.2f%% | %.1f%% | %d |\n", r.Policy, 100*r.Rate(cfg.Payments), 100*r.Rate(cfg.Payments)/oracle, r.Lost)
	}
	return b.String()
}
