package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_AcceptInvitation: a link works once; a newcomer's password is
// refused when an account was made for the address meanwhile (joining then
// needs that account's password, checked by the caller).
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
		if _, err := s.AcceptInvitation(ctx, "tok-1", newcomer, "hash-of-mine", t0.Add(time.Minute)); code(err) != cauri.EConflict {
			t.Fatalf("a new password for an existing account: err = %v; want conflict", err)
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
	})
}
