package store_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newWorkspace(t *testing.T, s *store.Store) (*cauri.Workspace, []*cauri.Key) {
	t.Helper()
	ws, err := cauri.NewWorkspace("Boutique Adjoa", t0)
	if err != nil {
		t.Fatal(err)
	}
	keys := []*cauri.Key{
		cauri.NewKey(ws.ID, cauri.KeyPublic, true, t0), cauri.NewKey(ws.ID, cauri.KeySecret, true, t0),
		cauri.NewKey(ws.ID, cauri.KeyPublic, false, t0), cauri.NewKey(ws.ID, cauri.KeySecret, false, t0),
	}
	if err := s.CreateWorkspace(context.Background(), ws, keys); err != nil {
		t.Fatal(err)
	}
	return ws, keys
}

// payable is a new workspace's session of 5 000 and a pawaPay gateway of
// its own to pay it through.
func payable(t *testing.T, s *store.Store) (*cauri.Session, *cauri.Gateway) {
	t.Helper()
	ctx := context.Background()
	ws, _ := newWorkspace(t, s)
	sess := newSession(ws, 5000)
	if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
		t.Fatal(err)
	}
	g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "pawapay", Name: "pawaPay", Collect: true, Enabled: true, CreatedAt: t0}
	if err := s.CreateGateway(ctx, g, map[string]string{"api_token": "t"}); err != nil {
		t.Fatal(err)
	}
	return sess, g
}

// pendingAttempt is a pending attempt to pay a payable session, and its
// gateway.
func pendingAttempt(t *testing.T, s *store.Store) (*cauri.Gateway, *cauri.PaymentAttempt) {
	t.Helper()
	sess, g := payable(t, s)
	a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: "pawapay", Reference: cauri.NewID("ref_"),
		Country: "SN", Operator: "wave", OperatorCode: "WAVE_SEN", Phone: "+221771234567", Status: cauri.AttemptPending, CreatedAt: t0, UpdatedAt: t0}
	if err := s.StartAttempt(context.Background(), a, nil, nil); err != nil {
		t.Fatal(err)
	}
	return g, a
}

func newSession(ws *cauri.Workspace, amount int64) *cauri.Session {
	return &cauri.Session{
		ID: cauri.NewID("cs_"), WorkspaceID: ws.ID, Status: cauri.SessionPending, Amount: amount, Currency: "XOF",
		CustomerEmail: "a@example.com", Metadata: map[string]string{"order_id": "A-1"}, CreatedAt: t0, UpdatedAt: t0,
	}
}

func code(err error) string { return cauri.ErrorCode(err) }

func TestStore_Workspace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, keys := newWorkspace(t, s)

		t.Run("Authenticate", func(t *testing.T) {
			for _, k := range keys {
				gotWS, gotKey, err := s.Authenticate(ctx, k.Plaintext, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if gotWS.ID != ws.ID || gotKey.ID != k.ID || gotKey.Kind != k.Kind || gotKey.Live != k.Live {
					t.Fatalf("Authenticate(%s) = %s/%+v; want %s/%+v", k.Plaintext[:13], gotWS.ID, gotKey, ws.ID, k)
				}
			}
		})
		t.Run("ErrUnknownKey", func(t *testing.T) {
			if _, _, err := s.Authenticate(ctx, keys[1].Plaintext+"x", time.Now()); code(err) != cauri.ENotFound {
				t.Fatalf("err = %v; want not_found", err)
			}
		})
		t.Run("Verify", func(t *testing.T) {
			if ws.Verified {
				t.Fatal("new workspace is verified")
			}
			got, err := s.VerifyWorkspace(ctx, ws.ID, t0)
			if err != nil || !got.Verified {
				t.Fatalf("VerifyWorkspace = %+v, %v; want verified", got, err)
			}
			if _, err := s.VerifyWorkspace(ctx, "ws_nope", t0); code(err) != cauri.ENotFound {
				t.Fatalf("VerifyWorkspace(unknown) err = %v; want not_found", err)
			}
		})
	})
}

