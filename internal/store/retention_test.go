package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_PurgeEventLog: the webhook log older than the retention goes,
// a batch at a time, in both modes, but for an event whose delivery is
// still retried; newer events, and every payment, stay.
func TestStore_PurgeEventLog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		defer store.SetPurgeBatch(2)()
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		if _, err := s.UpdateWebhookConfig(ctx, ws.ID, func(c *cauri.WebhookConfig) error {
			c.URL, c.TestURL = "https://shop.example/hook", "https://shop.example/test"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		settle := func(live bool, at time.Time) *cauri.Session {
			t.Helper()
			sess := newSession(ws, 100)
			sess.Livemode, sess.CreatedAt, sess.UpdatedAt = live, at, at
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
				x.Status = cauri.SessionSuccess
				return cauri.SessionEvent(x, []byte(`{}`), at), nil
			}); err != nil {
				t.Fatal(err)
			}
			return sess
		}
		old, recent := t0, t0.Add(200*24*time.Hour)
		var gone, kept []*cauri.Session
		for i := range 5 {
			gone = append(gone, settle(i%2 == 0, old))
		}
		retried := settle(true, old) // its delivery is still pending
		kept = append(kept, settle(true, recent), settle(false, recent))
		// Every old delivery but the retried one's has ended.
		for _, sess := range gone {
			for _, live := range []bool{true, false} {
				list, err := s.Deliveries(ctx, ws.ID, live, store.DeliveryFilter{TransactionID: sess.ID, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range list {
					token, ids, err := s.ClaimDeliveries(ctx, []string{d.ID}, old.Add(time.Hour), old.Add(2*time.Hour))
					if err != nil || len(ids) != 1 {
						t.Fatalf("claim %s: %v %v", d.ID, ids, err)
					}
					if _, err := s.RecordDeliveryAttempt(ctx, d.ID, store.DeliveryAttempt{At: old.Add(time.Hour), URL: d.URL, StatusCode: 200, Delivered: true, Lease: token}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := s.AddNotification(ctx, ws.ID, true, "old", old); err != nil {
			t.Fatal(err)
		}
		n, err := s.PurgeEventLog(ctx, recent.Add(-180*24*time.Hour))
		if err != nil || n != 11 { // 5 deliveries, 5 events, 1 notification
			t.Fatalf("purge = %d, %v; want 11 rows", n, err)
		}
		events := func(sess *cauri.Session) int {
			evs, err := s.SessionEvents(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs)
		}
		for _, sess := range gone {
			if events(sess) != 0 {
				t.Errorf("the old event of %s is still there", sess.ID)
			}
			if _, err := s.Session(ctx, sess.ID); err != nil {
				t.Errorf("the payment %s went with its events: %v", sess.ID, err)
			}
		}
		if events(retried) != 1 {
			t.Error("the event of a delivery still retried went")
		}
		for _, sess := range kept {
			if events(sess) != 1 {
				t.Errorf("the recent event of %s went", sess.ID)
			}
		}
		if _, unread, _ := s.UnreadNotifications(ctx, ws.ID, true, 10); unread != 0 {
			t.Errorf("%d old notifications left", unread)
		}
	})
}
