package routing

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// marketSeeds are the market's seeds the test holds the engine to, chosen
// before any was run (the knobs were tried on seeds 101 to 106).
var marketSeeds = []uint64{11, 22, 33, 44, 55}

// engineDraws is how many draws of the engine's own randomness (which
// payments it explores with) each world is run with, the world's seed
// plus 0, 1000, 2000...: one draw moves a seed's gap by a tenth of a point
// or more either way, so the tests hold the mean over several
// (docs/routing.md, "How much of a figure is luck").
const engineDraws = 4

// TestSimulateMarket holds the engine to issue 23's bar in the second
// world: within 1 point of the oracle overall (over the five seeds and the
// engine's draws), ahead of every baseline on each seed, ahead of both
// bandit baselines in every scenario, and a better newcomer carrying most
// of the attempts it is the best choice for from its second hour live
// (point 5). The whole market even under -short, with 2 draws rather
// than 4 (10 runs of the engine and 5 of the baselines, in parallel).
func TestSimulateMarket(t *testing.T) {
	engineDraws := engineDraws
	if testing.Short() {
		engineDraws = 2
	}
	results := make([][]MarketResult, len(marketSeeds)) // the engine's first draw, the baselines and the oracle
	draws := make([][]MarketResult, len(marketSeeds))   // the engine, each draw
	for i := range draws {
		draws[i] = make([]MarketResult, engineDraws)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, seed := range marketSeeds {
		for d := range engineDraws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				cfg := MarketSim
				cfg.Seed, cfg.EngineSeed = seed, seed+1000*uint64(d)
				if d == 0 {
					results[i] = SimulateMarket(cfg)
					draws[i][0] = results[i][0]
				} else {
					draws[i][d] = SimulateMarketEngine(cfg)
				}
			}()
		}
	}
	wg.Wait()
	var gaps []string
	var sum float64
	total := make([]MarketResult, len(results[0]))
	var engine MarketResult // every draw
	for i, res := range results {
		cfg := MarketSim
		cfg.Seed = marketSeeds[i]
		t.Log("\n" + MarketTable(cfg, res))
		oracle := res[len(res)-1]
		var seedGaps []string
		var rate float64
		for _, e := range draws[i] {
			gap := 100 * (oracle.Rate() - e.Rate())
			sum += gap
			rate += e.Rate() / float64(engineDraws)
			seedGaps = append(seedGaps, fmt.Sprintf("%.2f", gap))
			engine = addMarket(engine, e)
		}
		gaps = append(gaps, fmt.Sprintf("seed %d: %v", marketSeeds[i], seedGaps))
		for _, b := range res[1 : len(res)-1] {
			if b.Rate() >= rate {
				t.Errorf("seed %d: %s %.2f%%, the engine %.2f%% (the mean of its draws); want the engine ahead", marketSeeds[i], b.Policy, 100*b.Rate(), 100*rate)
			}
		}
		for j, r := range res {
			total[j] = addMarket(total[j], r)
		}
	}
	_, table, _ := strings.Cut(MarketTable(MarketSim, total), "\n\n") // without its seed's line
	t.Log("\nThe five seeds together (the engine's first draw):\n\n" + table)
	mean := sum / float64(len(marketSeeds)*engineDraws)
	t.Logf("gap to the oracle per seed and draw %v, mean %.3f points", gaps, mean)
	if mean > 1.0 {
		t.Errorf("the engine is %.3f points behind the oracle over seeds %v, %d draws each; want at most 1", mean, marketSeeds, engineDraws)
	}
	var margins []string
	for _, s := range MarketScenarios {
		margins = append(margins, fmt.Sprintf("%s %+.2f, %+.2f", s, 100*(engine.ScenarioRate(s)-total[1].ScenarioRate(s)), 100*(engine.ScenarioRate(s)-total[2].ScenarioRate(s))))
	}
	t.Logf("the engine over the seeds and draws, points ahead of %s and %s per scenario: %s", total[1].Policy, total[2].Policy, strings.Join(margins, "; "))
	for _, b := range total[1:3] { // the bandits
		for _, s := range MarketScenarios {
			if b.ScenarioRate(s) > engine.ScenarioRate(s) {
				t.Errorf("%s: %s %.2f%%, the engine %.2f%% over the seeds and draws; want the engine ahead", s, b.Policy, 100*b.ScenarioRate(s), 100*engine.ScenarioRate(s))
			}
		}
	}
	best := engine.NewcomerBest
	t.Logf("the newcomer's share of the attempts it is best for, first hour, second hour, first 6 hours: %s", best)
	if to, n := best.To[1], best.N[1]; n == 0 || 2*to <= n {
		t.Errorf("in its second hour live the newcomer carried %d of the %d attempts it was the best choice for; want most of them", to, n)
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
