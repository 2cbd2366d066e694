// Package reports is the service of what a workspace's dashboard and
// exports show of its business: its transactions (a row each, filtered,
// a page at a time or streamed whole), its overview of a period (volumes,
// success rates, day by day) and, for a Connect workspace, the balance the
// service holds for it and the settlements paid out of it.
//
// It imports the domain and the store's types.
package reports

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the service reads and records (*store.Store).
type Store interface {
	ExportTransactions(ctx context.Context, workspaceID string, livemode bool, f store.ExportFilter, fn func(store.ExportRow) error) error
	Stats(ctx context.Context, workspaceID string, livemode bool, since, until time.Time) (*store.Stats, error)
	Balance(ctx context.Context, workspaceID string) (map[cauri.Currency]int64, error)
	Setup(ctx context.Context, workspaceID string) (store.Setup, error)
	Settle(ctx context.Context, workspaceID string, cur cauri.Currency, amount int64, reference string, now time.Time,
		decide func(store.Settlement) error) (*store.Movement, error)
}

// Service reads a workspace's reports.
type Service struct {
	Store Store
	Now   func() time.Time
}

// Transactions calls fn with each of the workspace's transactions of one
// mode that f selects, newest first, streamed (an export holds no more
// than a row in memory).
func (s *Service) Transactions(ctx context.Context, workspaceID string, livemode bool, f store.ExportFilter, fn func(store.ExportRow) error) error {
	return s.Store.ExportTransactions(ctx, workspaceID, livemode, f, fn)
}

// Overview is the workspace's figures of one mode over the last days
// (today, GMT, included), and the period's first day.
func (s *Service) Overview(ctx context.Context, workspaceID string, livemode bool, days int) (*store.Stats, time.Time, error) {
	today := s.Now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, 1-days)
	st, err := s.Store.Stats(ctx, workspaceID, livemode, since, today.Add(24*time.Hour))
	return st, since, err
}

// Balance is what the service holds for a Connect workspace, by currency.
func (s *Service) Balance(ctx context.Context, ws *cauri.Workspace) (map[cauri.Currency]int64, error) {
	if !ws.Connect {
		return nil, notConnect(ws.ID)
	}
	return s.Store.Balance(ctx, ws.ID)
}

func notConnect(workspaceID string) error {
	return cauri.Errorf(cauri.EForbidden, "Workspace %s is not a Connect workspace: the service holds no money for it", workspaceID)
}

// Settle records a settlement paid out to a Connect workspace outside the
// service (a bank or Mobile Money transfer made by the administration),
// amount in minor units of cur: its balance goes down by amount, never
// below zero (cauri.CoversSettlement). The reference is the payout's at
// the bank or the operator: settling again with it records nothing and
// returns the first movement, if it was of the same amount (EConflict
// otherwise).
func (s *Service) Settle(ctx context.Context, workspaceID string, cur cauri.Currency, amount int64, reference string) (*store.Movement, error) {
	if amount <= 0 {
		return nil, cauri.Errorf(cauri.EInvalid, "the amount must be positive")
	}
	ref, err := cauri.CleanText("reference", reference, 200)
	if err != nil || ref == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "a settlement needs its reference (the payout's, at the bank or the operator), at most 200 characters")
	}
	return s.Store.Settle(ctx, workspaceID, cur, amount, ref, s.Now(), func(f store.Settlement) error {
		if !f.Connect {
			return notConnect(workspaceID)
		}
		if p := f.Previous; p != nil {
			if p.Currency != cur || p.Amount != amount {
				return cauri.Errorf(cauri.EConflict, "Settlement %s was recorded with another amount (%d %s)", ref, p.Amount, p.Currency)
			}
			return nil // the same settlement again: recorded once
		}
		return cauri.CoversSettlement(f.Balance, amount, cur)
	})
}

// Checklist is a workspace's first-run checklist: what a merchant does
// before taking payments, each part done or not. Its API keys are always
// there (a workspace is made with them).
type Checklist struct {
	TestPayment bool // a test payment succeeded
	WebhookURL  bool // a webhook address is saved
	Webhook     bool // a webhook reached the merchant's server (a 2xx)
	Gateway     bool // a gateway is enabled; always, for a Connect workspace (the service's serve it)
	Verified    bool // the workspace's identity is verified: live payments
	Connect     bool // no gateway of its own to add
}

// Done reports whether everything is done: the checklist is no longer shown.
func (c Checklist) Done() bool { return c.TestPayment && c.Webhook && c.Gateway && c.Verified }

// Checklist reads a workspace's first-run checklist (one statement of
// indexed look-ups).
func (s *Service) Checklist(ctx context.Context, ws *cauri.Workspace) (Checklist, error) {
	st, err := s.Store.Setup(ctx, ws.ID)
	if err != nil {
		return Checklist{}, err
	}
	return Checklist{TestPayment: st.TestPayment, WebhookURL: st.WebhookURL, Webhook: st.Delivered,
		Gateway: st.Gateway || ws.Connect, Verified: ws.Verified, Connect: ws.Connect}, nil
}
