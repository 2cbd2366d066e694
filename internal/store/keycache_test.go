package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_KeyCache: with the cache on, a server serves keys from memory,
// and a change made by another store on the same database (another node,
// or the CLI on the server's SQLite file) has cleared it when the change
// returns. On PostgreSQL the nodes read the epoch hourly here, so only the
// notices can clear their caches; on SQLite the CLI waits for the server's
// read of the epoch.
func TestStore_KeyCache(t *testing.T) {
	for _, kind := range []struct {
		name  string
		url   func(testing.TB) string
		every time.Duration
	}{
		{"sqlite", storetest.SQLiteURL, time.Hour}, // the CLI's nudge alone clears the server's cache
		{"postgres", storetest.PostgresURL, time.Hour},
	} {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			u := kind.url(t)
			server, other := storetest.Open(t, u), storetest.Open(t, u)
			if err := server.CacheKeys(ctx, kind.every, func(err error) { t.Error(err) }); err != nil {
				t.Fatal(err)
			}
			if kind.name == "postgres" { // another node
				if err := other.CacheKeys(ctx, kind.every, func(err error) { t.Error(err) }); err != nil {
					t.Fatal(err)
				}
			} else { // the CLI
				other.AwaitKeyCaches, other.NudgeKeyCaches = true, server.RecheckKeys
			}
			ws, keys := newWorkspace(t, other)
			sec := keys[1] // live secret
			now := t0.Add(time.Hour)
			for _, s := range []*store.Store{server, other} {
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
			if got, _, err := server.Authenticate(ctx, sec.Plaintext, now); err != nil || got.Name != ws.Name {
				t.Fatalf("cached Authenticate = %+v, %v; want the name it had", got, err)
			}

			// A roll without grace by the other store: both refuse the old
			// key as soon as it returns.
			if _, err := other.RollKey(ctx, ws.ID, cauri.KeySecret, true, 0, now); err != nil {
				t.Fatal(err)
			}
			for name, s := range map[string]*store.Store{"server": server, "other": other} {
				if _, _, err := s.Authenticate(ctx, sec.Plaintext, now); cauri.ErrorCode(err) != cauri.ENotFound {
					t.Fatalf("%s after the roll: err = %v; want not found", name, err)
				}
			}

			// The workspace verified by the server: the server sees it at
			// once, and so does the other node.
			pub := keys[0]
			if got, _, err := other.Authenticate(ctx, pub.Plaintext, now); err != nil || got.Verified {
				t.Fatalf("before verification: %+v, %v", got, err)
			}
			if _, err := server.VerifyWorkspace(ctx, ws.ID, now); err != nil {
				t.Fatal(err)
			}
			for name, s := range map[string]*store.Store{"server": server, "other": other} {
				if got, _, err := s.Authenticate(ctx, pub.Plaintext, now); err != nil || !got.Verified {
					t.Fatalf("%s after verifying: %+v, %v", name, got, err)
				}
			}

			// A rolled key's grace ends in the cache too.
			if _, err := server.RollKey(ctx, ws.ID, cauri.KeyPublic, true, time.Minute, now); err != nil {
				t.Fatal(err)
			}
			if _, _, err := server.Authenticate(ctx, pub.Plaintext, now.Add(59*time.Second)); err != nil {
				t.Fatalf("in its grace: %v", err)
			}
			if _, _, err := server.Authenticate(ctx, pub.Plaintext, now.Add(time.Minute)); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Fatalf("after its grace: err = %v; want not found", err)
			}
		})
	}
}
