package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/cauri-pay/cauri"
)

const linkColumns = `id, workspace_id, slug, title, amount, currency, active, created_at, updated_at,
	expires_at, max_payments, phone, metadata`

func scanLink(row interface{ Scan(...any) error }) (*cauri.PaymentLink, error) {
	var l cauri.PaymentLink
	var cur, md string
	var created, updated int64
	var expires, max sql.NullInt64
	if err := row.Scan(&l.ID, &l.WorkspaceID, &l.Slug, &l.Title, &l.Amount, &cur, &l.Active, &created, &updated,
		&expires, &max, &l.Phone, &md); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(md), &l.Metadata); err != nil {
		return nil, err
	}
	l.Currency, l.CreatedAt, l.UpdatedAt = cauri.Currency(cur), fromMicros(created), fromMicros(updated)
	l.ExpiresAt, l.MaxPayments = fromNullMicros(expires), int(max.Int64)
	return &l, nil
}

// CreateLink stores a new payment link.
func (s *Store) CreateLink(ctx context.Context, l *cauri.PaymentLink) error {
	md, err := json.Marshal(l.Metadata)
	if err != nil {
		return err
	}
	if l.Metadata == nil {
		md = []byte("{}")
	}
	var max any
	if l.MaxPayments > 0 {
		max = int64(l.MaxPayments)
	}
	_, err = s.update(ctx, `INSERT INTO payment_links (`+linkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.WorkspaceID, l.Slug, l.Title, l.Amount, string(l.Currency), l.Active, micros(l.CreatedAt), micros(l.UpdatedAt),
		nullMicros(l.ExpiresAt), max, l.Phone, string(md))
	return err
}

// Link reads a workspace's payment link.
func (s *Store) Link(ctx context.Context, workspaceID, id string) (*cauri.PaymentLink, error) {
	if !cauri.IsID("pl_", id) {
		return nil, errNotFound("Payment link %s not found", printable(id))
	}
	return s.link(ctx, `id = ? AND workspace_id = ?`, id, workspaceID)
}

// LinkPage is a page of a workspace's links, newest first: at most Limit
// links, those created before the link After (its creation time and id)
// when it is set.
type LinkPage struct {
	Limit int
	After *cauri.PaymentLink
}

// Links lists a workspace's payment links, newest first (ties broken by
// id), one page of them: read in its index's order, stopping at the limit.
func (s *Store) Links(ctx context.Context, workspaceID string, p LinkPage) ([]*cauri.PaymentLink, error) {
	q, args := `SELECT `+linkColumns+` FROM payment_links WHERE workspace_id = ?`, []any{workspaceID}
	if p.After != nil {
		at := micros(p.After.CreatedAt)
		q += ` AND created_at <= ? AND (created_at < ? OR id < ?)`
		args = append(args, at, at, p.After.ID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, p.Limit)
	var out []*cauri.PaymentLink
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanLink, q, args...)
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

// UpdateLink changes a workspace's payment link under its lock: change
// sees the link, changes its state (active, expiry) in place or refuses
// (nothing is written). The link as written is returned.
func (s *Store) UpdateLink(ctx context.Context, workspaceID, id string, change func(*cauri.PaymentLink) error) (*cauri.PaymentLink, error) {
	if !cauri.IsID("pl_", id) {
		return nil, errNotFound("Payment link %s not found", printable(id))
	}
	var l *cauri.PaymentLink
	err := s.tx(ctx, func(t *tx) (err error) {
		l, err = scanLink(t.queryRow(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE id = ? AND workspace_id = ?`+s.forUpdate(), id, workspaceID))
		if err != nil {
			return notFound(err, "Payment link %s not found", printable(id))
		}
		if err := change(l); err != nil {
			return err
		}
		_, err = t.exec(ctx, `UPDATE payment_links SET active = ?, expires_at = ?, updated_at = ? WHERE id = ?`,
			l.Active, nullMicros(l.ExpiresAt), micros(l.UpdatedAt), l.ID)
		return err
	})
	return l, err
}

// LinkUse is what a link's limit of payments is judged on: the link, the
// number of its sessions that succeeded, and the number of its other
// sessions whose payment is under way (an attempt pending: it may still
// succeed).
type LinkUse struct {
	Link      *cauri.PaymentLink
	Completed int
	InFlight  int
}

// linkUse counts a link's sessions that were paid (SUCCESS, or REFUNDED
// since: the link was used), and those, other than except, with a pending
// attempt. A session with a pending attempt is PENDING (a session has one
// pending attempt at most, and only the end of that attempt moves it to
// another status), so only the link's PENDING sessions are looked at. Both
// are counted in one statement, so in one snapshot: a payment that ends
// between two statements would be counted by neither.
func (t *tx) linkUse(ctx context.Context, l *cauri.PaymentLink, except string) (*LinkUse, error) {
	u := &LinkUse{Link: l}
	err := t.queryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM checkout_sessions WHERE link_id = ? AND status IN (?, ?)),
		(SELECT COUNT(*) FROM checkout_sessions s WHERE s.link_id = ? AND s.status = ? AND s.id <> ?
			AND EXISTS (SELECT 1 FROM payment_attempts a WHERE a.session_id = s.id AND a.status = ?))`,
		l.ID, string(cauri.SessionSuccess), string(cauri.SessionRefunded),
		l.ID, string(cauri.SessionPending), except, string(cauri.AttemptPending)).Scan(&u.Completed, &u.InFlight)
	return u, err
}

// LinkUse reads a link's use as a payment's admission judges it (without
// its lock: what a page shows).
func (s *Store) LinkUse(ctx context.Context, l *cauri.PaymentLink) (*LinkUse, error) {
	var u *LinkUse
	err := s.read(ctx, func(t *tx) (err error) {
		u, err = t.linkUse(ctx, l, "")
		return err
	})
	return u, err
}

// LinkPayments counts the successful payments of each of the links ids.
func (s *Store) LinkPayments(ctx context.Context, ids []string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{string(cauri.SessionSuccess)}
	for _, id := range ids {
		args = append(args, id)
	}
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT link_id, COUNT(*) FROM checkout_sessions WHERE status = ? AND link_id IN (?`+
			strings.Repeat(", ?", len(ids)-1)+`) GROUP BY link_id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			out[id] = n
		}
		return rows.Err()
	})
	return out, err
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

// linkForAttempt reads the link a session was created through, under the
// link's lock (on SQLite the transaction holds the write lock already), and
// its use: the admission of a payment of the link is judged on it, one at
// a time across every node.
func (s *Store) linkForAttempt(ctx context.Context, t *tx, sess *cauri.Session) (*LinkUse, error) {
	if sess.LinkID == "" {
		return nil, nil
	}
	l, err := scanLink(t.queryRow(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE id = ?`+s.forUpdate(), sess.LinkID))
	if err != nil {
		return nil, notFound(err, "Payment link %s not found", printable(sess.LinkID))
	}
	return t.linkUse(ctx, l, sess.ID)
}
