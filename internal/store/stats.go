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

// Stats reads the overview of a workspace's payments created in the UTC
// days that [since, until) covers, from the counts kept as they move
// (rollups.go): the folded counts and the changes not folded yet.
func (s *Store) Stats(ctx context.Context, workspaceID string, livemode bool, since, until time.Time) (*Stats, error) {
	st := &Stats{Days: map[cauri.Currency]map[time.Time]*Tally{}, Providers: map[cauri.Currency]map[string]*Tally{},
		Operators: map[cauri.Currency]map[string]*Tally{}, Currencies: map[cauri.Currency]int{}}
	first, end := dayOf(since), dayOf(until.Add(-time.Microsecond))+1
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT day, kind, currency, provider, operator, status, n, volume FROM payment_rollups
			WHERE workspace_id = ? AND livemode = ? AND day >= ? AND day < ?
			UNION ALL
			SELECT day, kind, currency, provider, operator, status, n, volume FROM payment_rollup_changes
			WHERE workspace_id = ? AND livemode = ? AND day >= ? AND day < ?`,
			workspaceID, livemode, first, end, workspaceID, livemode, first, end)
		if err != nil {
			return err
		}
		defer rows.Close()
		sums := map[rollupKey]rollupCount{}
		for rows.Next() {
			var k rollupKey
			var c rollupCount
			if err := rows.Scan(&k.day, &k.kind, &k.currency, &k.provider, &k.operator, &k.status, &c.n, &c.volume); err != nil {
				return err
			}
			sum := sums[k]
			sums[k] = rollupCount{sum.n + c.n, sum.volume + c.volume}
		}
		for k, c := range sums {
			if c.n == 0 { // every one moved on, or a change not folded yet cancels a count
				continue
			}
			cur, n := cauri.Currency(k.currency), int(c.n)
			if k.kind == "session" {
				st.Currencies[cur] += n
				tally(st.Days, cur, fromMicros(k.day*microsPerDay)).add(k.status == string(cauri.SessionSuccess), k.status == string(cauri.SessionFailed), n, c.volume)
				continue
			}
			ok, failed := k.status == string(cauri.AttemptSucceeded), k.status == string(cauri.AttemptFailed)
			tally(st.Providers, cur, k.provider).add(ok, failed, n, c.volume)
			tally(st.Operators, cur, k.operator).add(ok, failed, n, c.volume)
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
