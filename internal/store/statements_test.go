package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestStatements_PreparedOnceThenReused: on SQLite a query's first call
// runs unprepared and has its statement prepared meanwhile; later calls,
// inside a transaction or not, run through it. PostgreSQL caches none.
func TestStatements_PreparedOnceThenReused(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t, filepath.Join(t.TempDir(), "cauri.db"))
	const q = `SELECT COUNT(*) FROM workspaces WHERE id = ?`
	count := func(t *tx) {
		var n int
		if err := t.queryRow(ctx, q, "ws_x").Scan(&n); err != nil || n != 0 {
			panic(err)
		}
	}
	s.read(ctx, func(t *tx) error { count(t); return nil })
	var st = s.stmts.get(s.db, q)
	for deadline := time.Now().Add(5 * time.Second); st == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st = s.stmts.get(s.db, q)
	}
	if st == nil {
		t.Fatal("the query's statement was never prepared")
	}
	if err := s.tx(ctx, func(t *tx) error {
		if t.prepared(ctx, q) == nil {
			return errors.New("no prepared statement inside a transaction")
		}
		count(t)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.stmts.stmts), 1; got != want {
		t.Errorf("statements cached = %d; want %d (one query, whatever the connection or transaction)", got, want)
	}
}
