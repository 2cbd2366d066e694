package reports

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestOverviewAndBalance(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 25, 18, 30, 0, 0, time.UTC)
		s := &Service{Store: st, Now: func() time.Time { return now }}
		ws := storetest.Workspace(t, st, "Boutique Adjoa", false, now)
		for _, days := range []int{1, 7, 30} {
			stats, since, err := s.Overview(ctx, ws.ID, false, days)
			if err != nil || stats == nil {
				t.Fatalf("overview of %d days: %v", days, err)
			}
			// The period ends today (GMT) and holds days days, today included.
			if want := time.Date(2026, 11, 26-days, 0, 0, 0, 0, time.UTC); !since.Equal(want) {
				t.Errorf("%d days start %s; want %s", days, since, want)
			}
		}
		if _, err := s.Balance(ctx, ws); cauri.ErrorCode(err) != cauri.EForbidden {
			t.Fatalf("a balance of a workspace that is not Connect: %v; want %s", err, cauri.EForbidden)
		}
		ws.Connect = true
		if b, err := s.Balance(ctx, ws); err != nil || len(b) != 0 {
			t.Fatalf("a new Connect workspace's balance = %v, %v; want empty", b, err)
		}
		n := 0
		if err := s.Transactions(ctx, ws.ID, false, store.ExportFilter{}, func(store.ExportRow) error { n++; return nil }); err != nil || n != 0 {
			t.Fatalf("transactions of a new workspace = %d, %v", n, err)
		}
	})
}

// TestSettle: a settlement needs a positive amount and a reference, a
// Connect workspace and the balance to cover it; its reference records it
// once, and again only with the same amount.
func TestSettle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 25, 18, 30, 0, 0, time.UTC)
		s := &Service{Store: st, Now: func() time.Time { return now }}
		connect := storetest.Workspace(t, st, "Boutique Adjoa", true, now)
		plain := storetest.Workspace(t, st, "Kofi Store", true, now)
		if _, err := st.SetConnect(ctx, connect.ID, true, now); err != nil {
			t.Fatal(err)
		}
		// A live payment of 10000 XOF succeeds: the balance.
		sess := &cauri.Session{ID: cauri.NewID("cs_"), WorkspaceID: connect.ID, Livemode: true, Status: cauri.SessionPending, Amount: 10000,
			Currency: "XOF", Metadata: map[string]string{}, CreatedAt: now, UpdatedAt: now}
		if _, _, err := st.CreateSession(ctx, sess, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
			x.Status = cauri.SessionSuccess
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}

		m, err := s.Settle(ctx, connect.ID, "XOF", 4000, "  BANK-2026-001 ")
		if err != nil || m.Amount != 4000 || m.Description != "settlement BANK-2026-001" || !m.CreatedAt.Equal(now) {
			t.Fatalf("settle = %+v, %v; want 4000 XOF with the reference trimmed", m, err)
		}
		again, err := s.Settle(ctx, connect.ID, "XOF", 4000, "BANK-2026-001")
		if err != nil || again.ID != m.ID {
			t.Fatalf("settle again = %+v, %v; want the first movement %s", again, err, m.ID)
		}
		for _, tc := range []struct {
			name          string
			workspace     string
			amount        int64
			reference     string
			code, message string
		}{
			{"ErrAmountZero", connect.ID, 0, "BANK-2026-002", cauri.EInvalid, "the amount must be positive"},
			{"ErrAmountNegative", connect.ID, -5, "BANK-2026-002", cauri.EInvalid, "the amount must be positive"},
			{"ErrReferenceEmpty", connect.ID, 10, "  ", cauri.EInvalid,
				"a settlement needs its reference (the payout's, at the bank or the operator), at most 200 characters"},
			{"ErrReferenceTooLong", connect.ID, 10, strings.Repeat("x", 201), cauri.EInvalid,
				"a settlement needs its reference (the payout's, at the bank or the operator), at most 200 characters"},
			{"ErrReferenceControl", connect.ID, 10, "BANK\x01", cauri.EInvalid,
				"a settlement needs its reference (the payout's, at the bank or the operator), at most 200 characters"},
			{"ErrNotConnect", plain.ID, 10, "BANK-2026-003", cauri.EForbidden,
				"Workspace " + plain.ID + " is not a Connect workspace: the service holds no money for it"},
			{"ErrOtherAmount", connect.ID, 3000, "BANK-2026-001", cauri.EConflict, "Settlement BANK-2026-001 was recorded with another amount (4000 XOF)"},
			{"ErrOtherCurrency", connect.ID, 4000, "BANK-2026-001", cauri.EConflict, "Settlement BANK-2026-001 was recorded with another amount (4000 XOF)"},
			{"ErrBalance", connect.ID, 6001, "BANK-2026-004", cauri.EPayment, "The balance is 6000 XOF; it cannot settle 6001"},
			{"ErrWorkspace", "ws_nope", 10, "BANK-2026-005", cauri.ENotFound, "Workspace ws_nope not found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				cur := cauri.Currency("XOF")
				if tc.name == "ErrOtherCurrency" {
					cur = "GHS"
				}
				_, err := s.Settle(ctx, tc.workspace, cur, tc.amount, tc.reference)
				if got := cauri.ErrorCode(err); got != tc.code {
					t.Fatalf("got %s (%v); want %s", got, err, tc.code)
				}
				if got := cauri.ErrorMessage(err); got != tc.message {
					t.Fatalf("got %q; want %q", got, tc.message)
				}
			})
		}
		if b, err := st.Balance(ctx, connect.ID); err != nil || b["XOF"] != 6000 {
			t.Fatalf("balance = %v, %v; want 6000 XOF (one settlement of 4000)", b, err)
		}
		if m, err := s.Settle(ctx, connect.ID, "XOF", 6000, "BANK-2026-006"); err != nil || m.Amount != 6000 {
			t.Fatalf("settling the whole balance = %+v, %v", m, err)
		}
	})
}