// TestStore_KeysNotStoredInClear reads the SQLite file itself: no key's
// plaintext may appear in it, nor a gateway's secret credential (M-Pesa's
// B2C and reversal initiators' passwords).
func TestStore_KeysNotStoredInClear(t *testing.T) {
	dbURL := storetest.SQLiteURL(t)
	s, err := store.Open(context.Background(), dbURL, storetest.Vault(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws, keys := newWorkspace(t, s)
	secrets := []string{"B2C-initiator-Pa55word", "Reversal-initiator-Pa55word", "UmV2ZXJzYWwtcmVhZHktY3JlZGVudGlhbA=="}
	g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "mpesa", Name: "M-Pesa", Collect: true, Enabled: true, CreatedAt: t0}
	if err := s.CreateGateway(context.Background(), g, map[string]string{"consumer_key": "ck", "initiator_name": "b2capi",
		"initiator_password": secrets[0], "reversal_initiator_name": "revapi", "reversal_initiator_password": secrets[1],
		"reversal_security_credential": secrets[2]}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, path, _ := config.ParseDatabaseURL(dbURL)
	var raw []byte
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(path + suffix)
		raw = append(raw, b...)
	}
	if len(raw) == 0 {
		t.Fatal("database file is empty")
	}
	for _, k := range keys {
		if strings.Contains(string(raw), k.Plaintext) {
			t.Fatalf("key %s... is stored in clear", k.Plaintext[:13])
		}
	}
	for _, secret := range secrets {
		if strings.Contains(string(raw), secret) || strings.Contains(string(raw), secret[len(secret)-12:]) {
			t.Fatalf("credential %s... is stored in clear", secret[:8])
		}
	}
}

func TestStore_CreateSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)

		t.Run("OK", func(t *testing.T) {
			in := newSession(ws, 1500)
			if _, replayed, err := s.CreateSession(ctx, in, nil); err != nil || replayed {
				t.Fatalf("CreateSession = %v, replayed=%v", err, replayed)
			}
			got, err := s.Session(ctx, in.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Amount != 1500 || got.Currency != "XOF" || got.Metadata["order_id"] != "A-1" || !got.CreatedAt.Equal(t0) || got.Status != cauri.SessionPending {
				t.Fatalf("Session = %+v", got)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			if _, err := s.Session(ctx, "cs_nope"); code(err) != cauri.ENotFound {
				t.Fatalf("err = %v; want not_found", err)
			}
		})
		t.Run("IdempotentReplay", func(t *testing.T) {
			idem := &store.Idempotency{Key: "order-7", Fingerprint: "f1"}
			first, _, err := s.CreateSession(ctx, newSession(ws, 100), idem)
			if err != nil {
				t.Fatal(err)
			}
			again, replayed, err := s.CreateSession(ctx, newSession(ws, 100), idem)
			if err != nil || !replayed || again.ID != first.ID {
				t.Fatalf("replay = %v, replayed=%v, %v; want %s replayed", again, replayed, err, first.ID)
			}
			_, _, err = s.CreateSession(ctx, newSession(ws, 200), &store.Idempotency{Key: "order-7", Fingerprint: "f2"})
			if !errors.Is(err, store.ErrIdempotencyMismatch) {
				t.Fatalf("other payload err = %v; want %v", err, store.ErrIdempotencyMismatch)
			}
		})
		t.Run("KeyScopedByMode", func(t *testing.T) {
			idem := &store.Idempotency{Key: "order-8", Fingerprint: "f"}
			testSess, _, _ := s.CreateSession(ctx, newSession(ws, 100), idem)
			live := newSession(ws, 100)
			live.Livemode = true
			liveSess, replayed, err := s.CreateSession(ctx, live, idem)
			if err != nil || replayed || liveSess.ID == testSess.ID {
				t.Fatalf("live create with a test key's idempotency key: replayed=%v err=%v", replayed, err)
			}
		})
		t.Run("ExpiredKeyIsForgotten", func(t *testing.T) {
			idem := &store.Idempotency{Key: "order-9", Fingerprint: "f"}
			old := newSession(ws, 100)
			s.CreateSession(ctx, old, idem)
			later := newSession(ws, 300)
			later.CreatedAt = t0.Add(cauri.IdempotencyKeyTTL + time.Hour)
			later.UpdatedAt = later.CreatedAt
			got, replayed, err := s.CreateSession(ctx, later, &store.Idempotency{Key: "order-9", Fingerprint: "other"})
			if err != nil || replayed || got.ID != later.ID {
				t.Fatalf("reuse after TTL = %v, replayed=%v, %v; want a new session", got, replayed, err)
			}
		})
		t.Run("ExpiredKeyConcurrentReuse", func(t *testing.T) {
			// Each round the key has expired, and a storm of requests reuses it:
			// exactly one may take it over.
			s.CreateSession(ctx, newSession(ws, 100), &store.Idempotency{Key: "old-storm", Fingerprint: "f"})
			for round := 1; round <= 6; round++ {
				at := t0.Add(time.Duration(round) * (cauri.IdempotencyKeyTTL + time.Hour))
				const n = 16
				ids := make([]string, n)
				fresh := make([]bool, n)
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						sess := newSession(ws, 200)
						sess.CreatedAt, sess.UpdatedAt = at, at
						got, replayed, err := s.CreateSession(ctx, sess, &store.Idempotency{Key: "old-storm", Fingerprint: "f"})
						errs[i], fresh[i] = err, !replayed
						if got != nil {
							ids[i] = got.ID
						}
					})
				}
				wg.Wait()
				created := 0
				for i := range n {
					if errs[i] != nil {
						t.Fatalf("round %d, request %d: %v", round, i, errs[i])
					}
					if fresh[i] {
						created++
					}
					if ids[i] != ids[0] {
						t.Fatalf("round %d: request %d got %s, request 0 %s; want one new session", round, i, ids[i], ids[0])
					}
				}
				if created != 1 {
					t.Fatalf("round %d: %d requests created a session; want 1", round, created)
				}
			}
		})
		t.Run("ConcurrentSameKey", func(t *testing.T) {
			const n = 16
			ids := make([]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					got, _, err := s.CreateSession(ctx, newSession(ws, 500), &store.Idempotency{Key: "storm", Fingerprint: "f"})
					errs[i] = err
					if got != nil {
						ids[i] = got.ID
					}
				})
			}
			wg.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("request %d: %v", i, errs[i])
				}
				if ids[i] != ids[0] {
					t.Fatalf("request %d created %s, request 0 %s; want one session", i, ids[i], ids[0])
				}
			}
		})
		t.Run("PurgeIdempotencyKeys", func(t *testing.T) {
			n, err := s.PurgeIdempotencyKeys(ctx, t0.Add(cauri.IdempotencyKeyTTL))
			if err != nil || n == 0 {
				t.Fatalf("purge = %d, %v; want the keys made at t0 gone", n, err)
			}
		})
	})
}

