package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_Stats: the overview counts the period's sessions of one mode
// per day and currency, and their attempts per provider and operator.
func TestStore_Stats(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "pawapay", Name: "pawaPay", Collect: true, Enabled: true, CreatedAt: t0}
		if err := s.CreateGateway(ctx, g, map[string]string{"api_token": "t"}); err != nil {
			t.Fatal(err)
		}
		day1 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		day2 := day1.Add(24 * time.Hour)
		pay := func(at time.Time, live bool, amount int64, cur cauri.Currency, status cauri.SessionStatus, attempts ...[3]string) {
			t.Helper()
			sess := newSession(ws, amount)
			sess.Currency, sess.Livemode, sess.CreatedAt, sess.UpdatedAt = cur, live, at, at
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			for _, a := range attempts { // provider, operator, status
				if err := s.StartAttempt(ctx, &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: a[0],
					Reference: cauri.NewID("ref_"), Country: "SN", Operator: a[1], OperatorCode: "X", Phone: "+221771234567",
					Status: cauri.AttemptStatus(a[2]), CreatedAt: at, UpdatedAt: at}, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.UpdateSession(ctx, sess.ID, func(sess *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
				sess.Status = status
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		pay(day1.Add(time.Hour), true, 5000, "XOF", cauri.SessionSuccess, [3]string{"pawapay", "mtn", "succeeded"})
		pay(day1.Add(2*time.Hour), true, 3000, "XOF", cauri.SessionSuccess, [3]string{"paystack", "orange", "failed"}, [3]string{"pawapay", "orange", "succeeded"})
		pay(day1.Add(3*time.Hour), true, 2000, "XOF", cauri.SessionFailed, [3]string{"pawapay", "mtn", "failed"})
		pay(day1.Add(4*time.Hour), true, 1000, "XOF", cauri.SessionPending)
		pay(day1.Add(5*time.Hour), true, 100, "GHS", cauri.SessionSuccess)
		pay(day2.Add(23*time.Hour+59*time.Minute), true, 700, "XOF", cauri.SessionFailed)
		pay(day1.Add(time.Hour), false, 9999, "XOF", cauri.SessionSuccess)   // test data
		pay(day1.Add(-time.Hour), true, 8888, "XOF", cauri.SessionSuccess)   // before the period
		pay(day2.Add(24*time.Hour), true, 7777, "XOF", cauri.SessionSuccess) // after it

		// The counts are read as the payments left them (changes not
		// folded yet), then folded, then recounted from the payments.
		for _, step := range []struct {
			name string
			do   func() error
		}{
			{"unfolded", func() error { return nil }},
			{"folded", func() error { _, err := s.FoldRollups(ctx); return err }},
			{"rebuilt", func() error { _, err := s.RebuildRollups(ctx); return err }},
		} {
			if err := step.do(); err != nil {
				t.Fatal(err)
			}
			t.Log(step.name)
			st, err := s.Stats(ctx, ws.ID, true, day1, day2.Add(24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			want := map[time.Time]store.Tally{
				day1: {Succeeded: 2, Failed: 1, Total: 4, Volume: 8000},
				day2: {Failed: 1, Total: 1},
			}
			if len(st.Days["XOF"]) != 2 {
				t.Fatalf("XOF days = %v", st.Days["XOF"])
			}
			for day, w := range want {
				if got := *st.Days["XOF"][day]; got != w {
					t.Errorf("XOF %s = %+v; want %+v", day.Format("01-02"), got, w)
				}
			}
			if got := *st.Days["GHS"][day1]; got != (store.Tally{Succeeded: 1, Total: 1, Volume: 100}) {
				t.Errorf("GHS = %+v", got)
			}
			if st.Currencies["XOF"] != 5 || st.Currencies["GHS"] != 1 {
				t.Errorf("currencies = %v", st.Currencies)
			}
			if got := *st.Providers["XOF"]["pawapay"]; got != (store.Tally{Succeeded: 2, Failed: 1, Total: 3, Volume: 8000}) {
				t.Errorf("pawapay = %+v", got)
			}
			if got := *st.Providers["XOF"]["paystack"]; got != (store.Tally{Failed: 1, Total: 1}) {
				t.Errorf("paystack = %+v", got)
			}
			if got := *st.Operators["XOF"]["orange"]; got != (store.Tally{Succeeded: 1, Failed: 1, Total: 2, Volume: 3000}) {
				t.Errorf("orange = %+v", got)
			}
			if rate, ok := st.Operators["XOF"]["mtn"].SuccessRate(); !ok || rate != 0.5 {
				t.Errorf("mtn success rate = %v %v; want 0.5", rate, ok)
			}
		}
		test, err := s.Stats(ctx, ws.ID, false, day1, day2.Add(24*time.Hour))
		if err != nil || test.Currencies["XOF"] != 1 || test.Days["XOF"][day1].Volume != 9999 {
			t.Fatalf("test data stats = %+v, %v", test, err)
		}
	})
}

// TestStore_RollupsFollowThePayments: payments created, tried, settled,
// cancelled and retried by several writers at once, while two folds run,
// leave the overview's counts equal to a recount of the payments
// themselves, before and after the last fold.
func TestStore_RollupsFollowThePayments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "pawapay", Name: "pawaPay", Collect: true, Enabled: true, CreatedAt: t0}
		if err := s.CreateGateway(ctx, g, map[string]string{"api_token": "t"}); err != nil {
			t.Fatal(err)
		}
		day := t0.Truncate(24 * time.Hour)
		stats := func() *store.Stats {
			t.Helper()
			st, err := s.Stats(ctx, ws.ID, true, day.Add(-48*time.Hour), day.Add(24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		stop := make(chan struct{})
		var folds sync.WaitGroup
		for range 2 {
			folds.Add(1)
			go func() {
				defer folds.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.FoldRollups(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		var writers sync.WaitGroup
		for w := range 4 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for i := range 15 {
					sess := newSession(ws, int64(100*(w+1)+i))
					sess.Livemode = true
					sess.CreatedAt = day.Add(-time.Duration(i%3) * 24 * time.Hour) // three days
					sess.UpdatedAt = sess.CreatedAt
					if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
						t.Error(err)
						return
					}
					if i%5 == 4 { // cancelled before any try
						if _, err := s.CancelSession(ctx, sess.ID, func(sess *cauri.Session, _ bool) *cauri.Event {
							sess.Status = cauri.SessionCancelled
							return nil
						}); err != nil {
							t.Error(err)
						}
						continue
					}
					// A first try that fails the session, a second that
					// reopens it and ends as i says.
					for try, ends := range []cauri.AttemptStatus{cauri.AttemptFailed, [...]cauri.AttemptStatus{cauri.AttemptSucceeded, cauri.AttemptFailed, cauri.AttemptPending}[i%3]} {
						a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: []string{"pawapay", "paystack"}[try],
							Reference: cauri.NewID("ref_"), Country: "SN", Operator: []string{"orange", "wave"}[i%2], OperatorCode: "X",
							Phone: "+221771234567", Status: cauri.AttemptPending, CreatedAt: sess.CreatedAt, UpdatedAt: sess.CreatedAt}
						if err := s.StartAttempt(ctx, a, nil, func(*cauri.Session) *cauri.Event { return nil }); err != nil {
							t.Error(err)
							return
						}
						if ends == cauri.AttemptPending {
							continue
						}
						if _, err := s.UpdateAttempt(ctx, a.ID, func(sess *cauri.Session, a *cauri.PaymentAttempt) (*cauri.Event, error) {
							a.Status = ends
							sess.Status = map[cauri.AttemptStatus]cauri.SessionStatus{cauri.AttemptSucceeded: cauri.SessionSuccess, cauri.AttemptFailed: cauri.SessionFailed}[ends]
							return nil, nil
						}); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		writers.Wait()
		close(stop)
		folds.Wait()
		kept := stats()
		if _, err := s.FoldRollups(ctx); err != nil {
			t.Fatal(err)
		}
		folded := stats()
		if _, err := s.RebuildRollups(ctx); err != nil {
			t.Fatal(err)
		}
		// The table refilled at once has its statistics: the planner reads
		// a workspace's counts by the key, not every workspace's.
		if ok, err := s.HasStatistics(ctx, "payment_rollups"); err != nil || !ok {
			t.Errorf("no statistics of payment_rollups after the rebuild (%v)", err)
		}
		recounted := stats()
		if recounted.Currencies["XOF"] != 60 || len(recounted.Days["XOF"]) != 3 || len(recounted.Providers["XOF"]) != 2 {
			t.Fatalf("recounted: %d sessions over %d days, %d providers; want 60, 3, 2", recounted.Currencies["XOF"], len(recounted.Days["XOF"]), len(recounted.Providers["XOF"]))
		}
		for name, st := range map[string]*store.Stats{"kept": kept, "folded": folded} {
			if !reflect.DeepEqual(st, recounted) {
				t.Errorf("%s counts differ from a recount:\n%s\nwant\n%s", name, printStats(st), printStats(recounted))
			}
		}
	})
}

func printStats(st *store.Stats) string {
	var b strings.Builder
	for cur, days := range st.Days {
		for day, tl := range days {
			fmt.Fprintf(&b, "%s %s %+v\n", cur, day.Format("01-02"), *tl)
		}
		for p, tl := range st.Providers[cur] {
			fmt.Fprintf(&b, "%s %s %+v\n", cur, p, *tl)
		}
		for o, tl := range st.Operators[cur] {
			fmt.Fprintf(&b, "%s %s %+v\n", cur, o, *tl)
		}
	}
	return b.String()
}
