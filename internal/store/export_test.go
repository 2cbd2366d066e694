package store

import (
	"context"

	"github.com/cauri-pay/cauri/internal/config"
)

// Explain returns the database's plan of q with args, one line per node:
// SQLite's EXPLAIN QUERY PLAN details; PostgreSQL's EXPLAIN with sequential
// scans discouraged (on a nearly empty test table the planner would scan it
// whatever its indexes, so a Seq Scan left in the plan means no index fits).
func (s *Store) Explain(ctx context.Context, q string, args []any) ([]string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	explain := "EXPLAIN QUERY PLAN "
	if s.kind == config.Postgres {
		if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return nil, err
		}
		explain = "EXPLAIN "
	}
	rows, err := tx.QueryContext(ctx, explain+q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		switch v := vals[len(vals)-1].(type) { // SQLite's detail, PostgreSQL's one column
		case string:
			out = append(out, v)
		case []byte:
			out = append(out, string(v))
		}
	}
	return out, rows.Err()
}
