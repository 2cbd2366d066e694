package routing

import "testing"

// TestSimulate holds the engine to the bar: within 1 point of the
// oracle, and well ahead of the fixed provider in outages.
func TestSimulate(t *testing.T) {
	// The whole world even under -short: it takes a quarter of a second,
	// and a fifth of its payments over the same week made a world five
	// times quieter, too small to judge a learner by (issue 23).
	cfg := DefaultSim
	res := Simulate(cfg)
	t.Log("\n" + SimTable(cfg, res))
	engine, fixed, oracle := res[0], res[1], res[3]
	if gap := oracle.Rate(cfg.Payments) - engine.Rate(cfg.Payments); gap > 0.01 {
		t.Errorf("engine %.2f%%, oracle %.2f%%: %.2f points behind; want at most 1", 100*engine.Rate(cfg.Payments), 100*oracle.Rate(cfg.Payments), 100*gap)
	}
	if engine.Lost*5 > fixed.Lost {
		t.Errorf("engine lost %d payments in outages, the fixed provider %d; want at most a fifth", engine.Lost, fixed.Lost)
	}
}
