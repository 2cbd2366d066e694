package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_StartAttemptPriorUnderLock: what admit is told of a session's
// earlier attempts is read under the session's lock, so a limit on their
// count holds when many requests start attempts at once (here 20 for a
// limit of 5, none of them left pending to be refused for that instead).
func TestStore_StartAttemptPriorUnderLock(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		sess, g := payable(t, s)
		errLimit := errors.New("limit reached")
		const limit = 5
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, seen := 0, map[int]bool{}
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				at := t0.Add(time.Duration(i) * time.Millisecond)
				a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: "pawapay", Reference: cauri.NewUUID(),
					Country: "SN", Operator: "wave", OperatorCode: "WAVE_SEN", Phone: "+221771234567", Status: cauri.AttemptFailed, CreatedAt: at, UpdatedAt: at}
				err := s.StartAttempt(ctx, a, func(_ *cauri.Session, prior store.Prior, _ *store.LinkUse) error {
					mu.Lock()
					defer mu.Unlock()
					if seen[prior.Count] && prior.Count < limit {
						t.Errorf("two attempts were told of %d earlier ones", prior.Count)
					}
					if prior.Count >= limit {
						return errLimit
					}
					if prior.Count > 0 && prior.Latest == nil {
						t.Errorf("%d earlier attempts and no latest", prior.Count)
					}
					seen[prior.Count] = true
					return nil
				}, nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					admitted++
				case !errors.Is(err, errLimit):
					t.Errorf("start attempt: %v", err)
				}
			}()
		}
		wg.Wait()
		attempts, err := s.Attempts(ctx, sess.ID)
		if err != nil || admitted != limit || len(attempts) != limit {
			t.Fatalf("admitted %d, stored %d (%v); want %d of each", admitted, len(attempts), err, limit)
		}
	})
}
