package transfer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// setup is a verified workspace whose transfer cap is dailyCap, with a
// live pawaPay gateway for Senegal pointed at pawaPay's simulator over
// HTTP on loopback, and the service over a real store.
func setup(t *testing.T, st *store.Store, dailyCap int) (*Service, *cauri.Workspace, *pawapay.Simulator) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	ws := storetest.Workspace(t, st, "Boutique Adjoa", true, now)
	ws, err := st.SetTransferDailyCap(ctx, ws.ID, dailyCap, now)
	if err != nil {
		t.Fatal(err)
	}
	sim := &pawapay.Simulator{Token: "sim-token"}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	storetest.Gateway(t, st, ws, "pawapay", srv.URL, map[string]string{"api_token": "sim-token"}, now, "SN")
	failures := movement.NewFailures(slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	s := &Service{Store: st, Now: func() time.Time { return now }, CallbackURL: "http://127.0.0.1:1/callbacks", Failures: failures,
		Connectors: &movement.Connectors{Store: st, Build: connectors.New, Failures: failures}}
	return s, ws, sim
}

func params(amount int) Params {
	return Params{Amount: fmt.Sprint(amount), Country: "SN", Operator: "wave", Phone: "+221771234567", Currency: "XOF", RecipientName: "Awa"}
}

// TestCreate_DailyCap: concurrent creations never pass the cap together;
// the ones beyond it are 429 plafond_journalier and send nothing; a
// replay of a created one is answered by it, cap or not.
func TestCreate_DailyCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, sim := setup(t, st, 3)
		var mu sync.Mutex
		created, capped := 0, 0
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr, err := s.Validate(ctx, ws, params(1000+i))
				if err != nil {
					t.Error(err)
					return
				}
				_, _, err = s.Create(ctx, ws, tr, fmt.Sprintf("key-%d", i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case cauri.ErrorReason(err) == "plafond_journalier":
					capped++
				default:
					t.Errorf("create %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if created != 3 || capped != 5 || sim.Payouts() != 3 {
			t.Fatalf("created %d, capped %d, paid %d; want 3, 5, 3", created, capped, sim.Payouts())
		}
		tr, _ := s.Validate(ctx, ws, params(1000))
		list, err := s.List(ctx, ws.ID, "", 200)
		if err != nil || len(list) != 3 {
			t.Fatalf("list = %d, %v", len(list), err)
		}
		for i := range 8 { // the created ones' keys replay; the others' still meet the cap
			tr, _ = s.Validate(ctx, ws, params(1000+i))
			got, replayed, err := s.Create(ctx, ws, tr, fmt.Sprintf("key-%d", i))
			if err == nil && !replayed || err != nil && cauri.ErrorReason(err) != "plafond_journalier" {
				t.Errorf("again with key-%d: %v, replayed %v, %v", i, got, replayed, err)
			}
		}
		if sim.Payouts() != 3 {
			t.Fatalf("after replays, %d payouts; want 3", sim.Payouts())
		}
	})
}

func TestGetAndList(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _ := setup(t, st, 10)
		tr, err := s.Validate(ctx, ws, params(2500))
		if err != nil {
			t.Fatal(err)
		}
		if tr, _, err = s.Create(ctx, ws, tr, ""); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Get(ctx, ws.ID, tr.ID); err != nil || got.Amount != 2500 {
			t.Fatalf("get = %+v, %v", got, err)
		}
		for _, id := range []string{"tr_unknown", "not an id", ""} {
			if _, err := s.Get(ctx, ws.ID, id); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Errorf("get %q: %v; want %s", id, err, cauri.ENotFound)
			}
		}
		if _, err := s.Get(ctx, "ws_another", tr.ID); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Errorf("another workspace's transfer: %v; want %s", err, cauri.ENotFound)
		}
		for _, tc := range []struct {
			status cauri.TransferStatus
			limit  int
			want   int // -1: refused
		}{
			{"", 50, 1}, {cauri.TransferProcessing, 50, 1}, {cauri.TransferSucceeded, 50, 0},
			{"paid", 50, -1}, {"", 0, -1}, {"", 201, -1},
		} {
			list, err := s.List(ctx, ws.ID, tc.status, tc.limit)
			switch {
			case tc.want < 0 && cauri.ErrorCode(err) != cauri.EInvalid:
				t.Errorf("List(%q, %d): %v; want %s", tc.status, tc.limit, err, cauri.EInvalid)
			case tc.want >= 0 && (err != nil || len(list) != tc.want):
				t.Errorf("List(%q, %d) = %d, %v; want %d", tc.status, tc.limit, len(list), err, tc.want)
			}
		}
	})
}
