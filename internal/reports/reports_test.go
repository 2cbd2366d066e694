package reports

import (
	"context"
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
