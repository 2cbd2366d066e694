package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_RollKey: a rolled key works, and signs webhooks, until its
// grace period ends; the new one at once; a roll without grace stops the old
// key at once; each roll is audited without the key.
func TestStore_RollKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, keys := newWorkspace(t, s)
		oldSec, oldPub := keys[1], keys[0] // live secret, live public
		now := t0.Add(time.Hour)

		k, err := s.RollKey(store.WithActor(ctx, "user:usr_test"), ws.ID, cauri.KeySecret, true, 24*time.Hour, now)
		if err != nil {
			t.Fatal(err)
		}
		if k.Plaintext == oldSec.Plaintext || k.Kind != cauri.KeySecret || !k.Live {
			t.Fatalf("new key = %+v", k)
		}
		for _, tc := range []struct {
			name string
			key  string
			at   time.Time
			ok   bool
		}{
			{"NewKeyWorks", k.Plaintext, now, true},
			{"OldKeyWorksInGrace", oldSec.Plaintext, now.Add(24*time.Hour - time.Second), true},
			{"OldKeyStopsAfterGrace", oldSec.Plaintext, now.Add(24 * time.Hour), false},
			{"NewKeyStillWorks", k.Plaintext, now.Add(48 * time.Hour), true},
			{"OtherKindUntouched", oldPub.Plaintext, now.Add(48 * time.Hour), true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := s.Authenticate(ctx, tc.key, tc.at)
				if (err == nil) != tc.ok {
					t.Fatalf("Authenticate at %s: err = %v; want ok=%v", tc.at, err, tc.ok)
				}
			})
		}

		list, err := s.Keys(ctx, ws.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 5 || list[0].ID != k.ID || list[1].ID != oldSec.ID || list[1].ExpiresAt == nil ||
			!list[1].ExpiresAt.Equal(now.Add(24*time.Hour)) || list[0].ExpiresAt != nil || list[0].Last4 != k.Last4 {
			t.Fatalf("Keys = %d keys, first %+v, second %+v", len(list), list[0], list[1])
		}

		t.Run("RollAgainWithoutGraceStopsBoth", func(t *testing.T) {
			k2, err := s.RollKey(store.WithActor(ctx, "cli"), ws.ID, cauri.KeySecret, true, 0, now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			for _, old := range []string{oldSec.Plaintext, k.Plaintext} {
				if _, _, err := s.Authenticate(ctx, old, now.Add(time.Minute)); code(err) != cauri.ENotFound {
					t.Fatalf("a replaced key after a roll without grace: err = %v; want not_found", err)
				}
			}
			if _, _, err := s.Authenticate(ctx, k2.Plaintext, now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("Audited", func(t *testing.T) {
			log, err := s.AuditLog(ctx, ws.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != 3 || log[0].Actor != "cli" || log[1].Actor != "user:usr_test" || log[1].Action != "key.rolled" ||
				log[1].Detail["grace_seconds"] != float64(86400) || log[1].Detail["key"] != k.Masked() || log[2].Action != "workspace.created" {
				t.Fatalf("audit log = %+v", log)
			}
		})
		t.Run("UnknownWorkspace", func(t *testing.T) {
			for _, id := range []string{"ws_nope", cauri.NewID("ws_")} {
				_, err := s.RollKey(ctx, id, cauri.KeySecret, true, 0, now)
				if code(err) != cauri.ENotFound || !errors.Is(err, store.ErrNotFound) {
					t.Errorf("RollKey(%q) err = %v; want %s, store.ErrNotFound", id, err, cauri.ENotFound)
				}
			}
		})
	})
}
