package store_test

import (
	"context"
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
// balance once per reference and never below zero.
func TestStore_Ledger(t *testing.T) {
	// covers is the service's rule for a settlement of amount XOF.
	covers := func(amount int64) func(int64) error {
		return func(balance int64) error { return cauri.CoversSettlement(balance, amount, "XOF") }
	}
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

		m, err := s.Settle(ctx, connect.ID, "XOF", 5000, "BANK-2026-001", t0, covers(5000))
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Settle(ctx, connect.ID, "XOF", 5000, "BANK-2026-001", t0.Add(time.Hour), covers(5000))
		if err != nil || again.ID != m.ID {
			t.Fatalf("settling again = %+v, %v; want the first movement", again, err)
		}
		if b, _ := s.Balance(ctx, connect.ID); b["XOF"] != want-5000 {
			t.Fatalf("balance after a settlement = %d; want %d", b["XOF"], want-5000)
		}
		for _, tc := range []struct {
			ws     string
			amount int64
			ref    string
			code   string
		}{
			{connect.ID, want, "BANK-2026-002", cauri.EPayment}, // more than the balance
			{connect.ID, 4000, "BANK-2026-001", cauri.EConflict},
			{connect.ID, 0, "BANK-2026-003", cauri.EInvalid},
			{connect.ID, 10, "", cauri.EInvalid},
			{plain.ID, 10, "BANK-2026-004", cauri.EForbidden},
			{cauri.NewID("ws_"), 10, "BANK-2026-005", cauri.ENotFound},
		} {
			if _, err := s.Settle(ctx, tc.ws, "XOF", tc.amount, tc.ref, t0, covers(tc.amount)); code(err) != tc.code {
				t.Errorf("Settle(%d, %q) err = %v; want %s", tc.amount, tc.ref, err, tc.code)
			}
		}
		if _, err := s.Settle(ctx, connect.ID, "XOF", want, "BANK-2026-002", t0, covers(want)); cauri.ErrorReason(err) != "solde_insuffisant" {
			t.Errorf("over the balance: reason %q; want solde_insuffisant", cauri.ErrorReason(err))
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
