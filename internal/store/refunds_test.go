package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// paidSession stores a live SUCCESS session of amount.
func paidSession(t *testing.T, s *store.Store, ws *cauri.Workspace, amount int64) *cauri.Session {
	t.Helper()
	sess := newSession(ws, amount)
	sess.Livemode, sess.Status, sess.Provider = true, cauri.SessionSuccess, "pawapay"
	if _, _, err := s.CreateSession(context.Background(), sess, nil); err != nil {
		t.Fatal(err)
	}
	return sess
}

func newRefund(sess *cauri.Session, amount int64, at time.Time) *cauri.Refund {
	return &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: sess.WorkspaceID, Livemode: sess.Livemode, SessionID: sess.ID,
		GatewayID: "gw_x", Provider: "pawapay", Reference: cauri.NewUUID(), Status: cauri.RefundPending, Amount: amount,
		Currency: sess.Currency, Method: cauri.RefundByAggregator, CreatedAt: at, UpdatedAt: at}
}

// admit is the domain's rule, as the refund service passes it.
func admit(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error {
	return cauri.AdmitRefund(r, sess, refunds)
}

// end is the refund service's end of a refund, with the domain's rule.
func end(status cauri.RefundStatus, at time.Time) func(*cauri.Refund, *cauri.Session, []*cauri.Refund) (*cauri.Event, error) {
	return func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) (*cauri.Event, error) {
		return cauri.EndRefund(r, sess, refunds, status, "rejected", "refused", at, "https://pay.example")
	}
}

func TestStore_CreateRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)

		t.Run("OK, the rest by default", func(t *testing.T) {
			sess := paidSession(t, s, ws, 10000)
			first := newRefund(sess, 4000, t0)
			if _, err := s.CreateRefund(ctx, first, nil, admit); err != nil {
				t.Fatal(err)
			}
			rest := newRefund(sess, 0, t0.Add(time.Second))
			if _, err := s.CreateRefund(ctx, rest, nil, admit); err != nil {
				t.Fatal(err)
			}
			got, err := s.Refund(ctx, ws.ID, rest.ID)
			if err != nil || got.Amount != 6000 || got.Status != cauri.RefundPending || got.Reference != rest.Reference {
				t.Fatalf("Refund = %+v, %v; want 6000 pending", got, err)
			}
			_, err = s.CreateRefund(ctx, newRefund(sess, 1, t0), nil, admit)
			if cauri.ErrorReason(err) != "refund_exceeds_payment" {
				t.Fatalf("a refund beyond the amount = %v; want refund_exceeds_payment", err)
			}
			list, _ := s.SessionRefunds(ctx, sess.ID)
			if len(list) != 2 {
				t.Errorf("%d refunds stored; want 2 (the refused one written nothing)", len(list))
			}
		})

		t.Run("ErrNotRefundable", func(t *testing.T) {
			sess := newSession(ws, 1000)
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			_, err := s.CreateRefund(ctx, newRefund(sess, 0, t0), nil, admit)
			if cauri.ErrorReason(err) != "not_refundable" {
				t.Fatalf("refund of a pending session = %v; want not_refundable", err)
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			sess := paidSession(t, s, ws, 1000)
			r := newRefund(sess, 0, t0)
			r.SessionID = cauri.NewID("cs_")
			if _, err := s.CreateRefund(ctx, r, nil, admit); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Fatalf("refund of no session = %v; want not found", err)
			}
		})

		t.Run("Idempotency", func(t *testing.T) {
			sess := paidSession(t, s, ws, 1000)
			idem := &store.Idempotency{Key: "refund-1", Fingerprint: "fp"}
			r := newRefund(sess, 300, t0)
			if prev, err := s.CreateRefund(ctx, r, idem, admit); err != nil || prev != "" {
				t.Fatalf("first = %q, %v", prev, err)
			}
			again := newRefund(sess, 300, t0)
			prev, err := s.CreateRefund(ctx, again, idem, admit)
			if err != nil || prev != r.ID {
				t.Fatalf("replay = %q, %v; want %s", prev, err, r.ID)
			}
			if got, err := s.RefundByIdempotencyKey(ctx, ws.ID, true, idem, t0); err != nil || got == nil || got.ID != r.ID {
				t.Fatalf("RefundByIdempotencyKey = %v, %v; want %s", got, err, r.ID)
			}
			other := &store.Idempotency{Key: "refund-1", Fingerprint: "other"}
			if _, err := s.CreateRefund(ctx, newRefund(sess, 300, t0), other, admit); !errors.Is(err, store.ErrIdempotencyMismatch) {
				t.Fatalf("another request with the key = %v; want ErrIdempotencyMismatch", err)
			}
			if _, err := s.RefundByIdempotencyKey(ctx, ws.ID, true, other, t0); !errors.Is(err, store.ErrIdempotencyMismatch) {
				t.Fatalf("RefundByIdempotencyKey with another request = %v; want ErrIdempotencyMismatch", err)
			}
			if got, err := s.RefundByIdempotencyKey(ctx, ws.ID, false, idem, t0); err != nil || got != nil {
				t.Fatalf("the key in the other mode = %v, %v; want none", got, err)
			}
			list, _ := s.SessionRefunds(ctx, sess.ID)
			if len(list) != 1 {
				t.Errorf("%d refunds; want 1", len(list))
			}
		})
	})
}

