package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_SessionCache: on SQLite a server reads a session from memory
// once read, its own changes are seen as soon as they commit, and the
// CLI's purge (another process on the file) has cleared the server's copy
// when it returns. On PostgreSQL (several nodes) every read goes to the
// store: a change by another node is seen at once.
func TestStore_SessionCache(t *testing.T) {
	for _, kind := range []struct {
		name   string
		url    func(testing.TB) string
		cached bool
	}{
		{"sqlite", storetest.SQLiteURL, true},
		{"postgres", storetest.PostgresURL, false},
	} {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			u := kind.url(t)
			server, other := storetest.Open(t, u), storetest.Open(t, u)
			if err := server.CacheKeys(ctx, time.Hour, func(err error) { t.Error(err) }); err != nil {
				t.Fatal(err)
			}
			if kind.cached { // other is the CLI
				other.AwaitKeyCaches, other.NudgeKeyCaches = true, server.RecheckKeys
			} else if err := other.CacheKeys(ctx, time.Hour, func(err error) { t.Error(err) }); err != nil { // another node
				t.Fatal(err)
			}
			ws, _ := newWorkspace(t, server)
			sess := newSession(ws, 5000)
			if _, _, err := server.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			read := func(s *store.Store) *cauri.Session {
				t.Helper()
				got, err := s.Session(ctx, sess.ID)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			first := read(server)
			// A caller's changes to what it read stay its own.
			first.Metadata["order_id"], first.Status = "changed", cauri.SessionSuccess

			// A change behind the store's back (a raw UPDATE) is not seen
			// from memory; PostgreSQL reads it.
			db, _, err := store.OpenDB(u)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE checkout_sessions SET description = 'behind' WHERE id = '` + sess.ID + `'`); err != nil {
				t.Fatal(err)
			}
			got := read(server)
			if got.Metadata["order_id"] != "A-1" || got.Status != cauri.SessionPending {
				t.Fatalf("second read = %s %v; the first reader's changes leaked", got.Status, got.Metadata)
			}
			if want := map[bool]string{true: "", false: "behind"}[kind.cached]; got.Description != want {
				t.Fatalf("read after a raw UPDATE: description %q, want %q (cached: %v)", got.Description, want, kind.cached)
			}

			// The server's change, then another node's (PostgreSQL), are
			// seen by the server's next read.
			settle := func(s *store.Store, status cauri.SessionStatus, at time.Time) {
				t.Helper()
				if _, err := s.UpdateSession(ctx, sess.ID, func(cur *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
					cur.Status, cur.UpdatedAt = status, at
					return nil, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			settle(server, cauri.SessionFailed, t0.Add(time.Minute))
			if got := read(server); got.Status != cauri.SessionFailed || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
				t.Fatalf("after the server's change: %s at %s", got.Status, got.UpdatedAt)
			}
			if !kind.cached {
				settle(other, cauri.SessionSuccess, t0.Add(2*time.Minute))
				if got := read(server); got.Status != cauri.SessionSuccess {
					t.Fatalf("after another node's change: %s", got.Status)
				}
			}

			// The CLI's purge (a test session older than the cutoff):
			// gone for the server when the purge returns.
			read(server)
			if n, err := other.PurgeTestData(ctx, t0.Add(time.Hour)); err != nil || n == 0 {
				t.Fatalf("purge = %d, %v", n, err)
			}
			if _, err := server.Session(ctx, sess.ID); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Fatalf("read after the purge: err = %v; want not found", err)
			}
		})
	}
}

// TestStore_SessionCacheNeverStale: while one goroutine changes a session
// again and again, readers on the same SQLite server never see a version
// older than one whose change had returned before their read began (a
// read that filled the cache with what a commit replaced would).
func TestStore_SessionCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	s := storetest.SQLite(t)
	if err := s.CacheKeys(ctx, time.Hour, func(err error) { t.Error(err) }); err != nil {
		t.Fatal(err)
	}
	ws, _ := newWorkspace(t, s)
	sess := newSession(ws, 5000)
	if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
		t.Fatal(err)
	}
	const changes = 300
	var committed atomic.Int64 // the last version whose change returned
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var reads, stale atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				floor := committed.Load()
				got, err := s.Session(ctx, sess.ID)
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				if v := got.UpdatedAt.Sub(t0).Microseconds(); v < floor {
					stale.Add(1)
					t.Errorf("read version %d after version %d had committed", v, floor)
					return
				}
			}
		}()
	}
	for v := int64(1); v <= changes; v++ {
		if _, err := s.UpdateSession(ctx, sess.ID, func(cur *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
			cur.UpdatedAt = t0.Add(time.Duration(v) * time.Microsecond)
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		committed.Store(v)
	}
	close(stop)
	wg.Wait()
	if reads.Load() < changes {
		t.Fatalf("%d reads during %d changes: too few to tell", reads.Load(), changes)
	}
	t.Logf("%d reads during %d changes, %d stale", reads.Load(), changes, stale.Load())
}
