package store_test

import (
	"context"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_ReplaceProviderRef: a succeeded attempt's provisional id is
// replaced by the final one once, only while it is still that id; a
// pending attempt's never (its payment is not confirmed).
func TestStore_ReplaceProviderRef(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		g, a := pendingAttempt(t, s)
		if err := s.SetProviderRef(ctx, a.ID, "ws_CO_1"); err != nil {
			t.Fatal(err)
		}
		// swap runs one of the two compare-and-set calls on the attempt;
		// stored reads it back.
		swap := func(set func(context.Context, string, string, string) (bool, error), was, final string) bool {
			t.Helper()
			ok, err := set(ctx, a.ID, was, final)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		stored := func() *cauri.PaymentAttempt {
			t.Helper()
			got, err := s.AttemptByReference(ctx, g.ID, a.Reference)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		replace := func(was, final string) bool { return swap(s.ReplaceProviderRef, was, final) }
		ref := func() string { return stored().ProviderRef }
		if replace("ws_CO_1", "NLJ7RT61SV") || ref() != "ws_CO_1" {
			t.Fatalf("a pending attempt's id replaced: %s", ref())
		}
		// A pending attempt keeps a final id (the first), under its own
		// provisional one only.
		keep := func(was, final string) bool { return swap(s.KeepFinalRef, was, final) }
		kept := func() string { return stored().FinalRef }
		if keep("ws_CO_2", "QKL1234XYZ") || !keep("ws_CO_1", "NLJ7RT61SV") || keep("ws_CO_1", "QKL1234XYZ") || kept() != "NLJ7RT61SV" {
			t.Fatalf("kept %q; want the first for its own push", kept())
		}
		if _, err := s.UpdateAttempt(ctx, a.ID, func(_ *cauri.Session, a *cauri.PaymentAttempt) (*cauri.Event, error) {
			a.Status = cauri.AttemptSucceeded
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if replace("ws_CO_2", "NLJ7RT61SV") || ref() != "ws_CO_1" {
			t.Fatalf("replaced from another id: %s", ref())
		}
		if !replace("ws_CO_1", "NLJ7RT61SV") || ref() != "NLJ7RT61SV" {
			t.Fatalf("not replaced: %s", ref())
		}
		if replace("ws_CO_1", "FAKE000001") || ref() != "NLJ7RT61SV" {
			t.Fatalf("replaced twice: %s", ref())
		}
		if keep("NLJ7RT61SV", "FAKE000001") {
			t.Fatal("a succeeded attempt kept a final id")
		}
	})
}
