package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
)

// cachedStore is an SQLite store with its caches on (as serve has them),
// copies served for an hour (no copy expires during a test unless the test
// says so), and n pending test sessions of one workspace.
func cachedStore(t *testing.T, n int) (*Store, []*cauri.Session) {
	t.Helper()
	ctx := context.Background()
	s := openSQLite(t, filepath.Join(t.TempDir(), "cauri.db"))
	s.keys.on.Store(true)
	ttl := sessionCacheTTL
	t.Cleanup(func() { sessionCacheTTL = ttl })
	sessionCacheTTL = time.Hour
	now := time.Now().UTC().Truncate(time.Microsecond)
	ws, err := cauri.NewWorkspace("Boutique Adjoa", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWorkspace(ctx, ws, []*cauri.Key{cauri.NewKey(ws.ID, cauri.KeySecret, false, now)}); err != nil {
		t.Fatal(err)
	}
	var out []*cauri.Session
	for range n {
		sess := &cauri.Session{ID: cauri.NewID("cs_"), WorkspaceID: ws.ID, Status: cauri.SessionPending, Amount: 5000, Currency: "XOF",
			Metadata: map[string]string{}, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
			t.Fatal(err)
		}
		out = append(out, sess)
	}
	return s, out
}

func setStatus(status cauri.SessionStatus) func(*cauri.Session, *cauri.Workspace) (*cauri.Event, error) {
	return func(sess *cauri.Session, _ *cauri.Workspace) (*cauri.Event, error) {
		sess.Status = status
		return nil, nil
	}
}

// TestSessionCache_ReadBeforeChange: a read that began before a change
// committed does not fill the cache with what it read once the change has
// returned.
func TestSessionCache_ReadBeforeChange(t *testing.T) {
	ctx := context.Background()
	s, sessions := cachedStore(t, 1)
	old := sessions[0]
	if _, ok, _ := s.cachedSession(old.ID); ok {
		t.Fatal("cached before any read")
	}
	_, _, gen := s.cachedSession(old.ID) // the read begins; it reads old
	if _, err := s.UpdateSession(ctx, old.ID, setStatus(cauri.SessionFailed)); err != nil {
		t.Fatal(err)
	}
	s.cacheSession(old, gen) // the read ends, after the change
	got, err := s.Session(ctx, old.ID)
	if err != nil || got.Status != cauri.SessionFailed {
		t.Fatalf("read after the change = %+v, %v; want FAILED", got, err)
	}
}

// TestSessionCache_Batch: in a batch of SQLite transactions (savepoints),
// the session a committed transaction changed is dropped; the one whose
// transaction failed after its change keeps what it was.
func TestSessionCache_Batch(t *testing.T) {
	ctx := context.Background()
	s, sessions := cachedStore(t, 2)
	a, b := sessions[0], sessions[1]
	for _, sess := range sessions {
		if _, err := s.Session(ctx, sess.ID); err != nil { // cached
			t.Fatal(err)
		}
	}
	failed := errors.New("refused after the change")
	s.writer <- struct{}{} // hold the turn: both transactions queue, then run as one batch
	errs := make(chan error, 2)
	go func() {
		_, err := s.UpdateSession(ctx, a.ID, setStatus(cauri.SessionSuccess))
		errs <- err
	}()
	go func() {
		errs <- s.tx(ctx, func(t *tx) error {
			sess, _, err := t.sessionForUpdate(ctx, b.ID)
			if err != nil {
				return err
			}
			was := sess.Status
			sess.Status = cauri.SessionFailed
			if err := t.saveSessionStatus(ctx, sess, was, nil); err != nil {
				return err
			}
			return failed
		})
	}()
	for deadline := time.Now().Add(5 * time.Second); s.queued() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			<-s.writer
			t.Fatal("the two transactions did not queue")
		}
	}
	<-s.writer
	for range 2 {
		if err := <-errs; err != nil && !errors.Is(err, failed) {
			t.Fatal(err)
		}
	}
	for sess, want := range map[*cauri.Session]cauri.SessionStatus{a: cauri.SessionSuccess, b: cauri.SessionPending} {
		if got, err := s.Session(ctx, sess.ID); err != nil || got.Status != want {
			t.Fatalf("after the batch: %+v, %v; want %s", got, err, want)
		}
	}
}

// TestSessionCache_TTL: a change made behind the store's back is seen once
// the copy is older than sessionCacheTTL.
func TestSessionCache_TTL(t *testing.T) {
	ctx := context.Background()
	s, sessions := cachedStore(t, 1)
	id := sessions[0].ID
	if _, err := s.Session(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE checkout_sessions SET status = 'CANCELLED' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx, id); err != nil || got.Status != cauri.SessionPending {
		t.Fatalf("read within the TTL = %+v, %v; want the cached PENDING", got, err)
	}
	sessionCacheTTL = 0 // the copy is now older than the bound
	if got, err := s.Session(ctx, id); err != nil || got.Status != cauri.SessionCancelled {
		t.Fatalf("read after the TTL = %+v, %v; want CANCELLED", got, err)
	}
}