func TestStore_UpdateSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		sess := newSession(ws, 700)
		s.CreateSession(ctx, sess, nil)

		t.Run("ErrRolledBack", func(t *testing.T) {
			boom := errors.New("boom")
			_, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
				x.Status = cauri.SessionSuccess
				return nil, boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v; want boom", err)
			}
			got, _ := s.Session(ctx, sess.ID)
			if got.Status != cauri.SessionPending {
				t.Fatalf("status = %s after a failed update; want PENDING", got.Status)
			}
		})
		t.Run("OKWithEvent", func(t *testing.T) {
			done := t0.Add(time.Minute)
			_, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, w *cauri.Workspace) (*cauri.Event, error) {
				if w.ID != ws.ID {
					t.Errorf("workspace = %s; want %s", w.ID, ws.ID)
				}
				x.Status, x.Provider, x.UpdatedAt, x.CompletedAt = cauri.SessionSuccess, "sandbox", done, &done
				return cauri.SessionEvent(x, []byte(`{"id":"`+x.ID+`"}`), done), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Session(ctx, sess.ID)
			if got.Status != cauri.SessionSuccess || got.Provider != "sandbox" || got.CompletedAt == nil || !got.CompletedAt.Equal(done) {
				t.Fatalf("session = %+v", got)
			}
			events, err := s.SessionEvents(ctx, sess.ID)
			if err != nil || len(events) != 1 || events[0].Type != cauri.EventPaymentCompleted || events[0].Livemode {
				t.Fatalf("events = %+v, %v; want one test payment.completed", events, err)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			_, err := s.UpdateSession(ctx, "cs_nope", func(*cauri.Session, *cauri.Workspace) (*cauri.Event, error) { return nil, nil })
			if code(err) != cauri.ENotFound {
				t.Fatalf("err = %v; want not_found", err)
			}
		})
		t.Run("PurgeTestData", func(t *testing.T) {
			live := newSession(ws, 900)
			live.Livemode = true
			s.CreateSession(ctx, live, nil)
			recent := newSession(ws, 901)
			recent.CreatedAt = t0.Add(cauri.TestDataRetention)
			s.CreateSession(ctx, recent, nil)
			n, err := s.PurgeTestData(ctx, t0.Add(time.Hour))
			if err != nil || n != 2 { // the test session of t0 and its event
				t.Fatalf("purge = %d, %v; want 2 rows", n, err)
			}
			if _, err := s.Session(ctx, sess.ID); code(err) != cauri.ENotFound {
				t.Fatalf("old test session still there: %v", err)
			}
			if events, _ := s.SessionEvents(ctx, sess.ID); len(events) != 0 {
				t.Fatalf("old test events still there: %d", len(events))
			}
			for _, keep := range []*cauri.Session{live, recent} {
				if _, err := s.Session(ctx, keep.ID); err != nil {
					t.Fatalf("purge removed %s (live=%v): %v", keep.ID, keep.Livemode, err)
				}
			}
		})
		t.Run("PurgeTestDataInBatches", func(t *testing.T) {
			defer store.SetPurgeBatch(2)()
			live := newSession(ws, 900)
			live.Livemode = true
			recent := newSession(ws, 901)
			recent.CreatedAt = t0.Add(cauri.TestDataRetention)
			for _, keep := range []*cauri.Session{live, recent} {
				if _, _, err := s.CreateSession(ctx, keep, nil); err != nil {
					t.Fatal(err)
				}
			}
			g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "pawapay", Name: "pawaPay", Collect: true, Enabled: true, CreatedAt: t0}
			if err := s.CreateGateway(ctx, g, map[string]string{"api_token": "t"}); err != nil {
				t.Fatal(err)
			}
			var old []string
			for i := range 5 { // five batches' worth of test sessions, each with an attempt and an event
				sess := newSession(ws, int64(700+i))
				if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
					t.Fatal(err)
				}
				if err := s.StartAttempt(ctx, &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: "pawapay",
					Reference: cauri.NewID("ref_"), Country: "SN", Operator: "orange", OperatorCode: "X", Phone: "+221771234567",
					Status: cauri.AttemptFailed, CreatedAt: t0, UpdatedAt: t0}, nil, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
					x.Status = cauri.SessionFailed
					return cauri.SessionEvent(x, []byte(`{}`), t0), nil
				}); err != nil {
					t.Fatal(err)
				}
				old = append(old, sess.ID)
			}
			n, err := s.PurgeTestData(ctx, t0.Add(time.Hour))
			if err != nil || n != 15 { // five sessions, their attempts and events
				t.Fatalf("purge = %d, %v; want 15 rows", n, err)
			}
			for _, id := range old {
				if _, err := s.Session(ctx, id); code(err) != cauri.ENotFound {
					t.Fatalf("old test session %s still there: %v", id, err)
				}
			}
			for _, keep := range []*cauri.Session{live, recent} {
				if _, err := s.Session(ctx, keep.ID); err != nil {
					t.Fatalf("purge removed %s (live=%v): %v", keep.ID, keep.Livemode, err)
				}
			}
		})
	})
}