// TestStore_CreateRefund_Concurrent: ten requests at once, each for 30 %
// of one payment, from as many connections (as nodes would): at most three
// are admitted, and never more than the amount is held by refunds.
func TestStore_CreateRefund_Concurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		sess := paidSession(t, s, ws, 10000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, exceeded := 0, 0
		start := make(chan struct{})
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// The rule takes its time: without the session's lock the
				// others would read the same refunds meanwhile.
				slow := func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error {
					time.Sleep(20 * time.Millisecond)
					return admit(r, sess, refunds)
				}
				_, err := s.CreateRefund(ctx, newRefund(sess, 3000, t0.Add(time.Duration(i)*time.Millisecond)), nil, slow)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					admitted++
				case cauri.ErrorReason(err) == "refund_exceeds_payment":
					exceeded++
				default:
					t.Errorf("refund: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if admitted != 3 || exceeded != 7 {
			t.Errorf("admitted %d, refused %d; want 3 and 7", admitted, exceeded)
		}
		list, _ := s.SessionRefunds(ctx, sess.ID)
		var held int64
		for _, r := range list {
			held += r.Amount
		}
		if len(list) != 3 || held != 9000 {
			t.Errorf("%d refunds holding %d; want 3 holding 9000", len(list), held)
		}
	})
}

