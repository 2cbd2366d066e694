package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
)

// The overview's figures are kept as payments move (migration 00023): a
// transaction that creates a session or an attempt, or moves one to
// another status, appends what that changes in the counts to
// payment_rollup_changes before it commits, in one statement; the
// background folds those changes into payment_rollups (FoldRollups), and
// Stats reads both. So the counts are those of the committed payments at
// every moment, across crashes (a change and its count commit together)
// and nodes (appends never wait on one another; one node folds at a time).

// RollupsEvery is how often a server folds the counts' changes.
const RollupsEvery = time.Second

// foldBatch is how many changes one fold takes at most.
const foldBatch = 5000

// rollupKey names one counter: a workspace's sessions or attempts of one
// mode, created on one UTC day, in one currency and one status.
type rollupKey struct {
	workspaceID        string
	livemode           bool
	day                int64 // days since the epoch
	kind               string
	currency           string
	provider, operator string // attempts only
	status             string
}

// rollupCount is what a change adds to a counter.
type rollupCount struct{ n, volume int64 }

func dayOf(t time.Time) int64 { return micros(t) / microsPerDay }

// countSession records, in t, n more (or fewer) of sess's sessions in
// status.
func (t *tx) countSession(sess *cauri.Session, status cauri.SessionStatus, n int64) {
	t.count(rollupKey{sess.WorkspaceID, sess.Livemode, dayOf(sess.CreatedAt), "session", string(sess.Currency), "", "", string(status)},
		n, sess.Amount)
}

// countAttempt records, in t, n more (or fewer) of sess's attempts through
// a's provider and operator in status.
func (t *tx) countAttempt(sess *cauri.Session, a *cauri.PaymentAttempt, status cauri.AttemptStatus, n int64) {
	t.count(rollupKey{sess.WorkspaceID, sess.Livemode, dayOf(sess.CreatedAt), "attempt", string(sess.Currency), a.Provider, a.Operator, string(status)},
		n, sess.Amount)
}

// moveSession records sess moving from status was to its status now.
func (t *tx) moveSession(sess *cauri.Session, was cauri.SessionStatus) {
	if sess.Status != was {
		t.countSession(sess, was, -1)
		t.countSession(sess, sess.Status, 1)
	}
}

func (t *tx) count(k rollupKey, n, amount int64) {
	if t.counts == nil {
		t.counts = map[rollupKey]rollupCount{}
	}
	c := t.counts[k]
	c.n += n
	c.volume += n * amount
	t.counts[k] = c
}

// writeCounts appends the transaction's changes of the counts in one
// statement, before it commits.
func (t *tx) writeCounts(ctx context.Context) error {
	var b strings.Builder
	args := make([]any, 0, 11*len(t.counts))
	b.WriteString(`INSERT INTO payment_rollup_changes (id, workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume) VALUES `)
	for _, k := range sortedKeys(t.counts) {
		c := t.counts[k]
		if c.n == 0 {
			continue
		}
		if len(args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, cauri.NewID("rc_"), k.workspaceID, k.livemode, k.day, k.kind, k.currency, k.provider, k.operator, k.status, c.n, c.volume)
	}
	t.counts = nil
	if len(args) == 0 {
		return nil
	}
	return t.execLater(ctx, "", b.String(), args...)
}

// sortedKeys orders counters as every writer of payment_rollups does, so
// that two folds never lock the same rows in opposite orders.
func sortedKeys[V any](m map[rollupKey]V) []rollupKey {
	keys := make([]rollupKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rollupKey) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	return keys
}

