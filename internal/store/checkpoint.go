package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cauri-pay/cauri/internal/config"
)

// SQLite in WAL mode appends each commit to the WAL file, and copies the
// WAL back into the database (a checkpoint, with its fsyncs) when the WAL
// reaches walAutocheckpoint pages: by default in the commit that crossed
// the mark, so that one request in a thousand paid for it (a 55-60 ms p99
// on creates). The server checkpoints instead every CheckpointEvery, in the
// background and without blocking readers or writers (PASSIVE); the
// connections' own mark is raised to walAutocheckpoint pages, the safety
// net where no server runs (the CLI, whose WAL is checkpointed when it
// closes) or when the background falls behind.
const (
	CheckpointEvery   = time.Second
	walAutocheckpoint = 10_000 // pages of 4 KiB: 40 MB of WAL
)

// Checkpoints checkpoints db's WAL every `every` until ctx ends; each
// failure is given to report.
func Checkpoints(ctx context.Context, db *sql.DB, every time.Duration, report func(error)) {
	repeat(ctx, every, func() {
		if err := checkpoint(ctx, db); err != nil && ctx.Err() == nil {
			report(fmt.Errorf("checkpoint the SQLite WAL: %w", err))
		}
	})
}

// repeat calls fn every d until ctx ends (the store's background work).
func repeat(ctx context.Context, d time.Duration, fn func()) { repeatOrNudged(ctx, d, nil, fn) }

// repeatOrNudged is repeat, and runs fn at once too when nudge receives.
func repeatOrNudged(ctx context.Context, d time.Duration, nudge <-chan struct{}, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-nudge:
		}
		fn()
	}
}

// checkpoint runs one PASSIVE checkpoint: it copies what no reader still
// needs, and gives up on the rest until the next.
func checkpoint(ctx context.Context, db *sql.DB) error {
	var busy, log, done int
	return db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
}

// Checkpoints runs the store's checkpoints, and the refresh of the
// planner's statistics, in the background until ctx ends, on SQLite
// (PostgreSQL checkpoints and analyzes itself).
func (s *Store) Checkpoints(ctx context.Context, report func(error)) {
	if s.kind == config.SQLite {
		go Checkpoints(ctx, s.db, CheckpointEvery, report)
		go repeat(ctx, OptimizeEvery, func() {
			if _, err := s.db.ExecContext(ctx, `PRAGMA optimize`); err != nil && ctx.Err() == nil {
				report(fmt.Errorf("optimize SQLite's statistics: %w", err))
			}
		})
	}
}

// OptimizeEvery is how often a server lets SQLite refresh the planner's
// statistics of the tables that changed much (PRAGMA optimize, as SQLite
// advises for long-lived connections); PostgreSQL's are autovacuum's.
const OptimizeEvery = time.Hour