// TestStore_DeferredWrites: a settlement reads its session with the
// workspace in one statement, and its writes (the session, its event, the
// event's delivery, the overview's counts) go to PostgreSQL as one
// statement; SQLite runs each. A deferred write refused fails the
// transaction with its own cause and leaves nothing.
func TestStore_DeferredWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		if _, err := s.UpdateWebhookConfig(ctx, ws.ID, func(c *cauri.WebhookConfig) error {
			c.TestURL = "https://hooks.example.com/cauri"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		other := newSession(ws, 710)
		s.CreateSession(ctx, other, nil)
		var sent []string
		logged := store.WithQueryLog(ctx, func(q string, _ []any) { sent = append(sent, q) })
		done := t0.Add(2 * time.Minute)
		var ev *cauri.Event
		if _, err := s.UpdateSession(logged, other.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
			x.Status, x.Provider, x.UpdatedAt, x.CompletedAt = cauri.SessionSuccess, "sandbox", done, &done
			ev = cauri.SessionEvent(x, []byte(`{"id":"`+x.ID+`"}`), done)
			return ev, nil
		}); err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"sqlite": 4, "postgres": 2}[s.Kind()]; len(sent) != want {
			t.Errorf("%d statements sent; want %d:\n%s", len(sent), want, strings.Join(sent, "\n"))
		}
		got, _ := s.Session(ctx, other.ID)
		deliveries, err := s.Deliveries(ctx, ws.ID, false, store.DeliveryFilter{TransactionID: other.ID, Limit: 10})
		if got.Status != cauri.SessionSuccess || err != nil || len(deliveries) != 1 || deliveries[0].EventID != ev.ID {
			t.Fatalf("after the settlement: %s, deliveries %+v, %v; want SUCCESS and the event's delivery", got.Status, deliveries, err)
		}

		// A deferred write refused (an event id already taken): the
		// transaction fails with that cause, and leaves nothing.
		third := newSession(ws, 720)
		s.CreateSession(ctx, third, nil)
		_, err = s.UpdateSession(ctx, third.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
			x.Status, x.Provider, x.UpdatedAt, x.CompletedAt = cauri.SessionSuccess, "sandbox", done, &done
			dup := cauri.SessionEvent(x, []byte(`{}`), done)
			dup.ID = ev.ID
			return dup, nil
		})
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unique") {
			t.Fatalf("an event id taken: %v; want the unique constraint's error", err)
		}
		got, _ = s.Session(ctx, third.ID)
		deliveries, _ = s.Deliveries(ctx, ws.ID, false, store.DeliveryFilter{TransactionID: third.ID, Limit: 10})
		if got.Status != cauri.SessionPending || len(deliveries) != 0 {
			t.Fatalf("after a refused write: %s, %d deliveries; want PENDING and none", got.Status, len(deliveries))
		}
	})
}

