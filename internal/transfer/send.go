package transfer

import (
	"context"
	"sync"

	"github.com/cauri-pay/cauri"
)

// Allowed is the transfer routes' refusals after the key's own (a secret
// key), in the SPEC's order: when creating, the workspace's state
// (transferts_inactifs, connect_non_disponible, identite_non_verifiee), then
// the key's mode (test_mode, on every transfer route: transfers exist in
// production only).
func Allowed(ws *cauri.Workspace, keyLive, creating bool) error {
	forbidden := func(reason, msg string) error { return cauri.Reasonf(cauri.EForbidden, reason, "%s", msg) }
	switch {
	case creating && ws.TransfersClosed:
		return forbidden("transferts_inactifs", "Transfers are closed on this workspace by the service administration")
	case creating && ws.Connect:
		return forbidden("connect_non_disponible", "A Connect workspace has no access to transfers")
	case creating && !ws.Verified:
		return forbidden("identite_non_verifiee", "This workspace's identity is not verified yet: it is in test mode, and test mode sends no money")
	case !keyLive:
		return forbidden("test_mode", "Transfers are refused with a test key; use the production secret key")
	}
	return nil
}

// Send is one transfer request from validation to payout. A replay of its
// idempotency key is answered first (replayed true), before validation and
// whatever the limits or the workspace's gateways since: a transfer already
// made is never refused on a resend (the merchant would pay it again by
// other means). Otherwise the request is validated, takes a turn from limit
// (nil: none), its recipient's name is checked when asked (nom_different:
// nothing is written, the key stays free), and it is created and paid out.
func (s *Service) Send(ctx context.Context, ws *cauri.Workspace, p Params, key string, limit func() error) (*cauri.Transfer, bool, error) {
	if prev, err := s.ReplayRequest(ctx, ws, key, p); err != nil || prev != nil {
		return prev, true, err
	}
	tr, err := s.Validate(ctx, ws, p)
	if err != nil {
		return nil, false, err
	}
	if limit != nil {
		if err := limit(); err != nil {
			return nil, false, err
		}
	}
	if err := s.checkName(ctx, ws, tr); err != nil {
		return nil, false, err
	}
	return s.Create(ctx, ws, tr, key)
}

// MaxBatch is how many transfers one batch may hold.
const MaxBatch = 500

// batchInFlight is how many of a batch's payouts are in flight at once.
const batchInFlight = 8

// Batch runs send for items 0 to n-1 of a batch, batchInFlight at a time,
// and returns when all have ended. Once stop is closed (the server is
// shutting down), the items not started yet are not: skipped lists them.
func Batch(n int, stop <-chan struct{}, send func(i int)) (skipped []int) {
	var wg sync.WaitGroup
	turns := make(chan struct{}, batchInFlight)
	for i := range n {
		turns <- struct{}{}
		select {
		case <-stop:
			<-turns
			skipped = append(skipped, i)
			continue
		default:
		}
		wg.Add(1)
		go func() {
			defer func() { <-turns; wg.Done() }()
			send(i)
		}()
	}
	wg.Wait()
	return skipped
}
