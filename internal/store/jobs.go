package store

import (
	"context"
	"time"
)

// ClaimJob reports whether this node runs job name now: the first node to
// ask once it is due moves its next run every later, and the others are
// told no. Every node may ask as often as it likes; the job runs once per
// period across all of them.
func (s *Store) ClaimJob(ctx context.Context, name string, now time.Time, every time.Duration) (bool, error) {
	var claimed bool
	err := s.tx(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO job_runs (name, next_run_at) VALUES (?, 0) ON CONFLICT DO NOTHING`, name); err != nil {
			return err
		}
		res, err := t.exec(ctx, `UPDATE job_runs SET next_run_at = ? WHERE name = ? AND next_run_at <= ?`,
			micros(now.Add(every)), name, micros(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		claimed = n == 1
		return err
	})
	return claimed, err
}