func TestStore_FinishRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		sess := paidSession(t, s, ws, 10000)
		partial, rest := newRefund(sess, 4000, t0), newRefund(sess, 0, t0.Add(time.Second))
		for _, r := range []*cauri.Refund{partial, rest} {
			if _, err := s.CreateRefund(ctx, r, nil, admit); err != nil {
				t.Fatal(err)
			}
		}
		events := func() []*cauri.Event {
			evs, err := s.SessionEvents(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}

		// A failed refund: payment.updated, the session unchanged.
		r, changed, err := s.FinishRefund(ctx, rest.ID, end(cauri.RefundFailed, t0.Add(time.Minute)))
		if err != nil || !changed || r.Status != cauri.RefundFailed || r.FailureCode != "rejected" || r.CompletedAt == nil {
			t.Fatalf("FinishRefund(failed) = %+v, %v, %v", r, changed, err)
		}
		if got, _ := s.Session(ctx, sess.ID); got.Status != cauri.SessionSuccess {
			t.Fatalf("session = %s; want SUCCESS", got.Status)
		}
		// Once ended, nothing changes it: fn is not called.
		if _, changed, err := s.FinishRefund(ctx, rest.ID, func(*cauri.Refund, *cauri.Session, []*cauri.Refund) (*cauri.Event, error) {
			t.Error("fn called for an ended refund")
			return nil, nil
		}); err != nil || changed {
			t.Fatalf("FinishRefund again = %v, %v", changed, err)
		}
		// A partial refund succeeds: still SUCCESS, one more event.
		if _, changed, err := s.FinishRefund(ctx, partial.ID, end(cauri.RefundSucceeded, t0.Add(2*time.Minute))); err != nil || !changed {
			t.Fatal(changed, err)
		}
		if got, _ := s.Session(ctx, sess.ID); got.Status != cauri.SessionSuccess {
			t.Fatalf("session = %s after a partial refund; want SUCCESS", got.Status)
		}
		// The rest, asked again, succeeds: REFUNDED.
		last := newRefund(sess, 0, t0.Add(3*time.Minute))
		if _, err := s.CreateRefund(ctx, last, nil, admit); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.FinishRefund(ctx, last.ID, end(cauri.RefundSucceeded, t0.Add(4*time.Minute))); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Session(ctx, sess.ID)
		if got.Status != cauri.SessionRefunded || !got.UpdatedAt.Equal(t0.Add(4*time.Minute)) {
			t.Fatalf("session = %s at %v; want REFUNDED", got.Status, got.UpdatedAt)
		}
		evs := events()
		if len(evs) != 3 {
			t.Fatalf("%d events; want 3 (every end)", len(evs))
		}
		for _, ev := range evs {
			if ev.Type != cauri.EventPaymentUpdated {
				t.Errorf("event %s; want payment.updated", ev.Type)
			}
		}
		var data struct {
			Status         string      `json:"status"`
			AmountRefunded json.Number `json:"amount_refunded"`
			Refund         struct {
				ID string `json:"id"`
			} `json:"refund"`
		}
		if err := json.Unmarshal(evs[2].Data, &data); err != nil || data.Status != "REFUNDED" || data.AmountRefunded != "10000" || data.Refund.ID != last.ID {
			t.Errorf("last event's data = %s (%v)", evs[2].Data, err)
		}
		// The overview counts the session as REFUNDED, not SUCCESS.
		st, err := s.Stats(ctx, ws.ID, true, t0.Add(-time.Hour), t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		day := st.Days["XOF"][t0.Truncate(24*time.Hour)]
		if day == nil || day.Total != 1 || day.Succeeded != 0 {
			t.Errorf("overview's day = %+v; want 1 session, none SUCCESS", day)
		}
		if _, _, err := s.FinishRefund(ctx, cauri.NewID("re_"), end(cauri.RefundSucceeded, t0)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("FinishRefund of no refund = %v; want ErrNotFound", err)
		}
	})
}

func TestStore_Refunds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		a, b := paidSession(t, s, ws, 10000), paidSession(t, s, ws, 10000)
		var made []*cauri.Refund // oldest first
		for i := range 5 {
			sess := a
			if i%2 == 1 {
				sess = b
			}
			r := newRefund(sess, 1000, t0.Add(time.Duration(i/2)*time.Second)) // ties in time
			if _, err := s.CreateRefund(ctx, r, nil, admit); err != nil {
				t.Fatal(err)
			}
			made = append(made, r)
		}
		if _, _, err := s.FinishRefund(ctx, made[0].ID, end(cauri.RefundSucceeded, t0)); err != nil {
			t.Fatal(err)
		}
		ids := func(f store.RefundFilter) []string {
			t.Helper()
			list, err := s.Refunds(ctx, ws.ID, true, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range list {
				out = append(out, r.ID)
			}
			return out
		}
		// Newest first, a page at a time, the whole list once.
		var all []string
		after := ""
		for {
			page := ids(store.RefundFilter{After: after, Limit: 2})
			if len(page) == 0 {
				break
			}
			all = append(all, page...)
			after = page[len(page)-1]
		}
		if len(all) != 5 {
			t.Fatalf("pages = %v; want 5 refunds", all)
		}
		for i := 1; i < len(all); i++ {
			prev, _ := s.Refund(ctx, ws.ID, all[i-1])
			cur, _ := s.Refund(ctx, ws.ID, all[i])
			if cur.CreatedAt.After(prev.CreatedAt) || cur.CreatedAt.Equal(prev.CreatedAt) && cur.ID > prev.ID {
				t.Errorf("%s before %s: not newest first", prev.ID, cur.ID)
			}
		}
		if got := ids(store.RefundFilter{SessionID: b.ID, Limit: 50}); len(got) != 2 {
			t.Errorf("refunds of b = %v; want 2", got)
		}
		if got := ids(store.RefundFilter{Status: cauri.RefundSucceeded, Limit: 50}); len(got) != 1 || got[0] != made[0].ID {
			t.Errorf("succeeded = %v; want %s", got, made[0].ID)
		}
		if got := ids(store.RefundFilter{Limit: 50}); len(got) != 5 {
			t.Errorf("all = %v", got)
		}
		if list, err := s.Refunds(ctx, ws.ID, false, store.RefundFilter{Limit: 50}); err != nil || len(list) != 0 {
			t.Errorf("test refunds = %v, %v; want none", list, err)
		}
		if _, err := s.Refunds(ctx, ws.ID, true, store.RefundFilter{After: cauri.NewID("re_"), Limit: 5}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a page after no refund = %v; want ErrNotFound", err)
		}
		other, _ := newWorkspace(t, s)
		if _, err := s.Refund(ctx, other.ID, made[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another workspace's refund = %v; want ErrNotFound", err)
		}
		if got, err := s.RefundByReference(ctx, "gw_x", made[1].Reference); err != nil || got.ID != made[1].ID {
			t.Errorf("RefundByReference = %v, %v", got, err)
		}
		if _, err := s.RefundByReference(ctx, "gw_y", made[1].Reference); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RefundByReference at another gateway = %v; want ErrNotFound", err)
		}
	})
}

