package routing

import (
	"fmt"
	"sync"
	"testing"
)

// marketSeeds are the market's seeds the test holds the engine to, chosen
// before any was run (the knobs were tried on seeds 101 to 106).
var marketSeeds = []uint64{11, 22, 33, 44, 55}

// TestSimulateMarket holds the engine to issue 23's bar in the second
// world: within 1 point of the oracle overall (over the five seeds), ahead
// of every baseline on each seed, ahead of both bandit baselines in every
// scenario over the five seeds, and a better newcomer carrying most of the
// attempts it is the best choice for from its second hour live (point 5).
// The whole market even under -short: about 2.5 s a seed, the seeds in
// parallel. One draw of the engine's own randomness per seed: over several
// the mean is at the bar, not under it (docs/routing.md, "Newcomers").
func TestSimulateMarket(t *testing.T) {
	results := make([][]MarketResult, len(marketSeeds))
	var wg sync.WaitGroup
	for i, seed := range marketSeeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := MarketSim
			cfg.Seed = seed
			results[i] = SimulateMarket(cfg)
		}()
	}
	wg.Wait()
	var gaps []string
	var sum float64
	total := make([]MarketResult, len(results[0]))
	for i, res := range results {
		cfg := MarketSim
		cfg.Seed = marketSeeds[i]
		t.Log("\n" + MarketTable(cfg, res))
		oracle, engine := res[len(res)-1], res[0]
		gap := 100 * (oracle.Rate() - engine.Rate())
		sum += gap
		gaps = append(gaps, fmt.Sprintf("%.2f", gap))
		for _, b := range res[1 : len(res)-1] {
			if b.Rate() >= engine.Rate() {
				t.Errorf("seed %d: %s %.2f%%, the engine %.2f%%; want the engine ahead", marketSeeds[i], b.Policy, 100*b.Rate(), 100*engine.Rate())
			}
		}
		for j, r := range res {
			total[j] = addMarket(total[j], r)
		}
	}
	mean := sum / float64(len(results))
	t.Logf("gap to the oracle per seed %v, mean %.2f points", gaps, mean)
	if mean > 1.0 {
		t.Errorf("the engine is %.2f points behind the oracle over seeds %v; want at most 1", mean, marketSeeds)
	}
	engine := total[0]
	best := engine.NewcomerBest
	t.Logf("the newcomer's share of the attempts it is best for, first hour, second hour, first 6 hours: %s", best)
	if to, n := best.To[1], best.N[1]; n == 0 || 2*to <= n {
		t.Errorf("in its second hour live the newcomer carried %d of the %d attempts it was the best choice for; want most of them", to, n)
	}
	for _, b := range total[1:3] { // the bandits
		for _, s := range MarketScenarios {
			if b.ScenarioRate(s) > engine.ScenarioRate(s) {
				t.Errorf("%s: %s %.2f%%, the engine %.2f%% over the seeds; want the engine ahead", s, b.Policy, 100*b.ScenarioRate(s), 100*engine.ScenarioRate(s))
			}
		}
	}
}

func addMarket(a, b MarketResult) MarketResult {
	if a.ScenarioN == nil {
		a = MarketResult{Policy: b.Policy, ScenarioN: map[string]int{}, ScenarioS: map[string]int{}}
	}
	a.Attempts, a.Successes, a.Customers, a.Paid = a.Attempts+b.Attempts, a.Successes+b.Successes, a.Customers+b.Customers, a.Paid+b.Paid
	a.Newcomer, a.NewcomerBest = a.Newcomer.add(b.Newcomer), a.NewcomerBest.add(b.NewcomerBest)
	for s, n := range b.ScenarioN {
		a.ScenarioN[s] += n
		a.ScenarioS[s] += b.ScenarioS[s]
	}
	return a
}