func TestStore_Deliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, keys := newWorkspace(t, s)
		settle := func() *cauri.Session {
			sess := newSession(ws, 100)
			s.CreateSession(ctx, sess, nil)
			_, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
				x.Status = cauri.SessionSuccess
				return cauri.SessionEvent(x, []byte(`{}`), t0), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return sess
		}
		// dueAt is what a worker finds due at a time: the endpoints, then
		// each one's deliveries.
		dueAt := func(at time.Time) ([]*cauri.Delivery, error) {
			eps, err := s.DueEndpoints(ctx, time.Time{}, at, 100)
			if err != nil {
				return nil, err
			}
			want := map[store.Endpoint]int{}
			for _, ep := range eps {
				want[ep] = 10
			}
			return s.DueDeliveries(ctx, at, want)
		}
		t.Run("NoURLNoDelivery", func(t *testing.T) {
			settle()
			if due, _ := dueAt(t0); len(due) != 0 {
				t.Fatalf("due = %d; want none without a URL", len(due))
			}
		})
		s.UpdateWebhookConfig(ctx, ws.ID, func(c *cauri.WebhookConfig) error { c.URL = "https://shop.example/hook"; return nil })
		sess := settle()
		due, err := dueAt(t0)
		if err != nil || len(due) != 1 || due[0].TransactionID != sess.ID || due[0].MaxAttempts != 10 || due[0].URL != "https://shop.example/hook" {
			t.Fatalf("due = %+v, %v; want the new delivery", due, err)
		}
		id := due[0].ID
		var lease string
		t.Run("Lease", func(t *testing.T) {
			first, got, err := s.ClaimDeliveries(ctx, []string{id, "whd_" + strings.Repeat("z", 32)}, t0, t0.Add(time.Minute))
			if err != nil || first == "" || len(got) != 1 || got[0] != id {
				t.Fatalf("first claim = %q %v, %v; want the one due delivery", first, got, err)
			}
			if again, _, _ := s.ClaimDeliveries(ctx, []string{id}, t0.Add(30*time.Second), t0.Add(2*time.Minute)); again != "" {
				t.Fatal("claimed twice while leased")
			}
			if due, _ := dueAt(t0.Add(30 * time.Second)); len(due) != 0 {
				t.Fatal("a leased delivery is listed as due")
			}
			if lease, _, _ = s.ClaimDeliveries(ctx, []string{id}, t0.Add(61*time.Second), t0.Add(2*time.Minute)); lease == "" || lease == first {
				t.Fatal("not claimable with a new token after the lease expired")
			}
			// The first holder's late outcome decides nothing.
			d, err := s.RecordDeliveryAttempt(ctx, id, store.DeliveryAttempt{At: t0, URL: "https://shop.example/hook", StatusCode: 500, Lease: first, NextAt: &t0})
			if err != nil || d.Status != cauri.DeliveryPending || d.AutoAttempts != 0 || d.Attempts != 1 {
				t.Fatalf("stale outcome = %+v, %v; want counted, no state change", d, err)
			}
		})
		t.Run("Target", func(t *testing.T) {
			tg, err := s.DeliveryTarget(ctx, id, time.Now())
			if err != nil || tg.URL != "https://shop.example/hook" || len(tg.Secrets) != 1 || !strings.HasPrefix(tg.Secrets[0], "svc_test_sec_") || tg.Event.SessionID != sess.ID {
				t.Fatalf("target = %+v, %v", tg, err)
			}
		})
		t.Run("TargetAfterRoll", func(t *testing.T) {
			at := t0.Add(time.Hour)
			k, err := s.RollKey(ctx, ws.ID, cauri.KeySecret, false, time.Hour, at)
			if err != nil {
				t.Fatal(err)
			}
			old := keys[3].Plaintext
			tg, err := s.DeliveryTarget(ctx, id, at.Add(time.Minute))
			if err != nil || len(tg.Secrets) != 2 || tg.Secrets[0] != k.Plaintext || tg.Secrets[1] != old {
				t.Fatalf("secrets in the grace period = %d, %v; want the new key, then the old one", len(tg.Secrets), err)
			}
			tg, err = s.DeliveryTarget(ctx, id, at.Add(time.Hour))
			if err != nil || len(tg.Secrets) != 1 || tg.Secrets[0] != k.Plaintext {
				t.Fatalf("secrets after the grace period = %d, %v; want the new key only", len(tg.Secrets), err)
			}
		})
		t.Run("RecordAttempt", func(t *testing.T) {
			next := t0.Add(time.Minute)
			d, err := s.RecordDeliveryAttempt(ctx, id, store.DeliveryAttempt{At: t0, URL: "https://shop.example/hook", StatusCode: 500, Lease: lease, NextAt: &next})
			if err != nil || d.Status != cauri.DeliveryPending || d.Attempts != 2 || d.AutoAttempts != 1 || !d.NextAttemptAt.Equal(next) {
				t.Fatalf("after a failure = %+v, %v", d, err)
			}
			if tok, _, _ := s.ClaimDeliveries(ctx, []string{id}, next.Add(-time.Second), next.Add(time.Minute)); tok != "" {
				t.Fatal("claimed before its next attempt is due")
			}
			d, err = s.RecordDeliveryAttempt(ctx, id, store.DeliveryAttempt{At: next, URL: "https://shop.example/hook", StatusCode: 200, Delivered: true})
			if err != nil || d.Status != cauri.DeliveryDelivered || d.NextAttemptAt != nil || !d.DeliveredAt.Equal(next) {
				t.Fatalf("after a 2xx = %+v, %v", d, err)
			}
		})
	})
}

