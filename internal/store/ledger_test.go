package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_Ledger: every live payment of a Connect workspace that
// succeeds credits its balance once, even when many succeed at once and
// when a success is recorded twice; other workspaces and test payments
// move nothing; the entries always sum to zero; a settlement lowers the
// balance once per reference, as its decide admits it, given the facts
// read under the workspace's lock.
func TestStore_Ledger(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		connect, _ := newWorkspace(t, s)
		plain, _ := newWorkspace(t, s)
		if _, err := s.SetConnect(ctx, connect.ID, true, t0); err != nil {
			t.Fatal(err)
		}
		succeed := func(ws *cauri.Workspace, amount int64, live bool) *cauri.Session {
			sess := newSession(ws, amount)
			sess.Livemode = live
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Error(err)
				return sess
			}
			for range 2 { // a success recorded twice (a callback and a status read)
				if _, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
					x.Status, x.UpdatedAt = cauri.SessionSuccess, t0
					return nil, nil
				}); err != nil {
					t.Error(err)
				}
			}
			return sess
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() { defer wg.Done(); succeed(connect, int64(1000+i), true) }()
		}
		wg.Wait()
		succeed(connect, 777, false) // test data
		succeed(plain, 888, true)    // not Connect
		want := int64(20*1000 + 190)
		if b, err := s.Balance(ctx, connect.ID); err != nil || b["XOF"] != want || len(b) != 1 {
			t.Fatalf("balance = %v, %v; want %d XOF", b, err, want)
		}
		if b, _ := s.Balance(ctx, plain.ID); len(b) != 0 {
			t.Fatalf("a workspace that is not Connect has a balance: %v", b)
		}
		checkSums := func() {
			t.Helper()
			sums, unbalanced, err := s.LedgerSums(ctx)
			if err != nil || unbalanced != 0 || sums["XOF"] != 0 {
				t.Fatalf("ledger sums = %v, %d unbalanced movements, %v; want 0", sums, unbalanced, err)
			}
		}
		checkSums()

		var seen []store.Settlement
		admit := func(f store.Settlement) error { seen = append(seen, f); return nil }
		m, err := s.Settle(ctx, connect.ID, "XOF", 5000, "BANK-2026-001", t0, admit)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Settle(ctx, connect.ID, "XOF", 5000, "BANK-2026-001", t0.Add(time.Hour), admit)
		if err != nil || again.ID != m.ID || !again.CreatedAt.Equal(m.CreatedAt) || again.Amount != 5000 || again.Currency != "XOF" {
			t.Fatalf("settling again = %+v, %v; want the first movement %+v", again, err, m)
		}
		if b, _ := s.Balance(ctx, connect.ID); b["XOF"] != want-5000 {
			t.Fatalf("balance after a settlement = %d; want %d", b["XOF"], want-5000)
		}
		if len(seen) != 2 || !seen[0].Connect || seen[0].Balance != want || seen[0].Previous != nil ||
			seen[1].Balance != want-5000 || seen[1].Previous == nil || seen[1].Previous.ID != m.ID || seen[1].Previous.Amount != 5000 {
			t.Fatalf("decide saw %+v; want the balance %d, then the first movement and the balance after it", seen, want)
		}
		refused := errors.New("refused")
		if _, err := s.Settle(ctx, connect.ID, "XOF", 10, "BANK-2026-002", t0, func(store.Settlement) error { return refused }); !errors.Is(err, refused) {
			t.Fatalf("a settlement decide refuses: err = %v; want %v", err, refused)
		}
		seen = nil
		if _, err := s.Settle(ctx, connect.ID, "XOF", 10, "BANK-2026-002", t0, admit); err != nil || seen[0].Previous != nil || seen[0].Balance != want-5000 {
			t.Fatalf("after a refusal, decide saw %+v (%v); want nothing recorded", seen, err)
		}
		seen = nil
		if _, err := s.Settle(ctx, plain.ID, "XOF", 10, "BANK-2026-003", t0, func(f store.Settlement) error { seen = append(seen, f); return refused }); !errors.Is(err, refused) || seen[0].Connect {
			t.Fatalf("a workspace that is not Connect: decide saw %+v (%v); want Connect false", seen, err)
		}
		seen = nil
		if _, err := s.Settle(ctx, cauri.NewID("ws_"), "XOF", 10, "BANK-2026-004", t0, admit); code(err) != cauri.ENotFound || len(seen) != 0 {
			t.Fatalf("an unknown workspace: err = %v, decide called %d times; want not_found, never", err, len(seen))
		}
		log, _ := s.AuditLog(ctx, connect.ID, 10)
		settled := 0
		for _, a := range log {
			if a.Action == "ledger.settled" {
				settled++
			}
		}
		if settled != 2 {
			t.Fatalf("audit log = %+v; got %d settlements; want the 2 recorded", log, settled)
		}
		checkSums()
	})
}

// TestStore_ClaimJob: of nodes asking at once, one runs a due job; it is
// due again a period later.
func TestStore_ClaimJob(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var mu sync.Mutex
		var wg sync.WaitGroup
		won := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.ClaimJob(ctx, "purge", t0, 24*time.Hour)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d nodes ran the job; want 1", won)
		}
		if ok, _ := s.ClaimJob(ctx, "purge", t0.Add(23*time.Hour), 24*time.Hour); ok {
			t.Fatal("ran again before its period")
		}
		if ok, _ := s.ClaimJob(ctx, "purge", t0.Add(24*time.Hour), 24*time.Hour); !ok {
			t.Fatal("not run again after its period")
		}
	})
}
