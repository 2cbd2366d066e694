package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cauri-pay/cauri/internal/routing"
)

// routingCmd is `cauri routing simulate`: the routing engine against its
// baselines on a reproducible simulation, or, with --market, on the second
// world (docs/routing.md).
func routingCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "simulate" {
		return errors.New("routing: want a subcommand: simulate")
	}
	fs := flag.NewFlagSet("routing simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := routing.DefaultSim
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "the simulation's random seed")
	fs.IntVar(&cfg.Payments, "payments", cfg.Payments, "how many payments")
	fs.IntVar(&cfg.Providers, "providers", cfg.Providers, "how many providers")
	fs.Float64Var(&cfg.OutagesPerDay, "outages-per-day", cfg.OutagesPerDay, "outages per provider per day")
	market := fs.Bool("market", false, "simulate the market (the second world) instead: --seed and --payments (customers) apply")
	calm := fs.Bool("calm", false, "with --market: switch the hard situations off")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *market {
		m := routing.MarketSim
		m.Seed, m.Calm = cfg.Seed, *calm
		if set(fs, "payments") {
			m.Payments = cfg.Payments
		}
		if !set(fs, "seed") {
			m.Seed = routing.MarketSim.Seed
		}
		if m.Payments < 1 {
			return errors.New("routing simulate: --payments must be at least 1")
		}
		fmt.Fprint(stdout, routing.MarketTable(m, routing.SimulateMarket(m)))
		return nil
	}
	if cfg.Payments < 1 || cfg.Providers < 1 {
		return errors.New("routing simulate: --payments and --providers must be at least 1")
	}
	fmt.Fprint(stdout, routing.SimTable(cfg, routing.Simulate(cfg)))
	return nil
}

// set reports whether the flag was given.
func set(fs *flag.FlagSet, name string) (given bool) {
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