func TestStore_Gateways(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "pawapay", Name: "pawaPay CI", Collect: true,
			Payout: true, Enabled: true, Routes: []cauri.GatewayRoute{{Country: "CI", Operator: "wave", Code: "WAVE_CIV", Enabled: true}}, CreatedAt: t0}
		creds := map[string]string{"api_token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.secret-part"}
		if err := s.CreateGateway(ctx, g, creds); err != nil {
			t.Fatal(err)
		}
		list, err := s.Gateways(ctx, ws.ID)
		if err != nil || len(list) != 1 || list[0].Routes[0].Code != "WAVE_CIV" || list[0].CredentialHints["api_token"] != "…part" {
			t.Fatalf("list = %+v, %v", list, err)
		}
		got, err := s.GatewayCredentials(ctx, g.ID)
		if err != nil || got["api_token"] != creds["api_token"] {
			t.Fatalf("credentials = %v, %v", got, err)
		}
		other, _ := newWorkspace(t, s)
		if _, err := s.Gateway(ctx, other.ID, g.ID); code(err) != cauri.ENotFound {
			t.Fatalf("another workspace reads the gateway: %v", err)
		}
		if d, err := s.SetGatewayEnabled(ctx, ws.ID, g.ID, false, t0); err != nil || d.Enabled {
			t.Fatalf("disable = %+v, %v", d, err)
		}
		waiting := -1
		admit := func(n int) error { waiting = n; return nil }
		refused := errors.New("refused")
		if err := s.RemoveGateway(ctx, ws.ID, g.ID, t0, func(int) error { return refused }); !errors.Is(err, refused) {
			t.Fatalf("a removal admit refuses: err = %v; want %v", err, refused)
		}
		if _, err := s.GatewayCredentials(ctx, g.ID); err != nil {
			t.Fatalf("credentials after a refused removal: %v; want kept", err)
		}
		if err := s.RemoveGateway(ctx, ws.ID, g.ID, t0, admit); err != nil || waiting != 0 {
			t.Fatalf("remove = %v, admit saw %d waiting; want removed, 0", err, waiting)
		}
		if _, err := s.GatewayCredentials(ctx, g.ID); code(err) != cauri.ENotFound {
			t.Fatalf("credentials of a removed gateway: %v", err)
		}
		if list, _ := s.Gateways(ctx, ws.ID); len(list) != 0 {
			t.Fatalf("removed gateway still listed: %+v", list)
		}
		if err := s.RemoveGateway(ctx, ws.ID, g.ID, t0, admit); code(err) != cauri.ENotFound {
			t.Fatalf("second removal: %v", err)
		}
		if err := s.CreateGateway(ctx, &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: "ws_" + strings.Repeat("a", 32), Provider: "pawapay", CreatedAt: t0}, creds); code(err) != cauri.ENotFound {
			t.Fatalf("gateway of an unknown workspace: %v", err)
		}
	})
}

// TestStore_AttemptChecks holds the turns to ask an aggregator about a
// pending attempt: none while the initiation call runs, status reads at
// most every interval, and callbacks at once however recent the last
// status read, but at most every interval among themselves.
func TestStore_AttemptChecks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, a := pendingAttempt(t, s)
		claim := func(callback bool, at time.Duration, every time.Duration) bool {
			t.Helper()
			f := s.ClaimAttemptCheck
			if callback {
				f = s.ClaimCallbackCheck
			}
			got, err := f(ctx, a.ID, t0.Add(at), every)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		const status, callback = false, true
		if claim(status, 0, 8*time.Second) || claim(callback, 0, 2*time.Second) {
			t.Fatal("a check while the initiation call runs")
		}
		if err := s.MarkInitiated(ctx, a.ID, t0.Add(time.Second), cauri.NextAction{}); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			kind bool
			at   time.Duration
			want bool
		}{
			{status, 2 * time.Second, true},
			{status, 3 * time.Second, false},   // 8 s between status reads
			{callback, 3 * time.Second, true},  // news: at once
			{callback, 4 * time.Second, false}, // 2 s between callbacks
			{status, 10 * time.Second, false},  // the callback's check counts
			{callback, 5 * time.Second, true},
			{status, 13 * time.Second, true},
		} {
			every := 8 * time.Second
			if step.kind == callback {
				every = 2 * time.Second
			}
			if got := claim(step.kind, step.at, every); got != step.want {
				t.Fatalf("callback=%v at +%v: turn = %v; want %v", step.kind, step.at, got, step.want)
			}
		}
	})
}

// TestStore_ProvisionWorkspace: a partner's merchant is stored whole or
// not at all: when its owner's invitation cannot be written, neither are
// its workspace, keys and webhook.
func TestStore_ProvisionWorkspace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		provision := func(token string) (*cauri.Workspace, []*cauri.Key, error) {
			ws, _ := cauri.NewWorkspace("Via partner", t0)
			keys, _ := cauri.KeySet(ws.ID, t0)
			inv := &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: ws.ID, Email: "owner@example.com", InvitedBy: "partner:ptn_x",
				CreatedAt: t0, ExpiresAt: t0.Add(cauri.InvitationLifetime)}
			return ws, keys, s.ProvisionWorkspace(ctx, store.Provision{Workspace: ws, Keys: keys,
				Webhook: &cauri.WebhookConfig{URL: "https://shop.example/hook"}, Invitation: inv, Token: token})
		}
		ws, _, err := provision("same-token")
		if err != nil {
			t.Fatal(err)
		}
		if c, err := s.WebhookConfig(ctx, ws.ID); err != nil || c.URL != "https://shop.example/hook" {
			t.Fatalf("webhook = %+v, %v", c, err)
		}
		failed, keys, err := provision("same-token") // the invitation's token hash is taken: the insert fails
		if err == nil {
			t.Fatal("a provision whose invitation cannot be written succeeded")
		}
		if _, err := s.Workspace(ctx, failed.ID); code(err) != cauri.ENotFound {
			t.Fatalf("the failed provision left its workspace: %v", err)
		}
		if _, _, err := s.Authenticate(ctx, keys[1].Plaintext, t0); code(err) != cauri.ENotFound {
			t.Fatalf("the failed provision left a key: %v", err)
		}
	})
}

