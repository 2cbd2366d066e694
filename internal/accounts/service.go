package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the accounts service keeps and reads (*store.Store).
type Store interface {
	Authenticate(ctx context.Context, key string, now time.Time) (*cauri.Workspace, *cauri.Key, error)
	Workspace(ctx context.Context, id string) (*cauri.Workspace, error)
	Keys(ctx context.Context, workspaceID string, now time.Time) ([]*cauri.Key, error)
	RollKey(ctx context.Context, workspaceID string, kind cauri.KeyKind, live bool, grace time.Duration, now time.Time) (*cauri.Key, error)

	UserByEmail(ctx context.Context, email string) (*cauri.User, string, error)
	UserWorkspaces(ctx context.Context, userID string) ([]*cauri.Workspace, error)
	CreateDashboardSession(ctx context.Context, token string, d store.DashboardSession, now time.Time) error
	DashboardSessionByToken(ctx context.Context, token string, now time.Time) (*store.DashboardSession, error)
	SetDashboardWorkspace(ctx context.Context, token, workspaceID string, livemode bool) error
	DeleteDashboardSession(ctx context.Context, token string) error

	Members(ctx context.Context, workspaceID string) ([]store.Member, error)
	PendingInvitations(ctx context.Context, workspaceID string, now time.Time) ([]*cauri.Invitation, error)
	CreateInvitation(ctx context.Context, inv *cauri.Invitation, token string) error
	RevokeInvitation(ctx context.Context, workspaceID, id string, now time.Time) error
	InvitationByToken(ctx context.Context, token string, now time.Time) (*cauri.Invitation, string, bool, error)
	AcceptInvitation(ctx context.Context, token string, u *cauri.User, passwordHash string, now time.Time) (string, error)
}

// Service is the rules of who may do what: API keys, the dashboard's
// sign-in and sessions, its team and invitations. Throttling is the HTTP
// layer's (per address and network); what is checked here holds for every
// caller.
type Service struct {
	Store Store
	Now   func() time.Time
}

// Authenticate returns the workspace and the key of an API key; a key
// that matches none, or no longer works, is ENotFound.
func (s *Service) Authenticate(ctx context.Context, key string) (*cauri.Workspace, *cauri.Key, error) {
	return s.Store.Authenticate(ctx, key, s.Now())
}

// Workspace reads a workspace.
func (s *Service) Workspace(ctx context.Context, id string) (*cauri.Workspace, error) {
	return s.Store.Workspace(ctx, id)
}

// Keys lists a workspace's keys that work (rolled ones until their grace
// period ends).
func (s *Service) Keys(ctx context.Context, workspaceID string) ([]*cauri.Key, error) {
	return s.Store.Keys(ctx, workspaceID, s.Now())
}

// SigningKeys lists the keys that sign a mode's webhooks now: its secret
// keys that work, newest first, as the delivery worker reads them
// (store.DeliveryTargets): a rolled key signs too until it stops working.
func (s *Service) SigningKeys(ctx context.Context, workspaceID string, live bool) ([]*cauri.Key, error) {
	keys, err := s.Keys(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	var out []*cauri.Key
	for _, k := range keys {
		if k.Kind == cauri.KeySecret && k.Live == live {
			out = append(out, k)
		}
	}
	return out, nil
}

// RollKey makes a new key of a mode and kind (its Plaintext set, shown
// once); the keys it replaces keep working for grace, 0 (they stop at
// once) to cauri.MaxKeyGrace.
func (s *Service) RollKey(ctx context.Context, workspaceID string, kind cauri.KeyKind, live bool, grace time.Duration) (*cauri.Key, error) {
	if kind != cauri.KeyPublic && kind != cauri.KeySecret {
		return nil, cauri.Errorf(cauri.EInvalid, "key kind must be pub or sec")
	}
	if grace < 0 || grace > cauri.MaxKeyGrace {
		return nil, cauri.Errorf(cauri.EInvalid, "the grace period must be between 0 and 7 days")
	}
	return s.Store.RollKey(ctx, workspaceID, kind, live, grace, s.Now())
}

// errWrongSignIn answers a sign-in with an unknown address or a wrong
// password alike.
var errWrongSignIn = cauri.Errorf(cauri.EUnauthorized, "Wrong e-mail address or password")

// SignIn checks an address and its password and starts a dashboard
// session, returning its token: the workspace is selected when the user
// has one, live data shown. An unknown address and a wrong password are
// the same EUnauthorized, answered in the same time.
func (s *Service) SignIn(ctx context.Context, email, password string) (string, error) {
	var u *cauri.User
	var hash string
	_, err := cauri.NormalizeEmail(email)
	if err != nil {
		err = cauri.Errorf(cauri.ENotFound, "No user") // not an address: no account has it (and no query)
	} else {
		u, hash, err = s.Store.UserByEmail(ctx, email)
	}
	if cauri.ErrorCode(err) == cauri.ENotFound {
		PasswordMatches("", password) // the same time either way
		return "", errWrongSignIn
	}
	if err != nil {
		return "", err
	}
	if !PasswordMatches(hash, password) {
		return "", errWrongSignIn
	}
	d := store.DashboardSession{UserID: u.ID, Livemode: true}
	if list, err := s.Store.UserWorkspaces(ctx, u.ID); err == nil && len(list) == 1 {
		d.WorkspaceID = list[0].ID // one workspace: selected; several: the user picks
	}
	return s.startSession(ctx, d)
}

// startSession stores a dashboard session of DashboardSessionLifetime and
// returns its token.
func (s *Service) startSession(ctx context.Context, d store.DashboardSession) (string, error) {
	d.ExpiresAt = s.Now().Add(cauri.DashboardSessionLifetime)
	token := NewToken()
	if err := s.Store.CreateDashboardSession(ctx, token, d, s.Now()); err != nil {
		return "", err
	}
	return token, nil
}

// Session reads the dashboard session of token; one that expired or was
// signed out is EUnauthorized.
func (s *Service) Session(ctx context.Context, token string) (*store.DashboardSession, error) {
	d, err := s.Store.DashboardSessionByToken(ctx, token, s.Now())
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return nil, cauri.Errorf(cauri.EUnauthorized, "Your dashboard session expired; sign in again")
	}
	return d, err
}

