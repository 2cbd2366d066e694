package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
)

const linkColumns = `id, workspace_id, slug, title, amount, currency, active, created_at, updated_at`

func scanLink(row interface{ Scan(...any) error }) (*cauri.PaymentLink, error) {
	var l cauri.PaymentLink
	var cur string
	var created, updated int64
	if err := row.Scan(&l.ID, &l.WorkspaceID, &l.Slug, &l.Title, &l.Amount, &cur, &l.Active, &created, &updated); err != nil {
		return nil, err
	}
	l.Currency, l.CreatedAt, l.UpdatedAt = cauri.Currency(cur), fromMicros(created), fromMicros(updated)
	return &l, nil
}

// CreateLink stores a new payment link.
func (s *Store) CreateLink(ctx context.Context, l *cauri.PaymentLink) error {
	_, err := s.update(ctx, `INSERT INTO payment_links (`+linkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.WorkspaceID, l.Slug, l.Title, l.Amount, string(l.Currency), l.Active, micros(l.CreatedAt), micros(l.UpdatedAt))
	return err
}

// Link reads a workspace's payment link.
func (s *Store) Link(ctx context.Context, workspaceID, id string) (*cauri.PaymentLink, error) {
	if !cauri.IsID("pl_", id) {
		return nil, errNotFound("Payment link %s not found", printable(id))
	}
	return s.link(ctx, `id = ? AND workspace_id = ?`, id, workspaceID)
}

// Links lists a workspace's payment links, newest first.
func (s *Store) Links(ctx context.Context, workspaceID string) ([]*cauri.PaymentLink, error) {
	var out []*cauri.PaymentLink
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanLink, `SELECT `+linkColumns+` FROM payment_links WHERE workspace_id = ? ORDER BY created_at DESC, id DESC`, workspaceID)
		return err
	})
	return out, err
}

// LinkBySlug reads a payment link by its page's slug.
func (s *Store) LinkBySlug(ctx context.Context, slug string) (*cauri.PaymentLink, error) {
	if len(slug) != 16 || strings.Trim(slug, "abcdefghijklmnopqrstuvwxyz234567") != "" {
		return nil, errNotFound("Payment link not found") // not a slug NewSlug makes: no query
	}
	return s.link(ctx, `slug = ?`, slug)
}

func (s *Store) link(ctx context.Context, where string, args ...any) (*cauri.PaymentLink, error) {
	var l *cauri.PaymentLink
	err := s.read(ctx, func(t *tx) (err error) {
		l, err = scanLink(t.queryRow(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE `+where, args...))
		return notFound(err, "Payment link not found")
	})
	return l, err
}

// SetLinkActive deactivates or reactivates a workspace's payment link.
func (s *Store) SetLinkActive(ctx context.Context, workspaceID, id string, active bool, now time.Time) (*cauri.PaymentLink, error) {
	if !cauri.IsID("pl_", id) {
		return nil, errNotFound("Payment link %s not found", printable(id))
	}
	n, err := s.update(ctx, `UPDATE payment_links SET active = ?, updated_at = ? WHERE id = ? AND workspace_id = ?`, active, micros(now), id, workspaceID)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errNotFound("Payment link %s not found", id)
	}
	return s.Link(ctx, workspaceID, id)
}

// LinkSessions returns, of a link's sessions, the latest that succeeded and
// the latest that did not fail (either may be nil).
func (s *Store) LinkSessions(ctx context.Context, linkID string) (paid, latest *cauri.Session, err error) {
	err = s.read(ctx, func(t *tx) error {
		var err error
		paid, err = scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE link_id = ? AND status = ?
			ORDER BY completed_at DESC, id DESC LIMIT 1`, linkID, string(cauri.SessionSuccess)))
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		latest, err = scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE link_id = ? AND status <> ?
			ORDER BY created_at DESC, id DESC LIMIT 1`, linkID, string(cauri.SessionFailed)))
		if err == sql.ErrNoRows {
			return nil
		}
		return err
	})
	return paid, latest, err
}