// TestStore_DeliveryBatches: what the webhook worker asks in one statement
// each: the endpoints whose deliveries came due in a window, each
// endpoint's oldest due deliveries up to its count (another's backlog hides
// nothing), what their attempts need, and their outcomes recorded at once.
func TestStore_DeliveryBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		busy, _ := newWorkspace(t, s)
		quiet, _ := newWorkspace(t, s)
		var ids = map[string][]string{}
		for _, ws := range []*cauri.Workspace{busy, quiet} {
			s.UpdateWebhookConfig(ctx, ws.ID, func(c *cauri.WebhookConfig) error { c.TestURL = "https://" + ws.ID + ".example/hook"; return nil })
		}
		settle := func(ws *cauri.Workspace, at time.Time) {
			sess := newSession(ws, 100)
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdateSession(ctx, sess.ID, func(x *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
				x.Status = cauri.SessionSuccess
				return cauri.SessionEvent(x, []byte(`{}`), at), nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 30 {
			settle(busy, t0.Add(time.Duration(i)*time.Millisecond))
		}
		settle(quiet, t0.Add(time.Second))
		now := t0.Add(time.Minute)

		eps, err := s.DueEndpoints(ctx, time.Time{}, now, 100)
		if err != nil || len(eps) != 2 {
			t.Fatalf("due endpoints = %v, %v; want both workspaces' test endpoints", eps, err)
		}
		if eps, _ := s.DueEndpoints(ctx, t0.Add(500*time.Millisecond), now, 100); len(eps) != 1 || eps[0].WorkspaceID != quiet.ID {
			t.Fatalf("endpoints due after the busy one's burst = %v; want only the quiet one", eps)
		}
		due, err := s.DueDeliveries(ctx, now, map[store.Endpoint]int{{WorkspaceID: busy.ID}: 3, {WorkspaceID: quiet.ID}: 3})
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, d := range due {
			per[d.WorkspaceID]++
			ids[d.WorkspaceID] = append(ids[d.WorkspaceID], d.ID)
		}
		if got, want := fmt.Sprint(per[busy.ID], per[quiet.ID]), "3 1"; got != want {
			t.Fatalf("due per endpoint = %s; want %s (the busy one's first 3, the quiet one's 1)", got, want)
		}

		claimed := append(ids[busy.ID][:2:2], ids[quiet.ID][0])
		lease, got, err := s.ClaimDeliveries(ctx, claimed, now, now.Add(time.Minute))
		if err != nil || len(got) != 3 {
			t.Fatalf("claimed %v, %v", got, err)
		}
		tgs, err := s.DeliveryTargets(ctx, append(got, "whd_"+strings.Repeat("z", 32)), now)
		if err != nil || len(tgs) != 3 {
			t.Fatalf("targets = %d, %v; want the 3 claimed", len(tgs), err)
		}
		for i, tg := range tgs {
			if tg.Delivery.ID != got[i] || tg.URL != "https://"+tg.Delivery.WorkspaceID+".example/hook" || tg.Event == nil || len(tg.Secrets) != 1 {
				t.Errorf("target %d = %+v; want delivery %s with its workspace's address, its event and key", i, tg, got[i])
			}
		}

		next := now.Add(time.Minute)
		batch := []store.Recorded{
			{ID: got[0], Attempt: store.DeliveryAttempt{At: now, URL: tgs[0].URL, StatusCode: 204, Delivered: true, Lease: lease}},
			{ID: "whd_" + strings.Repeat("z", 32), Attempt: store.DeliveryAttempt{At: now, Lease: lease}},
			{ID: got[1], Attempt: store.DeliveryAttempt{At: now, URL: tgs[1].URL, StatusCode: 500, Lease: lease, NextAt: &next}},
			{ID: got[2], Attempt: store.DeliveryAttempt{At: now, URL: tgs[2].URL, StatusCode: 200, Delivered: true, Lease: lease}},
		}
		if err := s.RecordDeliveryAttempts(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(batch[1].Err, store.ErrNotFound) {
			t.Errorf("an unknown delivery's outcome: err %v; want store.ErrNotFound, the others recorded", batch[1].Err)
		}
		for i, want := range map[int]cauri.DeliveryStatus{0: cauri.DeliveryDelivered, 2: cauri.DeliveryPending, 3: cauri.DeliveryDelivered} {
			if d := batch[i].Delivery; d == nil || d.Status != want || d.Attempts != 1 {
				t.Errorf("outcome %d recorded as %+v; want %s after one attempt", i, d, want)
			}
		}
		if d := batch[2].Delivery; d == nil || d.AutoAttempts != 1 || !d.NextAttemptAt.Equal(next) {
			t.Errorf("the failed one = %+v; want its next attempt at %v", d, next)
		}
		// What was written is what was returned (the batch is written in one
		// statement), and the leases are released.
		// (pointers compared by what they point to)
		stored := func(d *cauri.Delivery) string {
			return fmt.Sprintf("%s %d/%d next %v code %v delivered %v", d.Status, d.Attempts, d.AutoAttempts,
				cmp.Or(d.NextAttemptAt, &time.Time{}).UnixMicro(), *cmp.Or(d.LastStatusCode, new(int)), cmp.Or(d.DeliveredAt, &time.Time{}).UnixMicro())
		}
		for _, i := range []int{0, 2, 3} {
			want := batch[i].Delivery
			d, err := s.Delivery(ctx, want.WorkspaceID, false, want.ID)
			if err != nil || stored(d) != stored(want) {
				t.Errorf("delivery %d as stored = %v, %v; want %s", i, d, err, stored(want))
			}
		}
		// The failed one is claimed again when due, and its last attempt
		// fails it and raises the dashboard's notification.
		again, ids2, err := s.ClaimDeliveries(ctx, []string{got[1]}, next, next.Add(time.Minute))
		if err != nil || len(ids2) != 1 {
			t.Fatalf("claim when due again = %v, %v; want it (its lease was released)", ids2, err)
		}
		last := []store.Recorded{{ID: got[1], Attempt: store.DeliveryAttempt{At: next, URL: tgs[1].URL, StatusCode: 500, Lease: again}}}
		if err := s.RecordDeliveryAttempts(ctx, last); err != nil || last[0].Delivery.Status != cauri.DeliveryFailed {
			t.Fatalf("last attempt = %+v, %v; want failed", last[0].Delivery, err)
		}
		if d, _ := s.Delivery(ctx, busy.ID, false, got[1]); d == nil || d.Status != cauri.DeliveryFailed || d.AutoAttempts != 2 {
			t.Errorf("failed delivery as stored = %+v", d)
		}
		if ns, unread, err := s.UnreadNotifications(ctx, busy.ID, false, 10); err != nil || len(ns) != 1 || unread != 1 || ns[0].DeliveryID != got[1] {
			t.Errorf("notifications = %+v (%d unread), %v; want one for the failed delivery", ns, unread, err)
		}
	})
}

// TestStore_UnreadNotifications: a page of the latest unread notifications
// of one mode and their count, however many were dismissed; dismissing all
// takes that mode's only.
func TestStore_UnreadNotifications(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		for i := range 15 {
			if err := s.AddNotification(ctx, ws.ID, false, fmt.Sprintf("test %02d", i), t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddNotification(ctx, ws.ID, true, "live", t0); err != nil {
			t.Fatal(err)
		}
		page, unread, err := s.UnreadNotifications(ctx, ws.ID, false, 10)
		if err != nil || len(page) != 10 || unread != 15 || page[0].Message != "test 14" || page[9].Message != "test 05" {
			t.Fatalf("unread test notifications = %d (%d in all), %v; want the 10 latest of 15", len(page), unread, err)
		}
		if err := s.AcknowledgeNotification(ctx, ws.ID, page[0].ID, t0); err != nil {
			t.Fatal(err)
		}
		if page, unread, _ := s.UnreadNotifications(ctx, ws.ID, false, 10); unread != 14 || page[0].Message != "test 13" {
			t.Fatalf("after one dismissed: %d unread, first %q", unread, page[0].Message)
		}
		if n, err := s.AcknowledgeAllNotifications(ctx, ws.ID, false, t0); err != nil || n != 14 {
			t.Fatalf("dismiss all = %d, %v; want 14", n, err)
		}
		if page, unread, _ := s.UnreadNotifications(ctx, ws.ID, false, 10); unread != 0 || len(page) != 0 {
			t.Fatalf("after dismissing all: %d unread", unread)
		}
		if page, unread, _ := s.UnreadNotifications(ctx, ws.ID, true, 10); unread != 1 || page[0].Message != "live" {
			t.Fatalf("live notifications after dismissing the test ones: %d", unread)
		}
	})
}

// TestStore_SessionFromAnOlderNode: a session written by a node that does
// not know expires_at yet (a rolling deploy) has the default 0 there; it
// expires as that node's rule said, 24 hours after its creation, never at
// once.
func TestStore_SessionFromAnOlderNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		sess := newSession(ws, 1000)
		sess.ExpiresAt = t0.Add(time.Hour)
		if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteAsBeforeExpiry(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Session(ctx, sess.ID); err != nil || !got.ExpiresAt.Equal(t0.Add(cauri.SessionLifetime)) {
			t.Fatalf("session = %+v, %v; want it to expire %s after its creation", got, err, cauri.SessionLifetime)
		}
		for _, c := range []struct {
			at   time.Duration
			want int
		}{{2 * time.Hour, 0}, {cauri.SessionLifetime - time.Second, 0}, {cauri.SessionLifetime, 1}} {
			if ids, err := s.ExpiredSessions(ctx, t0.Add(c.at), 10); err != nil || len(ids) != c.want {
				t.Fatalf("expired %s after its creation = %v, %v; want %d", c.at, ids, err, c.want)
			}
		}
	})
}

// TestOpenDB_SQLiteSettings: every SQLite connection runs with the settings
// the store is measured with (sqliteDSN): durable WAL commits, savepoints'
// journals in memory, the file mapped, a small page cache of its own.
func TestOpenDB_SQLiteSettings(t *testing.T) {
	db, _, err := store.OpenDB("sqlite:" + filepath.Join(t.TempDir(), "cauri.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "temp_store": "2",
		"mmap_size": "2147418112", "cache_size": "-1024", "foreign_keys": "1"} {
		var got string
		if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
}
