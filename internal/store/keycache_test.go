package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_KeyCache: with the cache on, two stores on one database (two
// nodes, or the server and the CLI on one SQLite file) serve keys from
// memory, and a change made through either reaches both: at once on the
// store that made it; on the other at once on SQLite (the epoch read at
// each use), through NOTIFY on PostgreSQL (the nodes' epoch reads are an
// hour apart here, so nothing else could clear it).
func TestStore_KeyCache(t *testing.T) {
	for _, kind := range []struct {
		name string
		url  func(testing.TB) string
	}{
		{"sqlite", storetest.SQLiteURL},
		{"postgres", storetest.PostgresURL},
	} {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			u := kind.url(t)
			a, b := storetest.Open(t, u), storetest.Open(t, u)
			if err := a.CacheKeys(ctx, time.Hour, func(err error) { t.Error(err) }); err != nil {
				t.Fatal(err)
			}
			if err := b.CacheKeys(ctx, time.Hour, func(err error) { t.Error(err) }); err != nil {
				t.Fatal(err)
			}
			ws, keys := newWorkspace(t, a)
			sec := keys[1] // live secret
			now := t0.Add(time.Hour)
			for _, s := range []*store.Store{a, b} {
				got, k, err := s.Authenticate(ctx, sec.Plaintext, now)
				if err != nil || got.ID != ws.ID || k.ID != sec.ID || !k.Live || k.Kind != cauri.KeySecret || got.Verified {
					t.Fatalf("Authenticate = %+v, %+v, %v", got, k, err)
				}
			}

			// Served from memory: a change made behind the store's back (no
			// epoch moved) is not seen.
			db, _, err := store.OpenDB(u)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE workspaces SET name = 'behind' WHERE id = '` + ws.ID + `'`); err != nil {
				t.Fatal(err)
			}
			if got, _, err := b.Authenticate(ctx, sec.Plaintext, now); err != nil || got.Name != ws.Name {
				t.Fatalf("cached Authenticate = %+v, %v; want the name it had", got, err)
			}

			// A roll without grace on node a: a refuses the old key at once.
			if _, err := a.RollKey(ctx, ws.ID, cauri.KeySecret, true, 0, now); err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.Authenticate(ctx, sec.Plaintext, now); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Fatalf("node a after the roll: err = %v; want not found", err)
			}
			// Node b: at once on SQLite, when the notice arrives on PostgreSQL.
			eventually(t, kind.name == "sqlite", func() bool {
				_, _, err := b.Authenticate(ctx, sec.Plaintext, now)
				return cauri.ErrorCode(err) == cauri.ENotFound
			})

			// A workspace verified on node b: node a's cached workspace follows.
			pub := keys[0]
			if got, _, err := a.Authenticate(ctx, pub.Plaintext, now); err != nil || got.Verified {
				t.Fatalf("before verification: %+v, %v", got, err)
			}
			if _, err := b.VerifyWorkspace(ctx, ws.ID, now); err != nil {
				t.Fatal(err)
			}
			if got, _, err := b.Authenticate(ctx, pub.Plaintext, now); err != nil || !got.Verified {
				t.Fatalf("node b after verifying: %+v, %v", got, err)
			}
			eventually(t, kind.name == "sqlite", func() bool {
				got, _, err := a.Authenticate(ctx, pub.Plaintext, now)
				return err == nil && got.Verified
			})

			// A rolled key's grace ends in the cache too.
			k, err := a.RollKey(ctx, ws.ID, cauri.KeyPublic, true, time.Minute, now)
			if err != nil || k == nil {
				t.Fatal(err)
			}
			if _, _, err := a.Authenticate(ctx, pub.Plaintext, now.Add(59*time.Second)); err != nil {
				t.Fatalf("in its grace: %v", err)
			}
			if _, _, err := a.Authenticate(ctx, pub.Plaintext, now.Add(time.Minute)); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Fatalf("after its grace: err = %v; want not found", err)
			}
		})
	}
}

// eventually waits up to 10 s for ok, or checks it once when atOnce.
func eventually(t *testing.T, atOnce bool, ok func() bool) {
	t.Helper()
	if atOnce {
		if !ok() {
			t.Fatal("not at once")
		}
		return
	}
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not within 10 s")
		}
	}
}