// SignOut ends the dashboard session of token.
func (s *Service) SignOut(ctx context.Context, token string) error {
	return s.Store.DeleteDashboardSession(ctx, token)
}

// Select sets the workspace (one of the user's: EForbidden otherwise) and
// the mode the session shows.
func (s *Service) Select(ctx context.Context, token, workspaceID string, livemode bool) error {
	err := s.Store.SetDashboardWorkspace(ctx, token, workspaceID, livemode)
	if errors.Is(err, store.ErrNotMember) {
		return cauri.Errorf(cauri.EForbidden, "You do not belong to workspace %s", cauri.Printable(workspaceID))
	}
	return err
}

// Team is a workspace's members and its invitations still pending.
func (s *Service) Team(ctx context.Context, workspaceID string) ([]store.Member, []*cauri.Invitation, error) {
	members, err := s.Store.Members(ctx, workspaceID)
	if err != nil {
		return nil, nil, err
	}
	pending, err := s.Store.PendingInvitations(ctx, workspaceID, s.Now())
	return members, pending, err
}

// Invite invites an address to a workspace for InvitationLifetime and
// returns the invitation's token (Cauri sends no e-mail: the inviter
// passes the link on). An address that is already a member is EConflict.
func (s *Service) Invite(ctx context.Context, workspaceID, byUserID, email string) (string, error) {
	email, err := cauri.NormalizeEmail(email)
	if err != nil {
		return "", err
	}
	now := s.Now()
	token := NewToken()
	inv := &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: workspaceID, Email: email, InvitedBy: byUserID, CreatedAt: now,
		ExpiresAt: now.Add(cauri.InvitationLifetime)}
	err = s.Store.CreateInvitation(ctx, inv, token)
	if errors.Is(err, store.ErrAlreadyMember) {
		return "", cauri.Errorf(cauri.EConflict, "%s is already a member of this workspace", email)
	}
	if err != nil {
		return "", err
	}
	return token, nil
}

// Revoke revokes a workspace's pending invitation.
func (s *Service) Revoke(ctx context.Context, workspaceID, id string) error {
	return s.Store.RevokeInvitation(ctx, workspaceID, id, s.Now())
}

// Invitation reads the invitation of token, the name of its workspace and
// whether its address has an account; one that no longer works (used,
// revoked, expired) is ENotFound.
func (s *Service) Invitation(ctx context.Context, token string) (*cauri.Invitation, string, bool, error) {
	return s.Store.InvitationByToken(ctx, token, s.Now())
}

// Accept joins the invitation's workspace, creating the account with
// password (judged as every new password) or checking the account's, and
// starts a dashboard session on that workspace, returning its token. An
// account made for the address since the invitation was read must be
// joined with its password (EConflict: reload the page).
func (s *Service) Accept(ctx context.Context, token, password string) (string, error) {
	inv, _, hasAccount, err := s.Invitation(ctx, token)
	if err != nil {
		return "", err
	}
	u := &cauri.User{ID: cauri.NewID("usr_"), Email: inv.Email, CreatedAt: s.Now()}
	var hash string
	if hasAccount {
		_, known, err := s.Store.UserByEmail(ctx, inv.Email)
		if err != nil {
			return "", err
		}
		if !PasswordMatches(known, password) {
			return "", cauri.Errorf(cauri.EUnauthorized, "Wrong password for %s", inv.Email)
		}
	} else if hash, err = HashPassword(password, inv.Email); err != nil {
		return "", err
	}
	userID, err := s.Store.AcceptInvitation(ctx, token, u, hash, s.Now())
	switch {
	case errors.Is(err, store.ErrAccountExists):
		// Made since the invitation was read: joining must prove the
		// account's password, not set one.
		return "", cauri.Errorf(cauri.EConflict, "An account now exists for %s: reload the page and give its password", inv.Email)
	case errors.Is(err, store.ErrNoAccount):
		return "", cauri.Errorf(cauri.EInvalid, "Choose a password")
	case err != nil:
		return "", err
	}
	return s.startSession(ctx, store.DashboardSession{UserID: userID, WorkspaceID: inv.WorkspaceID, Livemode: true})
}

// Workspaces lists the workspaces a user belongs to.
func (s *Service) Workspaces(ctx context.Context, userID string) ([]*cauri.Workspace, error) {
	return s.Store.UserWorkspaces(ctx, userID)
}
