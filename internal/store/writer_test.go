package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupCommit: SQLite transactions that wait for the write turn
// together are committed together, and each keeps its own outcome: one
// whose function fails (an error of its own, or a statement refused by a
// constraint) leaves nothing, the others everything.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t, filepath.Join(t.TempDir(), "cauri.db"))
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE group_test (k TEXT PRIMARY KEY, n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO group_test (k, n) VALUES ('taken', 0)`); err != nil {
		t.Fatal(err)
	}
	// Hold the turn so that every transaction below queues, then let go:
	// they run in batches of several.
	s.writer <- struct{}{}
	const n = 90
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.tx(ctx, func(t *tx) error {
				if _, err := t.exec(ctx, `INSERT INTO group_test (k, n) VALUES (?, ?)`, fmt.Sprint("a", i), i); err != nil {
					return err
				}
				switch i % 3 {
				case 1: // fails after a write of its own
					return errors.New("refused")
				case 2: // a second row, refused by the primary key
					_, err := t.exec(ctx, `INSERT INTO group_test (k, n) VALUES ('taken', ?)`, i)
					return err
				}
				return nil
			})
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); s.queued() < n && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if got := s.queued(); got != n {
		t.Fatalf("%d transactions queued; want %d", got, n)
	}
	<-s.writer
	wg.Wait()
	for i, err := range errs {
		if (err == nil) != (i%3 == 0) {
			t.Errorf("transaction %d: %v", i, err)
		}
		var k string
		err := s.db.QueryRowContext(ctx, `SELECT k FROM group_test WHERE n = ? AND k <> 'taken'`, i).Scan(&k)
		if (err == nil) != (i%3 == 0) {
			t.Errorf("transaction %d's row: %q, %v", i, k, err)
		}
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM group_test`).Scan(&rows); err != nil || rows != n/3+1 {
		t.Fatalf("%d rows, %v; want %d", rows, err, n/3+1)
	}
}

// TestGroupCommit_Abandoned: a transaction whose context ends, or whose
// wait passes writerWait, before its turn never runs; one that has begun
// runs to its end whatever its context does.
func TestGroupCommit_Abandoned(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t, filepath.Join(t.TempDir(), "cauri.db"))
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE group_test (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	s.writer <- struct{}{}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	var ran atomic.Bool
	err := s.tx(short, func(t *tx) error {
		ran.Store(true)
		_, err := t.exec(ctx, `INSERT INTO group_test (k) VALUES ('late')`)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("tx = %v; want the context's end", err)
	}
	<-s.writer
	if err := s.tx(ctx, func(*tx) error { return nil }); err != nil { // a turn after it
		t.Fatal(err)
	}
	if ran.Load() || s.queued() != 0 {
		t.Fatalf("the abandoned transaction ran (%v) or is still queued (%d)", ran.Load(), s.queued())
	}

	// Begun, then cancelled while its statements run: it commits.
	begun, cancelBegun := context.WithCancel(ctx)
	err = s.tx(begun, func(t *tx) error {
		cancelBegun()
		_, err := t.exec(begun, `INSERT INTO group_test (k) VALUES ('begun')`)
		return err
	})
	var n int
	if err != nil || s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM group_test WHERE k = 'begun'`).Scan(&n) != nil || n != 1 {
		t.Fatalf("a begun transaction cancelled: %v, %d rows; want it committed", err, n)
	}
}

// queued is how many transactions wait in the queue, for the tests.
func (s *Store) queued() int {
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	return len(s.queue.jobs)
}

// TestGroupCommit_Panic: a transaction that panics is rolled back and its
// panic raised in its own caller; the others of its batch commit, and the
// write turn is free again.
func TestGroupCommit_Panic(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t, filepath.Join(t.TempDir(), "cauri.db"))
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE group_test (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	s.writer <- struct{}{}
	var wg sync.WaitGroup
	var recovered atomic.Value
	var okErr error
	for i, k := range []string{"panics", "commits"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					recovered.Store(r)
				}
			}()
			err := s.tx(ctx, func(t *tx) error {
				if _, err := t.exec(ctx, `INSERT INTO group_test (k) VALUES (?)`, k); err != nil {
					return err
				}
				if i == 0 {
					panic("boom")
				}
				return nil
			})
			okErr = err
		}()
		for deadline := time.Now().Add(5 * time.Second); s.queued() <= i && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		}
	}
	<-s.writer
	wg.Wait()
	var keys []string
	rows, err := s.db.QueryContext(ctx, `SELECT k FROM group_test`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		keys = append(keys, k)
	}
	rows.Close()
	if p, _ := recovered.Load().(string); !strings.HasPrefix(p, "boom [in a batched SQLite transaction]") || okErr != nil || fmt.Sprint(keys) != "[commits]" {
		t.Fatalf("panic %v, the other's error %v, rows %v; want boom, nil, [commits]", recovered.Load(), okErr, keys)
	}
	if err := s.tx(ctx, func(*tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommit_FailedBatch: when the batch cannot commit, every
// transaction of it fails with the batch's error, a failed one too: its
// own error ("already there") rested on what an earlier one wrote, which
// is undone.
func TestGroupCommit_FailedBatch(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t, filepath.Join(t.TempDir(), "cauri.db"))
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE group_test (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	s.writer <- struct{}{}
	fns := []func(t *tx) error{
		func(t *tx) error { // writes
			_, err := t.exec(ctx, `INSERT INTO group_test (k) VALUES ('x')`)
			return err
		},
		func(t *tx) error { // sees the first's write, and fails because of it
			var n int
			if err := t.queryRow(ctx, `SELECT COUNT(*) FROM group_test WHERE k = 'x'`).Scan(&n); err != nil || n != 1 {
				return fmt.Errorf("the first's write unseen: %d, %v", n, err)
			}
			return errors.New("already there")
		},
		func(t *tx) error { // ends the whole transaction, as a full disk would
			t.exec(ctx, `ROLLBACK`)
			return errors.New("disk full")
		},
	}
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.tx(ctx, fn) }()
		for deadline := time.Now().Add(5 * time.Second); s.queued() <= i && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		}
	}
	<-s.writer
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "batch of transactions was rolled back") {
			t.Errorf("transaction %d: %v; want the batch's error", i, err)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM group_test`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows, %v; want none", n, err)
	}
}
