package transfer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
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
		for _, tc := range []struct{ workspace, id, want string }{
			{ws.ID, "tr_unknown", "Transfer tr_unknown not found"},
			{ws.ID, "not an id", "Transfer not an id not found"},
			{ws.ID, "tr_\x00" + strings.Repeat("a", 70), `Transfer tr_\x00` + strings.Repeat("a", 60) + `... not found`},
			{ws.ID, cauri.NewID("tr_"), ""}, // well formed, unknown
			{"ws_another", tr.ID, "Transfer " + tr.ID + " not found"},
		} {
			_, err := s.Get(ctx, tc.workspace, tc.id)
			if got, want := cauri.ErrorCode(err), cauri.ENotFound; got != want {
				t.Errorf("get %q of %s: got %s (%v); want %s", tc.id, tc.workspace, got, err, want)
			}
			want := tc.want
			if want == "" {
				want = "Transfer " + tc.id + " not found"
			}
			if got := cauri.ErrorMessage(err); got != want {
				t.Errorf("get %q of %s: got %q; want %q", tc.id, tc.workspace, got, want)
			}
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

// TestIdempotencyKeyReused: a key used for one transfer, given with
// another request, is 422, worded for the create (a new request) and for
// the replay check before it (a new transfer); nothing is sent.
func TestIdempotencyKeyReused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, sim := setup(t, st, 10)
		first, _ := s.Validate(ctx, ws, params(1000))
		if _, _, err := s.Create(ctx, ws, first, "payout-1"); err != nil {
			t.Fatal(err)
		}
		other, _ := s.Validate(ctx, ws, params(2000))
		check := func(name string, err error, what string) {
			t.Helper()
			if got, want := cauri.ErrorCode(err), cauri.EUnprocessable; got != want {
				t.Fatalf("%s: got %s (%v); want %s", name, got, err, want)
			}
			want := `Idempotency-Key "payout-1" was already used with a different request; use a new key for a new ` + what
			if got := cauri.ErrorMessage(err); got != want {
				t.Fatalf("%s: got %q; want %q", name, got, want)
			}
		}
		_, _, err := s.Create(ctx, ws, other, "payout-1")
		check("Create", err, "request")
		_, err = s.ReplayRequest(ctx, ws, "payout-1", params(2000))
		check("ReplayRequest", err, "transfer")
		if got, err := s.ReplayRequest(ctx, ws, "payout-1", params(1000)); err != nil || got == nil || got.ID != first.ID {
			t.Fatalf("Replay of the first request = %v, %v; want its transfer", got, err)
		}
		if got, want := sim.Payouts(), 1; got != want {
			t.Fatalf("payouts: got %d; want %d", got, want)
		}
	})
}

// TestSetDailyCap: a negative cap is refused and changes nothing; 0 and
// more are set (0: no transfer at all).
func TestSetDailyCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _ := setup(t, st, 10)
		_, err := s.SetDailyCap(ctx, ws.ID, -1)
		if got, want := cauri.ErrorCode(err), cauri.EInvalid; got != want {
			t.Fatalf("a negative cap: got %s (%v); want %s", got, err, want)
		}
		if got, want := cauri.ErrorMessage(err), "the daily cap must be 0 or more"; got != want {
			t.Fatalf("a negative cap: got %q; want %q", got, want)
		}
		if got, _ := st.Workspace(ctx, ws.ID); got.TransferDailyCap != 10 {
			t.Fatalf("cap after a refused change: got %d; want 10", got.TransferDailyCap)
		}
		got, err := s.SetDailyCap(ctx, ws.ID, 0)
		if err != nil || got.TransferDailyCap != 0 {
			t.Fatalf("cap 0: got %+v, %v; want 0", got, err)
		}
		tr, _ := s.Validate(ctx, ws, params(1000))
		if _, _, err := s.Create(ctx, ws, tr, ""); cauri.ErrorReason(err) != "plafond_journalier" {
			t.Fatalf("a transfer under a cap of 0: got %v; want plafond_journalier", err)
		}
		if _, err := s.SetDailyCap(ctx, "ws_nope", 5); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("an unknown workspace: got %v; want %s", err, cauri.ENotFound)
		}
	})
}
