package gateway

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTokens_OneFetchForConcurrentCalls: calls that find no token share
// the one the first fetches (aggregators limit how often tokens are asked
// for); a failed fetch is NotSent and the next call fetches again.
func TestTokens_OneFetchForConcurrentCalls(t *testing.T) {
	var tokens Tokens
	var fetches atomic.Int32
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	fetch := func(context.Context) (string, int64, error) {
		fetches.Add(1)
		time.Sleep(20 * time.Millisecond) // the aggregator takes its time
		return "tok-1", 3600, nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := tokens.Get(context.Background(), "", now, fetch); err != nil || got != "tok-1" {
				t.Errorf("Get = %q, %v", got, err)
			}
		}()
	}
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Fatalf("20 concurrent calls fetched %d tokens; want 1", n)
	}
	// Expired (TokenMargin before its hour): fetched again, once.
	if _, err := tokens.Get(context.Background(), "", now.Add(time.Hour), fetch); err != nil || fetches.Load() != 2 {
		t.Fatalf("after expiry: %v, %d fetches; want 2", err, fetches.Load())
	}
	// Another name has its own token.
	_, err := tokens.Get(context.Background(), "disbursement", now, func(context.Context) (string, int64, error) {
		return "", 0, errors.New("refused")
	})
	if e := ErrorOf(err); e == nil || !e.NotSent {
		t.Fatalf("a failed fetch = %v; want NotSent", err)
	}
}
