package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"time"

	"github.com/cauri-pay/cauri"
)

// CreateUser adds a user to a workspace: a new user with this password
// hash, or, when the e-mail address is known, the existing user (whose
// password is left as it is). It reports whether the user was new.
func (s *Store) CreateUser(ctx context.Context, u *cauri.User, passwordHash, workspaceID string) (*cauri.User, bool, error) {
	created := false
	err := s.tx(ctx, func(t *tx) (err error) {
		created, err = t.addMember(ctx, u, passwordHash, workspaceID)
		return err
	})
	return u, created, err
}

// addMember is CreateUser in the caller's transaction.
func (t *tx) addMember(ctx context.Context, u *cauri.User, passwordHash, workspaceID string) (created bool, err error) {
	var ws string
	if err := t.queryRow(ctx, `SELECT id FROM workspaces WHERE id = ?`, workspaceID).Scan(&ws); err != nil {
		return false, notFound(err, "Workspace %s not found", printable(workspaceID))
	}
	var id string
	err = t.queryRow(ctx, `SELECT id FROM users WHERE email = ?`, u.Email).Scan(&id)
	switch {
	case err == sql.ErrNoRows:
		if _, err := t.exec(ctx, `INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)`,
			u.ID, u.Email, passwordHash, micros(u.CreatedAt)); err != nil {
			return false, err
		}
		created = true
	case err != nil:
		return false, err
	default:
		u.ID = id
	}
	_, err = t.exec(ctx, `INSERT INTO memberships (user_id, workspace_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		u.ID, workspaceID, micros(u.CreatedAt))
	return created, err
}

// UserByEmail returns a user and the hash of the password.
func (s *Store) UserByEmail(ctx context.Context, email string) (*cauri.User, string, error) {
	var u cauri.User
	var hash string
	var created int64
	err := s.read(ctx, func(t *tx) error {
		return notFound(t.queryRow(ctx, `SELECT id, email, password_hash, created_at FROM users WHERE email = ?`, email).
			Scan(&u.ID, &u.Email, &hash, &created), "No user %s", printable(email))
	})
	u.CreatedAt = fromMicros(created)
	return &u, hash, err
}

// UserWorkspaces lists the workspaces a user belongs to, by name.
func (s *Store) UserWorkspaces(ctx context.Context, userID string) ([]*cauri.Workspace, error) {
	var out []*cauri.Workspace
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*cauri.Workspace, error) { return scanWorkspace(row) },
			`SELECT `+workspaceColumns+` FROM workspaces w JOIN memberships m ON m.workspace_id = w.id WHERE m.user_id = ? ORDER BY w.name, w.id`, userID)
		return err
	})
	return out, err
}

// DashboardSession is a signed-in user's session.
type DashboardSession struct {
	UserID      string
	WorkspaceID string // "" until one is selected
	Livemode    bool
	ExpiresAt   time.Time
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateDashboardSession stores a session for a token (only its hash).
func (s *Store) CreateDashboardSession(ctx context.Context, token string, d DashboardSession, now time.Time) error {
	_, err := s.update(ctx, `INSERT INTO dashboard_sessions (token_hash, user_id, workspace_id, livemode, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, tokenHash(token), d.UserID, d.WorkspaceID, d.Livemode, micros(now), micros(d.ExpiresAt))
	return err
}

// DashboardSessionByToken reads a session that has not expired.
func (s *Store) DashboardSessionByToken(ctx context.Context, token string, now time.Time) (*DashboardSession, error) {
	var d DashboardSession
	var expires int64
	err := s.read(ctx, func(t *tx) error {
		return notFound(t.queryRow(ctx, `SELECT user_id, workspace_id, livemode, expires_at FROM dashboard_sessions
			WHERE token_hash = ? AND expires_at > ?`, tokenHash(token), micros(now)).Scan(&d.UserID, &d.WorkspaceID, &d.Livemode, &expires),
			"Not signed in")
	})
	d.ExpiresAt = fromMicros(expires)
	return &d, err
}

// SetDashboardWorkspace selects the workspace and mode of a session, in
// the one statement that checks the session's user belongs to the
// workspace: ErrNotMember when not (or no such session).
func (s *Store) SetDashboardWorkspace(ctx context.Context, token, workspaceID string, livemode bool) error {
	if !cauri.IsID("ws_", workspaceID) {
		return ErrNotMember
	}
	n, err := s.update(ctx, `UPDATE dashboard_sessions SET workspace_id = ?, livemode = ? WHERE token_hash = ?
		AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = dashboard_sessions.user_id AND m.workspace_id = ?)`,
		workspaceID, livemode, tokenHash(token), workspaceID)
	if err == nil && n == 0 {
		return ErrNotMember
	}
	return err
}

// DeleteDashboardSession signs a session out.
func (s *Store) DeleteDashboardSession(ctx context.Context, token string) error {
	_, err := s.update(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = ?`, tokenHash(token))
	return err
}
