package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/cauri-pay/cauri"
)

// CreateInvitation stores an invitation for its link's token (only its
// hash). An address that is already a member is ErrAlreadyMember, checked
// in the transaction that stores it; an earlier pending invitation of the
// same address is revoked. Audited.
func (s *Store) CreateInvitation(ctx context.Context, inv *cauri.Invitation, token string) error {
	return s.tx(ctx, func(t *tx) error { return t.insertInvitation(ctx, inv, token) })
}

// insertInvitation is CreateInvitation in the caller's transaction.
func (t *tx) insertInvitation(ctx context.Context, inv *cauri.Invitation, token string) error {
	var member int
	if err := t.queryRow(ctx, `SELECT COUNT(*) FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = ? AND u.email = ?`, inv.WorkspaceID, inv.Email).Scan(&member); err != nil {
		return err
	}
	if member > 0 {
		return ErrAlreadyMember
	}
	if _, err := t.exec(ctx, `UPDATE invitations SET revoked_at = ? WHERE workspace_id = ? AND email = ?
		AND accepted_at IS NULL AND revoked_at IS NULL`, micros(inv.CreatedAt), inv.WorkspaceID, inv.Email); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `INSERT INTO invitations (token_hash, id, workspace_id, email, invited_by, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, tokenHash(token), inv.ID, inv.WorkspaceID, inv.Email, inv.InvitedBy,
		micros(inv.CreatedAt), micros(inv.ExpiresAt)); err != nil {
		return err
	}
	return t.audit(ctx, inv.CreatedAt, "invitation.created", inv.WorkspaceID, map[string]any{"invitation": inv.ID, "email": inv.Email})
}

const invitationColumns = `i.id, i.workspace_id, i.email, i.invited_by, i.created_at, i.expires_at`

func scanInvitation(row interface{ Scan(...any) error }, extra ...any) (*cauri.Invitation, error) {
	var inv cauri.Invitation
	var created, expires int64
	if err := row.Scan(append([]any{&inv.ID, &inv.WorkspaceID, &inv.Email, &inv.InvitedBy, &created, &expires}, extra...)...); err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &inv, nil
}

// PendingInvitations lists a workspace's invitations that can still be
// accepted, newest first.
func (s *Store) PendingInvitations(ctx context.Context, workspaceID string, now time.Time) ([]*cauri.Invitation, error) {
	var out []*cauri.Invitation
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*cauri.Invitation, error) { return scanInvitation(row) },
			`SELECT `+invitationColumns+` FROM invitations i WHERE i.workspace_id = ? AND i.accepted_at IS NULL
			AND i.revoked_at IS NULL AND i.expires_at > ? ORDER BY i.created_at DESC, i.id`, workspaceID, micros(now))
		return err
	})
	return out, err
}

// RevokeInvitation makes a pending invitation's link stop working (audited).
func (s *Store) RevokeInvitation(ctx context.Context, workspaceID, id string, now time.Time) error {
	if !cauri.IsID("inv_", id) {
		return errNotFound("Invitation %s not found", printable(id))
	}
	return s.tx(ctx, func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE invitations SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND accepted_at IS NULL
			AND revoked_at IS NULL`, micros(now), id, workspaceID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errNotFound("Invitation %s not found or no longer pending", id)
		}
		return t.audit(ctx, now, "invitation.revoked", workspaceID, map[string]any{"invitation": id})
	})
}

// InvitationByToken reads the invitation of a link that still works, with
// its workspace's name and whether its address already has an account.
func (s *Store) InvitationByToken(ctx context.Context, token string, now time.Time) (inv *cauri.Invitation, workspace string, hasAccount bool, err error) {
	err = s.read(ctx, func(t *tx) error {
		var account sql.NullString
		inv, err = scanInvitation(t.queryRow(ctx, `SELECT `+invitationColumns+`, w.name, u.id FROM invitations i
			JOIN workspaces w ON w.id = i.workspace_id LEFT JOIN users u ON u.email = i.email
			WHERE i.token_hash = ? AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ?`,
			tokenHash(token), micros(now)), &workspace, &account)
		hasAccount = account.Valid
		return notFound(err, "This invitation is no longer valid")
	})
	return inv, workspace, hasAccount, err
}

// AcceptInvitation uses an invitation's link, once: its address joins the
// workspace as the user who has it (passwordHash "": the caller checked
// that user's password) or as a new user with this password hash (whose id
// is u.ID). A password hash for an address that has an account (made
// since the caller looked) is ErrAccountExists; none for an address
// without one, ErrNoAccount. It returns the member's id. Audited.
func (s *Store) AcceptInvitation(ctx context.Context, token string, u *cauri.User, passwordHash string, now time.Time) (string, error) {
	var userID string
	err := s.tx(ctx, func(t *tx) error {
		inv, err := scanInvitation(t.queryRow(ctx, `SELECT `+invitationColumns+` FROM invitations i
			WHERE i.token_hash = ? AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ?`+s.forUpdate(),
			tokenHash(token), micros(now)))
		if err != nil {
			return notFound(err, "This invitation is no longer valid")
		}
		res, err := t.exec(ctx, `UPDATE invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL`, micros(now), inv.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 { // accepted meanwhile
			return errNotFound("This invitation is no longer valid")
		}
		err = t.queryRow(ctx, `SELECT id FROM users WHERE email = ?`, inv.Email).Scan(&userID)
		switch {
		case err == nil && passwordHash != "":
			return ErrAccountExists
		case err == sql.ErrNoRows:
			if passwordHash == "" {
				return ErrNoAccount
			}
			userID = u.ID
			if _, err := t.exec(ctx, `INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)`,
				userID, inv.Email, passwordHash, micros(now)); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if _, err := t.exec(ctx, `INSERT INTO memberships (user_id, workspace_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
			userID, inv.WorkspaceID, micros(now)); err != nil {
			return err
		}
		return t.audit(WithActor(ctx, "user:"+userID), now, "invitation.accepted", inv.WorkspaceID,
			map[string]any{"invitation": inv.ID, "email": inv.Email, "invited_by": inv.InvitedBy})
	})
	return userID, err
}

// Member is a user of a workspace.
type Member struct {
	UserID, Email string
	Since         time.Time
}

// Members lists a workspace's users by address.
func (s *Store) Members(ctx context.Context, workspaceID string) ([]Member, error) {
	var out []Member
	err := s.read(ctx, func(t *tx) error {
		list, err := queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*Member, error) {
			var m Member
			var since int64
			err := row.Scan(&m.UserID, &m.Email, &since)
			m.Since = fromMicros(since)
			return &m, err
		}, `SELECT u.id, u.email, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ? ORDER BY u.email`, workspaceID)
		for _, m := range list {
			out = append(out, *m)
		}
		return err
	})
	return out, err
}
