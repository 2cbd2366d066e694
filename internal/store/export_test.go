package store

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
)

// Explain returns the database's plan of q with args, one line per node:
// SQLite's EXPLAIN QUERY PLAN details, each indented by two spaces for each
// node it is inside of; PostgreSQL's EXPLAIN with sequential
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
	depth := map[int64]int{} // SQLite's node id: its depth
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		indent := ""
		if len(vals) == 4 { // SQLite's id, parent, notused, detail
			id, _ := vals[0].(int64)
			parent, _ := vals[1].(int64)
			depth[id] = 0
			if d, ok := depth[parent]; ok {
				depth[id] = d + 1
			}
			indent = strings.Repeat("  ", depth[id])
		}
		switch v := vals[len(vals)-1].(type) { // SQLite's detail, PostgreSQL's one column
		case string:
			out = append(out, indent+v)
		case []byte:
			out = append(out, indent+string(v))
		}
	}
	return out, rows.Err()
}

// SessionRowsRead runs q with args under PostgreSQL's EXPLAIN ANALYZE and
// returns how many rows of checkout_sessions its plan read (each node's
// actual rows times its loops); -1 on SQLite, which cannot tell.
func (s *Store) SessionRowsRead(ctx context.Context, q string, args []any) (int, error) {
	if s.kind != config.Postgres {
		return -1, nil
	}
	rows, err := s.db.QueryContext(ctx, "EXPLAIN ANALYZE "+q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	actual := regexp.MustCompile(` on checkout_sessions\b.*\(actual time=\S+ rows=([\d.]+) loops=(\d+)\)`) // rows=1.00 from PostgreSQL 18
	read := 0
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return 0, err
		}
		if m := actual.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			loops, _ := strconv.Atoi(m[2])
			read += int(n*float64(loops) + 0.5)
		}
	}
	return read, rows.Err()
}

// IndexLeads maps each index of the store's tables to its first column
// (PostgreSQL; nil on SQLite, whose plans name a whole-index scan "SCAN"),
// but the partial ones: those hold what is pending alone, by design.
func (s *Store) IndexLeads(ctx context.Context) (map[string]string, error) {
	if s.kind != config.Postgres {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT i.relname, a.attname FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
		JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
		WHERE n.nspname = current_schema() AND x.indpred IS NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var index, column string
		if err := rows.Scan(&index, &column); err != nil {
			return nil, err
		}
		out[index] = column
	}
	return out, rows.Err()
}

// SetPurgeBatch sets how many rows of a table a purge's transaction deletes
// (the test of the batches), and returns a function that restores it.
func SetPurgeBatch(n int) (restore func()) {
	was := purgeBatch
	purgeBatch = n
	return func() { purgeBatch = was }
}

// AddNotification writes a notification as a failed delivery's last
// attempt does (the tests of the notifications' pages).
func (s *Store) AddNotification(ctx context.Context, workspaceID string, livemode bool, message string, at time.Time) error {
	_, err := s.update(ctx, `INSERT INTO notifications (id, workspace_id, livemode, kind, delivery_id, message, created_at)
		VALUES (?, ?, ?, ?, NULL, ?, ?)`, cauri.NewID("ntf_"), workspaceID, livemode, NotificationDeliveryFailed, message, micros(at))
	return err
}

// WriteAsBeforeExpiry gives a session the expires_at a node older than the
// column writes (its default, 0), as during a rolling deploy.
func (s *Store) WriteAsBeforeExpiry(ctx context.Context, sessionID string) error {
	_, err := s.update(ctx, `UPDATE checkout_sessions SET expires_at = 0 WHERE id = ?`, sessionID)
	return err
}

// RefillSearchTerms forgets every search term and writes them again as
// `cauri search rebuild` does.
func (s *Store) RefillSearchTerms(ctx context.Context) error {
	if _, err := s.update(ctx, `DELETE FROM search_terms`); err != nil {
		return err
	}
	_, err := s.RebuildSearchTerms(ctx)
	return err
}

// MigrateDownTo undoes the migrations after version.
func (s *Store) MigrateDownTo(ctx context.Context, version int64) error {
	p, err := s.migrations()
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}

// WriteTermAsBeforeTime replaces a session's search terms with term,
// written as a node older than migration 37 writes it (without the
// session's time), as during a rolling upgrade.
func (s *Store) WriteTermAsBeforeTime(ctx context.Context, workspaceID string, livemode bool, sessionID, term string) error {
	if _, err := s.update(ctx, `DELETE FROM search_terms WHERE session_id = ?`, sessionID); err != nil {
		return err
	}
	_, err := s.update(ctx, `INSERT INTO search_terms (workspace_id, livemode, term, session_id) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, workspaceID, livemode, term, sessionID)
	return err
}

// WriteTerm adds a search term of a session, with its time.
func (s *Store) WriteTerm(ctx context.Context, workspaceID string, livemode bool, sessionID, term string, created time.Time) error {
	_, err := s.update(ctx, `INSERT INTO search_terms (workspace_id, livemode, term, created_at, session_id) VALUES (?, ?, ?, ?, ?)`,
		workspaceID, livemode, term, micros(created), sessionID)
	return err
}

// SetSearchWalkFrom sets how many matching terms make a search walk the
// sessions (searchWalk), until restore is called.
func SetSearchWalkFrom(n int) (restore func()) {
	old := searchWalkFrom
	searchWalkFrom = n
	return func() { searchWalkFrom = old }
}

// HasStatistics says whether the planner has statistics of a table
// (PostgreSQL's pg_stats of the store's schema, SQLite's sqlite_stat1).
func (s *Store) HasStatistics(ctx context.Context, table string) (bool, error) {
	q := `SELECT COUNT(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = ?`
	if s.kind != config.Postgres {
		var tables int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_stat1'`).Scan(&tables); err != nil || tables == 0 {
			return false, err
		}
		q = `SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = ?`
	}
	var n int
	err := s.db.QueryRowContext(ctx, s.rebind(q), table).Scan(&n)
	return n > 0, err
}
