package accounts

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// clock is the service's injected time, moved by the tests.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// newService is the service on st at a fixed time, with two workspaces.
func newService(t *testing.T, st *store.Store) (*clock, *Service, *cauri.Workspace, *cauri.Workspace) {
	clk := &clock{time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	return clk, &Service{Store: st, Now: clk.Now}, storetest.Workspace(t, st, "Boutique Adjoa", false, clk.t),
		storetest.Workspace(t, st, "Kofi Store", false, clk.t)
}

func TestSignInAndSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk, s, ws, _ := newService(t, st)
		hash, err := HashPassword("correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "awa@example.com", CreatedAt: clk.t}, hash, ws.ID); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ email, password string }{
			{"awa@example.com", "wrong password"},
			{"nobody@example.com", "correct horse battery"},
			{"not an address", "correct horse battery"},
		} {
			if _, err := s.SignIn(ctx, tc.email, tc.password); err != errWrongSignIn {
				t.Errorf("SignIn(%q, %q) = %v; want the one wrong-sign-in error", tc.email, tc.password, err)
			}
		}
		token, err := s.SignIn(ctx, "awa@example.com", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Session(ctx, token)
		if err != nil || d.WorkspaceID != ws.ID || !d.Livemode {
			t.Fatalf("session = %+v, %v; want the one workspace selected, live", d, err)
		}
		if err := s.Select(ctx, token, ws.ID, false); err != nil {
			t.Fatal(err)
		}
		if d, _ := s.Session(ctx, token); d.Livemode {
			t.Fatal("after selecting test data, the session still shows live data")
		}
		clk.t = clk.t.Add(cauri.DashboardSessionLifetime + time.Second)
		if _, err := s.Session(ctx, token); cauri.ErrorCode(err) != cauri.EUnauthorized {
			t.Fatalf("an expired session: %v; want %s", err, cauri.EUnauthorized)
		}
		token, _ = s.SignIn(ctx, "awa@example.com", "correct horse battery")
		if err := s.SignOut(ctx, token); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, token); cauri.ErrorCode(err) != cauri.EUnauthorized {
			t.Fatalf("a signed-out session: %v; want %s", err, cauri.EUnauthorized)
		}
	})
}

func TestInvitations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk, s, ws, other := newService(t, st)
		hash, _ := HashPassword("kofi's own long password")
		st.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "kofi@example.com", CreatedAt: clk.t}, hash, other.ID)

		if _, err := s.Invite(ctx, ws.ID, "usr_owner", "not an address"); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("invite a non-address: %v", err)
		}
		newcomer, err := s.Invite(ctx, ws.ID, "usr_owner", " Yao@Example.com ")
		if err != nil {
			t.Fatal(err)
		}
		if inv, name, hasAccount, err := s.Invitation(ctx, newcomer); err != nil || inv.Email != "yao@example.com" || name != "Boutique Adjoa" || hasAccount {
			t.Fatalf("invitation = %+v %q %v %v", inv, name, hasAccount, err)
		}
		if _, err := s.Accept(ctx, newcomer, "password12"); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("a weak password: %v; want %s", err, cauri.EInvalid)
		}
		session, err := s.Accept(ctx, newcomer, "a long and unguessable phrase")
		if err != nil {
			t.Fatal(err)
		}
		if d, err := s.Session(ctx, session); err != nil || d.WorkspaceID != ws.ID {
			t.Fatalf("after accepting: %+v, %v; want signed in on the workspace", d, err)
		}
		if _, err := s.Accept(ctx, newcomer, "a long and unguessable phrase"); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("an invitation used twice: %v; want %s", err, cauri.ENotFound)
		}

		existing, _ := s.Invite(ctx, ws.ID, "usr_owner", "kofi@example.com")
		if _, _, hasAccount, _ := s.Invitation(ctx, existing); !hasAccount {
			t.Fatal("an address with an account: hasAccount false")
		}
		if _, err := s.Accept(ctx, existing, "a guess"); cauri.ErrorCode(err) != cauri.EUnauthorized {
			t.Fatalf("the account's wrong password: %v; want %s", err, cauri.EUnauthorized)
		}
		revoked, _ := s.Invite(ctx, ws.ID, "usr_owner", "ama@example.com")
		members, pending, err := s.Team(ctx, ws.ID)
		if err != nil || len(members) != 1 || len(pending) != 2 {
			t.Fatalf("team = %d members, %d pending, %v; want 1 and 2", len(members), len(pending), err)
		}
		inv, _, _, _ := s.Invitation(ctx, revoked)
		if err := s.Revoke(ctx, ws.ID, inv.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.Invitation(ctx, revoked); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("a revoked invitation: %v", err)
		}
		clk.t = clk.t.Add(cauri.InvitationLifetime + time.Second)
		if _, err := s.Accept(ctx, existing, "kofi's own long password"); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("an expired invitation: %v; want %s", err, cauri.ENotFound)
		}
	})
}

