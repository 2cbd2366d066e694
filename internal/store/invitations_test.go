package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_AcceptInvitation: a link works once; a newcomer's password is
// refused (ErrAccountExists) when an account was made for the address
// meanwhile (joining then needs that account's password, checked by the
// caller); an address without an account needs a password hash
// (ErrNoAccount); a member is not invited again (ErrAlreadyMember).
func TestStore_AcceptInvitation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		inv := &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: ws.ID, Email: "late@example.com", InvitedBy: "usr_x", CreatedAt: t0,
			ExpiresAt: t0.Add(cauri.InvitationLifetime)}
		if err := s.CreateInvitation(ctx, inv, "tok-1"); err != nil {
			t.Fatal(err)
		}
		other, _ := newWorkspace(t, s)
		if _, _, err := s.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "late@example.com", CreatedAt: t0}, "hash-of-theirs", other.ID); err != nil {
			t.Fatal(err)
		}
		newcomer := &cauri.User{ID: cauri.NewID("usr_"), Email: "late@example.com", CreatedAt: t0}
		if _, err := s.AcceptInvitation(ctx, "tok-1", newcomer, "hash-of-mine", t0.Add(time.Minute)); !errors.Is(err, store.ErrAccountExists) {
			t.Fatalf("a new password for an existing account: err = %v; want %v", err, store.ErrAccountExists)
		}
		u, _, _ := s.UserByEmail(ctx, "late@example.com")
		id, err := s.AcceptInvitation(ctx, "tok-1", newcomer, "", t0.Add(time.Minute))
		if err != nil || id != u.ID {
			t.Fatalf("joining as the existing user = %q, %v; want %s", id, err, u.ID)
		}
		if _, err := s.AcceptInvitation(ctx, "tok-1", newcomer, "", t0.Add(2*time.Minute)); code(err) != cauri.ENotFound {
			t.Fatalf("a used link: err = %v; want not_found", err)
		}
		if list, _ := s.UserWorkspaces(ctx, u.ID); len(list) != 2 {
			t.Fatalf("workspaces = %d; want 2", len(list))
		}
		again := &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: ws.ID, Email: "late@example.com", InvitedBy: "usr_x", CreatedAt: t0,
			ExpiresAt: t0.Add(cauri.InvitationLifetime)}
		if err := s.CreateInvitation(ctx, again, "tok-2"); !errors.Is(err, store.ErrAlreadyMember) {
			t.Fatalf("inviting a member: err = %v; want %v", err, store.ErrAlreadyMember)
		}
		if pending, _ := s.PendingInvitations(ctx, ws.ID, t0); len(pending) != 0 {
			t.Fatalf("a member's invitation was stored: %+v", pending)
		}
		fresh := &cauri.Invitation{ID: cauri.NewID("inv_"), WorkspaceID: ws.ID, Email: "fresh@example.com", InvitedBy: "usr_x", CreatedAt: t0,
			ExpiresAt: t0.Add(cauri.InvitationLifetime)}
		if err := s.CreateInvitation(ctx, fresh, "tok-3"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AcceptInvitation(ctx, "tok-3", &cauri.User{ID: cauri.NewID("usr_"), Email: "fresh@example.com"}, "", t0); !errors.Is(err, store.ErrNoAccount) {
			t.Fatalf("a new account without a password hash: err = %v; want %v", err, store.ErrNoAccount)
		}
		if _, _, ok, err := s.InvitationByToken(ctx, "tok-3", t0); err != nil || ok {
			t.Fatalf("after a refused acceptance: err = %v, has account %v; want the invitation still valid, no account", err, ok)
		}
	})
}

// TestStore_SetDashboardWorkspace: a session selects a workspace its user
// belongs to; any other is ErrNotMember, and the session is unchanged.
func TestStore_SetDashboardWorkspace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		other, _ := newWorkspace(t, s)
		u, _, err := s.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "awa@example.com", CreatedAt: t0}, "hash", ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateDashboardSession(ctx, "tok", store.DashboardSession{UserID: u.ID, ExpiresAt: t0.Add(time.Hour)}, t0); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDashboardWorkspace(ctx, "tok", ws.ID, true); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{other.ID, "ws_nope", cauri.NewID("ws_")} {
			if err := s.SetDashboardWorkspace(ctx, "tok", id, false); !errors.Is(err, store.ErrNotMember) {
				t.Errorf("select %q: err = %v; want %v", id, err, store.ErrNotMember)
			}
		}
		if err := s.SetDashboardWorkspace(ctx, "another token", ws.ID, false); !errors.Is(err, store.ErrNotMember) {
			t.Errorf("select with no such session: err = %v; want %v", err, store.ErrNotMember)
		}
		if d, err := s.DashboardSessionByToken(ctx, "tok", t0); err != nil || d.WorkspaceID != ws.ID || !d.Livemode {
			t.Fatalf("session = %+v, %v; want %s, live, as selected", d, err, ws.ID)
		}
	})
}