// FoldRollups folds up to a batch of the counts' changes into the counts,
// in one transaction, and returns how many it folded. On PostgreSQL one
// node folds at a time (the others' call returns 0 at once).
func (s *Store) FoldRollups(ctx context.Context) (int, error) {
	var folded int
	err := s.tx(ctx, func(t *tx) error {
		if s.kind == config.Postgres {
			var mine bool
			if err := t.queryRow(ctx, `SELECT pg_try_advisory_xact_lock(?)`, rollupsLock).Scan(&mine); err != nil || !mine {
				return err
			}
		}
		sums := map[rollupKey]rollupCount{}
		rows, err := t.query(ctx, `DELETE FROM payment_rollup_changes WHERE id IN (SELECT id FROM payment_rollup_changes LIMIT ?)
			RETURNING workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume`, foldBatch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k rollupKey
			var c rollupCount
			if err := rows.Scan(&k.workspaceID, &k.livemode, &k.day, &k.kind, &k.currency, &k.provider, &k.operator, &k.status, &c.n, &c.volume); err != nil {
				return err
			}
			sum := sums[k]
			sums[k] = rollupCount{sum.n + c.n, sum.volume + c.volume}
			folded++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		for _, k := range sortedKeys(sums) {
			c := sums[k]
			if _, err := t.exec(ctx, `INSERT INTO payment_rollups (workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (workspace_id, livemode, day, kind, currency, provider, operator, status)
				DO UPDATE SET n = payment_rollups.n + excluded.n, volume = payment_rollups.volume + excluded.volume`,
				k.workspaceID, k.livemode, k.day, k.kind, k.currency, k.provider, k.operator, k.status, c.n, c.volume); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return folded, nil
}

// UnfoldedRollups is how many changes of the counts wait to be folded.
func (s *Store) UnfoldedRollups(ctx context.Context) (n int64, err error) {
	err = s.read(ctx, func(t *tx) error {
		return t.queryRow(ctx, `SELECT COUNT(*) FROM payment_rollup_changes`).Scan(&n)
	})
	return n, err
}

// rollupsLock is the PostgreSQL advisory lock of the fold.
const rollupsLock = 0x636175726901 // "cauri", 1

// KeepRollups folds the counts' changes every `every` until ctx ends, a
// batch after another while a full one comes back; each failure is given
// to report.
func (s *Store) KeepRollups(ctx context.Context, every time.Duration, report func(error)) {
	go repeat(ctx, every, func() {
		for {
			n, err := s.FoldRollups(ctx)
			if err != nil && ctx.Err() == nil {
				report(fmt.Errorf("fold the overview's counts: %w", err))
			}
			if err != nil || n < foldBatch {
				return
			}
		}
	})
}

// perDay is microsPerDay written in a query (a placeholder would make
// PostgreSQL see the SELECT's and the GROUP BY's days as two expressions).
var perDay = strconv.FormatInt(microsPerDay, 10)

// RebuildRollups recounts the overview's figures from the sessions and
// attempts themselves (`cauri overview rebuild`), and returns how many
// counters it wrote. On PostgreSQL the counts' changes are locked against
// new appends meanwhile: a payment that moves during the rebuild waits for
// it, then appends its change to the rebuilt counts. The refilled table's
// statistics are taken in the same transaction (ANALYZE): on PostgreSQL,
// until autovacuum came by, the planner read every workspace's counts of
// the period through the purge's index believing the table empty.
func (s *Store) RebuildRollups(ctx context.Context) (int64, error) {
	var n int64
	err := s.tx(ctx, func(t *tx) error {
		if s.kind == config.Postgres {
			if _, err := t.exec(ctx, `LOCK TABLE payment_rollup_changes IN EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM payment_rollup_changes`, `DELETE FROM payment_rollups`} {
			if _, err := t.exec(ctx, q); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`INSERT INTO payment_rollups (workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume)
			SELECT workspace_id, livemode, created_at / ` + perDay + `, 'session', currency, '', '', status, COUNT(*), CAST(SUM(amount) AS BIGINT)
			FROM checkout_sessions GROUP BY workspace_id, livemode, created_at / ` + perDay + `, currency, status`,
			`INSERT INTO payment_rollups (workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume)
			SELECT s.workspace_id, s.livemode, s.created_at / ` + perDay + `, 'attempt', s.currency, a.provider, a.operator, a.status, COUNT(*), CAST(SUM(s.amount) AS BIGINT)
			FROM payment_attempts a JOIN checkout_sessions s ON s.id = a.session_id
			GROUP BY s.workspace_id, s.livemode, s.created_at / ` + perDay + `, s.currency, a.provider, a.operator, a.status`,
		} {
			res, err := t.exec(ctx, q)
			if err != nil {
				return err
			}
			m, _ := res.RowsAffected()
			n += m
		}
		_, err := t.exec(ctx, `ANALYZE payment_rollups`)
		return err
	})
	return n, err
}
