package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/vault"
)

// TestCheckpoints: the connections leave the WAL to grow to 10 000 pages
// before a commit checkpoints it, and the server's background checkpoints
// copy it into the database meanwhile.
func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cauri.db")
	s := openSQLite(t, path)
	var mark int
	if err := s.db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&mark); err != nil || mark != walAutocheckpoint {
		t.Fatalf("wal_autocheckpoint = %d, %v; want %d", mark, err, walAutocheckpoint)
	}
	// What the migrations wrote is in the database now; what follows
	// stays in the WAL (far fewer than 10 000 pages) until a checkpoint.
	if err := checkpoint(ctx, s.db); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	for i := range 1200 {
		if err := s.tx(ctx, func(t *tx) error {
			return t.audit(ctx, time.Now(), "test.row", fmt.Sprintf("ws_%d", i), map[string]any{"pad": string(bytes.Repeat([]byte("x"), 3000))})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := size(); got != before {
		t.Fatalf("the database grew from %d to %d bytes before any checkpoint: a commit checkpointed", before, got)
	}
	bg, stop := context.WithCancel(ctx)
	defer stop()
	go Checkpoints(bg, s.db, 10*time.Millisecond, func(err error) { t.Error(err) })
	for deadline := time.Now().Add(10 * time.Second); size() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no background checkpoint within 10 s")
		}
	}
}

// openSQLite opens and migrates a store on the SQLite file at path for the
// package's own tests (storetest imports this package), closed when the
// test ends.
func openSQLite(t *testing.T, path string) *Store {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{42}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), "sqlite://"+path, v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}
