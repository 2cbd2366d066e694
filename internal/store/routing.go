package store

import (
	"context"
	"time"
)

// RoutingCount is one provider's outcomes in one context and minute.
type RoutingCount struct {
	Provider, Country, Operator, Kind string
	Minute                            time.Time
	Successes, Failures, Technical    int64
	LatencyMS                         int64 // sum over the minute
	// The smallest amount refused at once for its size (0: none), how many
	// were refused so, and the largest that succeeded (0: none): the routing engine learns a
	// provider's ceiling from them. Failures may be negative in a row a
	// node of an earlier version wrote (failures taken back); read as none.
	RefusedMin, SucceededMax int64
	Refusals                 int64 // refusals for the amount
}

// RecordRoutingOutcomes adds counts to their minutes' counts, in one
// transaction (a node's batch).
func (s *Store) RecordRoutingOutcomes(ctx context.Context, counts []RoutingCount) error {
	if len(counts) == 0 {
		return nil
	}
	return s.tx(ctx, func(t *tx) error {
		for _, c := range counts {
			if _, err := t.exec(ctx, `INSERT INTO routing_outcomes (provider, country, operator, kind, minute, successes, failures, technical, latency_ms, refused_min, refusals, succeeded_max)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (provider, country, operator, kind, minute) DO UPDATE SET
					successes = routing_outcomes.successes + excluded.successes, failures = routing_outcomes.failures + excluded.failures,
					technical = routing_outcomes.technical + excluded.technical, latency_ms = routing_outcomes.latency_ms + excluded.latency_ms,
					refused_min = CASE WHEN excluded.refused_min > 0 AND (routing_outcomes.refused_min = 0 OR excluded.refused_min < routing_outcomes.refused_min)
						THEN excluded.refused_min ELSE routing_outcomes.refused_min END,
					refusals = routing_outcomes.refusals + excluded.refusals,
					succeeded_max = CASE WHEN excluded.succeeded_max > routing_outcomes.succeeded_max THEN excluded.succeeded_max ELSE routing_outcomes.succeeded_max END`,
				c.Provider, c.Country, c.Operator, c.Kind, c.Minute.Unix()/60, c.Successes, c.Failures, c.Technical, c.LatencyMS, c.RefusedMin, c.Refusals, c.SucceededMax); err != nil {
				return err
			}
		}
		return nil
	})
}

// RoutingCounts lists the counts since a time, each bucket step long (a
// whole number of minutes): minute buckets for the recent past, coarser
// ones for the rest, so a refresh reads few rows.
func (s *Store) RoutingCounts(ctx context.Context, since, until time.Time, step time.Duration) ([]RoutingCount, error) {
	w := int64(step / time.Minute)
	if w < 1 {
		w = 1
	}
	var out []RoutingCount
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (RoutingCount, error) {
			var c RoutingCount
			var bucket int64
			err := row.Scan(&c.Provider, &c.Country, &c.Operator, &c.Kind, &bucket, &c.Successes, &c.Failures, &c.Technical, &c.LatencyMS, &c.RefusedMin, &c.Refusals, &c.SucceededMax)
			c.Minute = time.Unix(bucket*w*60, 0).UTC()
			return c, err
		}, `SELECT provider, country, operator, kind, minute / ? AS bucket, SUM(successes), SUM(failures), SUM(technical), SUM(latency_ms),
				COALESCE(MIN(NULLIF(refused_min, 0)), 0), SUM(refusals), MAX(succeeded_max)
			FROM routing_outcomes WHERE minute >= ? AND minute < ?
			GROUP BY provider, country, operator, kind, bucket ORDER BY bucket`, w, since.Unix()/60, until.Unix()/60)
		return err
	})
	return out, err
}

// PurgeRoutingOutcomes forgets counts older than before.
func (s *Store) PurgeRoutingOutcomes(ctx context.Context, before time.Time) (int64, error) {
	return s.update(ctx, `DELETE FROM routing_outcomes WHERE minute < ?`, before.Unix()/60)
}