// TestStore_RefundLifecycle: orphans, their adoption, the checks' claims,
// the due list and the transfer link, as the reconciler uses them.
func TestStore_RefundLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		sess := paidSession(t, s, ws, 10000)
		r := newRefund(sess, 1000, t0)
		if _, err := s.CreateRefund(ctx, r, nil, admit); err != nil {
			t.Fatal(err)
		}
		orphans, err := s.OrphanRefunds(ctx, t0.Add(time.Minute), 10)
		if err != nil || len(orphans) != 1 {
			t.Fatalf("orphans = %v, %v; want 1", orphans, err)
		}
		if ok, err := s.ClaimRefundCheck(ctx, r.ID, t0, time.Second); err != nil || ok {
			t.Fatalf("a check before the call returned = %v, %v; want none", ok, err)
		}
		if won, err := s.AdoptOrphanRefund(ctx, r.ID, t0.Add(time.Minute)); err != nil || !won {
			t.Fatalf("adopt = %v, %v", won, err)
		}
		if won, _ := s.AdoptOrphanRefund(ctx, r.ID, t0.Add(time.Minute)); won {
			t.Fatal("adopted twice")
		}
		if orphans, _ := s.OrphanRefunds(ctx, t0.Add(time.Hour), 10); len(orphans) != 0 {
			t.Fatalf("orphans after adoption = %v", orphans)
		}
		if err := s.MarkRefundInitiated(ctx, r.ID, t0.Add(time.Minute), "PREF", "tr_1"); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Refund(ctx, ws.ID, r.ID)
		if got.ProviderRef != "PREF" || got.TransferID != "tr_1" || got.InitiatedAt == nil {
			t.Fatalf("marked = %+v", got)
		}
		if byTr, err := s.RefundByTransfer(ctx, "tr_1"); err != nil || byTr.ID != r.ID {
			t.Fatalf("RefundByTransfer = %v, %v", byTr, err)
		}
		due, err := s.DueRefunds(ctx, t0.Add(time.Hour), 8*time.Second, time.Hour, 10)
		if err != nil || len(due) != 1 {
			t.Fatalf("due = %v, %v; want 1", due, err)
		}
		if ok, err := s.ClaimRefundCheck(ctx, r.ID, t0.Add(time.Hour), time.Second); err != nil || !ok {
			t.Fatalf("claim = %v, %v", ok, err)
		}
		if ok, _ := s.ClaimRefundCheck(ctx, r.ID, t0.Add(time.Hour), time.Second); ok {
			t.Fatal("claimed twice within a second")
		}
		if ok, err := s.ClaimRefundCallbackCheck(ctx, r.ID, t0.Add(time.Hour), time.Second); err != nil || !ok {
			t.Fatalf("callback claim = %v, %v", ok, err)
		}
		if _, _, err := s.FinishRefund(ctx, r.ID, end(cauri.RefundSucceeded, t0.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
		if due, _ := s.DueRefunds(ctx, t0.Add(48*time.Hour), 8*time.Second, time.Hour, 10); len(due) != 0 {
			t.Fatalf("due after the end = %v", due)
		}
	})
}
