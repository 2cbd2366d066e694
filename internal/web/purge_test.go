package web

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestPurge_TestData: the retention purge removes the test data older than
// 90 days (sessions, their events and webhook deliveries, the test payments
// of an unverified workspace's live keys) and nothing else: live data of
// the same age and recent test data stay.
func TestPurge_TestData(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		rc := newReceiver(t, nil)
		e.setWebhook(e.keys["test_secret"], map[string]any{"webhookUrl": rc.url})
		ws, keys := e.newWorkspace("Live shop", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		e.setWebhook(keys["live_secret"], map[string]any{"webhookUrl": rc.url})

		oldTest := e.mustSession(e.keys["test_secret"], `{"amount": 100}`)
		e.settle(oldTest, "succes")
		unverifiedLive := e.mustSession(e.keys["live_secret"], `{"amount": 200}`) // a test session: the workspace is not verified
		oldLive := e.payLive(keys["live_public"], g.ID, simURL, 5000, "771234567")
		rc.wait(2)
		e.clock.Add(cauri.TestDataRetention + time.Hour)
		recentTest := e.mustSession(e.keys["test_secret"], `{"amount": 300}`)
		e.settle(recentTest, "echec")
		rc.wait(3)

		if n, err := st.PurgeTestData(ctx, e.clock.Now().Add(-cauri.TestDataRetention)); err != nil || n < 4 {
			t.Fatalf("purge = %d rows, %v; want the old test session, its event and delivery, and the other old test session", n, err)
		}
		for _, id := range []string{oldTest, unverifiedLive} {
			if _, err := st.Session(ctx, id); cauri.ErrorCode(err) != cauri.ENotFound {
				t.Errorf("old test session %s: %v; want it purged", id, err)
			}
			if ev, _ := st.SessionEvents(ctx, id); len(ev) != 0 {
				t.Errorf("old test session %s keeps %d events", id, len(ev))
			}
		}
		test, _ := st.Deliveries(ctx, e.ws.ID, false, store.DeliveryFilter{Limit: 10})
		if len(test) != 1 || test[0].TransactionID != recentTest {
			t.Errorf("test deliveries after the purge = %d; want the recent one only", len(test))
		}
		for _, id := range []string{oldLive, recentTest} {
			if _, err := st.Session(ctx, id); err != nil {
				t.Errorf("session %s purged: %v", id, err)
			}
		}
		if a, _ := st.Attempts(ctx, oldLive); len(a) != 1 {
			t.Errorf("the old live session's attempts = %d; want 1", len(a))
		}
		if live, _ := st.Deliveries(ctx, ws.ID, true, store.DeliveryFilter{Limit: 10}); len(live) != 1 {
			t.Errorf("live deliveries after the purge = %d; want 1", len(live))
		}
	})
}
