package transfer

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cauri-pay/cauri"
)

func TestAllowed_InTheSPECsOrder(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ws              cauri.Workspace
		keyLive, create bool
		want            string // the reason; "" allowed
	}{
		{"live, verified, creating", cauri.Workspace{Verified: true}, true, true, ""},
		{"closed before anything", cauri.Workspace{TransfersClosed: true, Connect: true}, false, true, "transferts_inactifs"},
		{"Connect before unverified", cauri.Workspace{Connect: true}, true, true, "connect_non_disponible"},
		{"unverified before the key's mode", cauri.Workspace{}, false, true, "identite_non_verifiee"},
		{"test key, creating", cauri.Workspace{Verified: true}, false, true, "test_mode"},
		{"test key, reading", cauri.Workspace{TransfersClosed: true}, false, false, "test_mode"},
		{"closed, reading", cauri.Workspace{TransfersClosed: true, Connect: true}, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cauri.ErrorReason(Allowed(&tc.ws, tc.keyLive, tc.create)); got != tc.want {
				t.Errorf("refusal = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestBatch_BoundedAndStoppable(t *testing.T) {
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	sent := map[int]bool{}
	skipped := Batch(40, nil, func(i int) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		mu.Lock()
		sent[i] = true
		mu.Unlock()
		inFlight.Add(-1)
	})
	if len(skipped) != 0 || len(sent) != 40 {
		t.Fatalf("sent %d, skipped %v; want all 40 sent", len(sent), skipped)
	}
	if got := most.Load(); got > batchInFlight {
		t.Errorf("%d in flight at once; want at most %d", got, batchInFlight)
	}

	// Stopped while the first turns are in flight (none ends before the
	// stop): those end, the rest are skipped, not sent.
	stop := make(chan struct{})
	var started atomic.Int32
	skipped = Batch(10, stop, func(i int) {
		if started.Add(1) == 3 {
			close(stop)
		}
		<-stop
	})
	if got, want := int(started.Load()), batchInFlight; got != want {
		t.Errorf("started %d; want the %d in flight when it stopped", got, want)
	}
	if got, want := fmt.Sprint(skipped), "[8 9]"; got != want {
		t.Errorf("skipped %s; want %s", got, want)
	}
}
