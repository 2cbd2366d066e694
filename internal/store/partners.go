package store

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
)

// Partner is a partner product that provisions merchants through
// /v1/partner with its own secret (issued by the service administration).
type Partner struct {
	ID        string
	Name      string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// CreatePartner stores a partner for its secret (only its hash). Audited.
func (s *Store) CreatePartner(ctx context.Context, p *Partner, secret string) error {
	return s.tx(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO partners (id, name, secret_hash, created_at) VALUES (?, ?, ?, ?)`,
			p.ID, p.Name, tokenHash(secret), micros(p.CreatedAt)); err != nil {
			return err
		}
		return t.audit(ctx, p.CreatedAt, "partner.created", "", map[string]any{"partner": p.ID, "name": p.Name})
	})
}

func scanPartner(row interface{ Scan(...any) error }) (*Partner, error) {
	var p Partner
	var created int64
	var revoked *int64
	if err := row.Scan(&p.ID, &p.Name, &created, &revoked); err != nil {
		return nil, err
	}
	p.CreatedAt = fromMicros(created)
	if revoked != nil {
		r := fromMicros(*revoked)
		p.RevokedAt = &r
	}
	return &p, nil
}

// Partners lists the partners, oldest first.
func (s *Store) Partners(ctx context.Context) ([]*Partner, error) {
	var out []*Partner
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanPartner, `SELECT id, name, created_at, revoked_at FROM partners ORDER BY created_at, id`)
		return err
	})
	return out, err
}

// ActivePartners counts the partners whose secret works.
func (s *Store) ActivePartners(ctx context.Context) (int, error) {
	var n int
	err := s.read(ctx, func(t *tx) error {
		return t.queryRow(ctx, `SELECT COUNT(*) FROM partners WHERE revoked_at IS NULL`).Scan(&n)
	})
	return n, err
}

// PartnerBySecret finds the partner whose secret this is (by its hash); a
// revoked partner's secret is ENotFound.
func (s *Store) PartnerBySecret(ctx context.Context, secret string) (*Partner, error) {
	var p *Partner
	err := s.read(ctx, func(t *tx) (err error) {
		p, err = scanPartner(t.queryRow(ctx, `SELECT id, name, created_at, revoked_at FROM partners WHERE secret_hash = ? AND revoked_at IS NULL`,
			tokenHash(secret)))
		return notFound(err, "No partner has this secret")
	})
	return p, err
}

// RevokePartner makes a partner's secret stop working (audited); the
// merchants it created stay as they are.
func (s *Store) RevokePartner(ctx context.Context, id string, now time.Time) error {
	return s.tx(ctx, func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE partners SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, micros(now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errNotFound("Partner %s not found or already revoked", printable(id))
		}
		return t.audit(ctx, now, "partner.revoked", "", map[string]any{"partner": id})
	})
}

// PartnerWorkspaces lists the workspaces a partner created, newest first,
// at most limit.
func (s *Store) PartnerWorkspaces(ctx context.Context, partnerID string, limit int) ([]*cauri.Workspace, error) {
	var out []*cauri.Workspace
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*cauri.Workspace, error) { return scanWorkspace(row) },
			`SELECT `+workspaceColumns+` FROM workspaces w WHERE w.partner_id = ? ORDER BY w.created_at DESC, w.id LIMIT ?`, partnerID, limit)
		return err
	})
	return out, err
}

// Audit records an action that changes nothing in the store itself (a
// partner's read, say), for the audit log.
func (s *Store) Audit(ctx context.Context, now time.Time, action, workspaceID string, detail map[string]any) error {
	return s.tx(ctx, func(t *tx) error { return t.audit(ctx, now, action, workspaceID, detail) })
}