// TestRollKey: the service refuses an unknown kind and a grace period out
// of 0 to cauri.MaxKeyGrace before anything is written; within the
// bounds, the key is rolled.
func TestRollKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		_, s, ws, _ := newService(t, st)
		for _, tc := range []struct {
			name       string
			workspace  string
			kind       cauri.KeyKind
			grace      time.Duration
			code, text string
		}{
			{"ErrKind", ws.ID, "xyz", 0, cauri.EInvalid, "key kind must be pub or sec"},
			{"ErrGraceTooLong", ws.ID, cauri.KeySecret, cauri.MaxKeyGrace + time.Second, cauri.EInvalid, "the grace period must be between 0 and 7 days"},
			{"ErrGraceNegative", ws.ID, cauri.KeySecret, -time.Second, cauri.EInvalid, "the grace period must be between 0 and 7 days"},
			{"ErrKindBeforeWorkspace", "ws_nope", "xyz", 0, cauri.EInvalid, "key kind must be pub or sec"},
			{"ErrWorkspace", "ws_nope", cauri.KeySecret, 0, cauri.ENotFound, "Workspace ws_nope not found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.RollKey(ctx, tc.workspace, tc.kind, true, tc.grace)
				if got := cauri.ErrorCode(err); got != tc.code {
					t.Fatalf("got %s (%v); want %s", got, err, tc.code)
				}
				if got := cauri.ErrorMessage(err); got != tc.text {
					t.Fatalf("got %q; want %q", got, tc.text)
				}
			})
		}
		if log, _ := st.AuditLog(ctx, ws.ID, 10); len(log) != 1 {
			t.Fatalf("audit log after refused rolls: got %d entries; want 1 (the creation)", len(log))
		}
		for _, grace := range []time.Duration{0, cauri.MaxKeyGrace} {
			if k, err := s.RollKey(ctx, ws.ID, cauri.KeyPublic, false, grace); err != nil || k.Kind != cauri.KeyPublic || k.Live {
				t.Fatalf("a roll with grace %s: got %+v, %v; want a new test public key", grace, k, err)
			}
		}
	})
}

// TestSelect_NotMember: a workspace the user does not belong to (or no
// workspace at all) is EForbidden, naming it as it was given.
func TestSelect_NotMember(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk, s, ws, other := newService(t, st)
		hash, _ := HashPassword("correct horse battery")
		st.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "awa@example.com", CreatedAt: clk.t}, hash, ws.ID)
		token, err := s.SignIn(ctx, "awa@example.com", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ id, want string }{
			{other.ID, "You do not belong to workspace " + other.ID},
			{"ws_nope", "You do not belong to workspace ws_nope"},
			{"ws_\"<b>\x00", `You do not belong to workspace ws_\"<b>\x00`},
		} {
			err := s.Select(ctx, token, tc.id, true)
			if got, want := cauri.ErrorCode(err), cauri.EForbidden; got != want {
				t.Fatalf("select %q: got %s (%v); want %s", tc.id, got, err, want)
			}
			if got := cauri.ErrorMessage(err); got != tc.want {
				t.Fatalf("select %q: got %q; want %q", tc.id, got, tc.want)
			}
		}
	})
}

// stale is the store as a page shown earlier saw it: whether the
// invitation's address has an account, and its password's hash, are what
// they were then, whatever they are now.
type stale struct {
	*store.Store
	hasAccount bool
	hash       string // the account's, when hasAccount
}

func (s stale) InvitationByToken(ctx context.Context, token string, now time.Time) (*cauri.Invitation, string, bool, error) {
	inv, name, _, err := s.Store.InvitationByToken(ctx, token, now)
	return inv, name, s.hasAccount, err
}

func (s stale) UserByEmail(ctx context.Context, email string) (*cauri.User, string, error) {
	if s.hasAccount {
		return &cauri.User{Email: email}, s.hash, nil
	}
	return s.Store.UserByEmail(ctx, email)
}

// TestInvitations_Refusals: a member is not invited again; an account made
// for the address after the invitation was read refuses a new password
// (reload and give the account's); an account gone since it was read
// refuses to join without one. Each leaves the invitation usable.
func TestInvitations_Refusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk, s, ws, other := newService(t, st)
		hash, _ := HashPassword("kofi's own long password")
		st.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "kofi@example.com", CreatedAt: clk.t}, hash, ws.ID)
		check := func(name string, err error, code, message string) {
			t.Helper()
			if got := cauri.ErrorCode(err); got != code {
				t.Fatalf("%s: got %s (%v); want %s", name, got, err, code)
			}
			if got := cauri.ErrorMessage(err); got != message {
				t.Fatalf("%s: got %q; want %q", name, got, message)
			}
		}

		_, err := s.Invite(ctx, ws.ID, "usr_owner", " Kofi@Example.com")
		check("invite a member", err, cauri.EConflict, "kofi@example.com is already a member of this workspace")

		// Invited without an account; the account is made (elsewhere)
		// while the page with the password field is open.
		token, err := s.Invite(ctx, ws.ID, "usr_owner", "yao@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.CreateUser(ctx, &cauri.User{ID: cauri.NewID("usr_"), Email: "yao@example.com", CreatedAt: clk.t}, hash, other.ID); err != nil {
			t.Fatal(err)
		}
		shownBefore := &Service{Store: stale{Store: st}, Now: clk.Now}
		_, err = shownBefore.Accept(ctx, token, "a long and unguessable phrase")
		check("a new password for an account made meanwhile", err, cauri.EConflict,
			"An account now exists for yao@example.com: reload the page and give its password")

		// Read as having an account that the store no longer finds.
		ghost, err := s.Invite(ctx, ws.ID, "usr_owner", "ama@example.com")
		if err != nil {
			t.Fatal(err)
		}
		gone := &Service{Store: stale{Store: st, hasAccount: true, hash: hash}, Now: clk.Now}
		_, err = gone.Accept(ctx, ghost, "kofi's own long password")
		check("joining without a password, no account", err, cauri.EInvalid, "Choose a password")

		for _, tok := range []string{token, ghost} {
			if _, _, _, err := s.Invitation(ctx, tok); err != nil {
				t.Fatalf("the invitation after a refused acceptance: %v; want still valid", err)
			}
		}
		if _, err := s.Accept(ctx, token, "kofi's own long password"); err != nil {
			t.Fatalf("joining with the account's password after reloading: %v", err)
		}
	})
}
