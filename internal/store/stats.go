package store

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
)

// Tally counts payments that ended: how many succeeded, how many failed,
// and the amount that succeeded (minor units of one currency).
type Tally struct {
	Succeeded, Failed, Total int
	Volume                   int64
}

// SuccessRate is succeeded over succeeded and failed; ok is false when
// nothing ended yet.
func (t Tally) SuccessRate() (rate float64, ok bool) {
	if t.Succeeded+t.Failed == 0 {
		return 0, false
	}
	return float64(t.Succeeded) / float64(t.Succeeded+t.Failed), true
}

func (t *Tally) add(succeeded, failed bool, n int, amount int64) {
	t.Total += n
	switch {
	case succeeded:
		t.Succeeded += n
		t.Volume += amount
	case failed:
		t.Failed += n
	}
}

// Stats are a workspace's payments of one mode over a period, for the
// dashboard's overview: per UTC day (sessions created that day: a session
// succeeded or failed), and per provider and per operator (payment
// attempts: an attempt succeeded or failed at its aggregator), each per
// currency.
type Stats struct {
	Days       map[cauri.Currency]map[time.Time]*Tally // day: midnight UTC
	Providers  map[cauri.Currency]map[string]*Tally
	Operators  map[cauri.Currency]map[string]*Tally
	Currencies map[cauri.Currency]int // sessions per currency
}

const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// Stats reads the overview of a workspace's payments created in [since, until).
func (s *Store) Stats(ctx context.Context, workspaceID string, livemode bool, since, until time.Time) (*Stats, error) {
	st := &Stats{Days: map[cauri.Currency]map[time.Time]*Tally{}, Providers: map[cauri.Currency]map[string]*Tally{},
		Operators: map[cauri.Currency]map[string]*Tally{}, Currencies: map[cauri.Currency]int{}}
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT created_at / ? AS day, currency, status, COUNT(*), CAST(COALESCE(SUM(amount), 0) AS BIGINT)
			FROM checkout_sessions WHERE workspace_id = ? AND livemode = ? AND created_at >= ? AND created_at < ?
			GROUP BY day, currency, status`, microsPerDay, workspaceID, livemode, micros(since), micros(until))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var day, amount int64
			var cur, status string
			var n int
			if err := rows.Scan(&day, &cur, &status, &n, &amount); err != nil {
				return err
			}
			c := cauri.Currency(cur)
			st.Currencies[c] += n
			tally(st.Days, c, fromMicros(day*microsPerDay)).add(status == string(cauri.SessionSuccess), status == string(cauri.SessionFailed), n, amount)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		rows, err = t.query(ctx, `SELECT a.provider, a.operator, a.status, s.currency, COUNT(*), CAST(COALESCE(SUM(s.amount), 0) AS BIGINT)
			FROM checkout_sessions s JOIN payment_attempts a ON a.session_id = s.id
			WHERE s.workspace_id = ? AND s.livemode = ? AND s.created_at >= ? AND s.created_at < ?
			GROUP BY a.provider, a.operator, a.status, s.currency`, workspaceID, livemode, micros(since), micros(until))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var provider, operator, status, cur string
			var n int
			var amount int64
			if err := rows.Scan(&provider, &operator, &status, &cur, &n, &amount); err != nil {
				return err
			}
			ok, failed := status == string(cauri.AttemptSucceeded), status == string(cauri.AttemptFailed)
			tally(st.Providers, cauri.Currency(cur), provider).add(ok, failed, n, amount)
			tally(st.Operators, cauri.Currency(cur), operator).add(ok, failed, n, amount)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

func tally[K comparable](m map[cauri.Currency]map[K]*Tally, c cauri.Currency, k K) *Tally {
	if m[c] == nil {
		m[c] = map[K]*Tally{}
	}
	if m[c][k] == nil {
		m[c][k] = &Tally{}
	}
	return m[c][k]
}
