package web

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// syncBuffer is a log's output that handlers write from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var invitationRE = regexp.MustCompile(`id="invitation-link">https?://[^/]+(/dashboard/invitations/([a-z0-9]+))<`)

// TestDashboard_Team: a member invites someone by address; the link,
// shown once, lets a newcomer choose a password, or an existing user join
// with theirs, then signs them in with the workspace selected; it works
// once, until revoked or 7 days old; the token is never logged; every step
// is audited; bad forms are refused.
func TestDashboard_Team(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		logs := &syncBuffer{}
		e := newEnv(t, st, func(d *Deps) { d.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
		ws, _ := e.newWorkspace("Team shop", true)
		other, _ := e.newWorkspace("Other shop", true)
		addUser(t, st, "owner@example.com", "correct horse battery", ws.ID)
		addUser(t, st, "ama@example.com", "ama's long password", other.ID)
		owner := e.newBrowserish()
		owner.login("owner@example.com", "correct horse battery")
		if res, body := owner.get("/dashboard/team"); res.StatusCode != 200 || !strings.Contains(section(t, body, "members", "table"), "owner@example.com") {
			t.Fatalf("team page = %d", res.StatusCode)
		}
		invite := func(email string) (path, token string) {
			t.Helper()
			res, body := owner.post("/dashboard/team", url.Values{"email": {email}, "csrf": {owner.csrf()}})
			m := invitationRE.FindStringSubmatch(body)
			if res.StatusCode != 200 || m == nil {
				t.Fatalf("invite %s = %d, link %v", email, res.StatusCode, m)
			}
			return m[1], m[2]
		}
		if res, _ := owner.post("/dashboard/team", url.Values{"email": {"kofi@example.com"}}); res.StatusCode != 403 {
			t.Fatalf("invite without CSRF = %d", res.StatusCode)
		}
		for email, status := range map[string]int{"not an address": 400, "": 400, "OWNER@example.com": 409} {
			if res, _ := owner.post("/dashboard/team", url.Values{"email": {email}, "csrf": {owner.csrf()}}); res.StatusCode != status {
				t.Errorf("invite %q = %d; want %d", email, res.StatusCode, status)
			}
		}

		// A newcomer chooses a password.
		path, token := invite("Kofi@Example.com")
		if _, body := owner.get("/dashboard/team"); strings.Contains(body, token) || !strings.Contains(body, "kofi@example.com") {
			t.Fatal("the team page shows the link again, or not the pending invitation")
		}
		kofi := e.newBrowserish()
		res, body := kofi.get(path)
		if res.StatusCode != 200 || !strings.Contains(body, "Team shop") || !strings.Contains(body, `autocomplete="new-password"`) {
			t.Fatalf("invitation page = %d", res.StatusCode)
		}
		if res, _ := kofi.post(path, url.Values{"password": {"long enough password"}}); res.StatusCode != 403 {
			t.Fatalf("accept without CSRF = %d", res.StatusCode)
		}
		if res, body := kofi.post(path, url.Values{"password": {"short"}, "csrf": {kofi.csrf()}}); res.StatusCode != 400 || !strings.Contains(body, "10 to 72") {
			t.Fatalf("short password = %d", res.StatusCode)
		}
		if res, _ := kofi.post(path, url.Values{"password": {"long enough password"}, "csrf": {kofi.csrf()}}); res.StatusCode != 303 || res.Header.Get("Location") != "/dashboard" {
			t.Fatalf("accept = %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		if _, body := kofi.get("/dashboard"); !strings.Contains(body, `id="volume-chart"`) || !strings.Contains(body, "Team shop") {
			t.Fatal("the newcomer is not signed in to the workspace")
		}
		if res, _ := e.newBrowserish().get(path); res.StatusCode != 410 {
			t.Fatalf("a used link = %d; want 410", res.StatusCode)
		}
		if res := e.newBrowserish().login("kofi@example.com", "long enough password"); res.StatusCode != 303 {
			t.Fatalf("the newcomer's sign-in = %d", res.StatusCode)
		}

		// A user of another workspace joins with their own password.
		path, _ = invite("ama@example.com")
		ama := e.newBrowserish()
		if _, body := ama.get(path); !strings.Contains(body, `autocomplete="current-password"`) {
			t.Fatal("an existing user is asked to choose a password")
		}
		if res, _ := ama.post(path, url.Values{"password": {"wrong password!"}, "csrf": {ama.csrf()}}); res.StatusCode != 401 {
			t.Fatalf("wrong password = %d", res.StatusCode)
		}
		if res, _ := ama.post(path, url.Values{"password": {"ama's long password"}, "csrf": {ama.csrf()}}); res.StatusCode != 303 {
			t.Fatalf("existing user accepts = %d", res.StatusCode)
		}
		u, _, _ := st.UserByEmail(ctx, "ama@example.com")
		if list, _ := st.UserWorkspaces(ctx, u.ID); len(list) != 2 {
			t.Fatalf("ama's workspaces = %d; want 2", len(list))
		}

		// Revoked, another workspace's, and expired invitations.
		path, _ = invite("x@example.com")
		pending, _ := st.PendingInvitations(ctx, ws.ID, e.clock.Now())
		if len(pending) != 1 {
			t.Fatalf("pending = %d", len(pending))
		}
		intruder := e.newBrowserish()
		addUser(t, st, "intruder@example.com", "intruder password", other.ID)
		intruder.login("intruder@example.com", "intruder password")
		if res, _ := intruder.post("/dashboard/team/invitations/"+pending[0].ID+"/revoke", url.Values{"csrf": {intruder.csrf()}}); res.StatusCode != 404 {
			t.Fatalf("revoke from another workspace = %d", res.StatusCode)
		}
		if res, _ := owner.post("/dashboard/team/invitations/"+pending[0].ID+"/revoke", url.Values{"csrf": {owner.csrf()}}); res.StatusCode != 303 {
			t.Fatalf("revoke = %d", res.StatusCode)
		}
		if res, _ := e.newBrowserish().get(path); res.StatusCode != 410 {
			t.Fatalf("a revoked link = %d", res.StatusCode)
		}
		path, _ = invite("y@example.com")
		e.clock.Add(7*24*time.Hour + time.Second)
		if res, _ := e.newBrowserish().get(path); res.StatusCode != 410 {
			t.Fatalf("an expired link = %d", res.StatusCode)
		}
		if res, _ := e.newBrowserish().get("/dashboard/invitations/nope%00"); res.StatusCode != 410 {
			t.Fatalf("a made-up link = %d", res.StatusCode)
		}

		log, _ := st.AuditLog(ctx, ws.ID, 20)
		var actions []string
		for _, a := range log {
			actions = append(actions, a.Action)
		}
		slices.Sort(actions)
		if want := "invitation.accepted invitation.accepted invitation.created invitation.created invitation.created invitation.created invitation.revoked workspace.created"; strings.Join(actions, " ") != want {
			t.Errorf("audit = %v", actions)
		}
		if strings.Contains(logs.String(), token) || !strings.Contains(logs.String(), "/dashboard/invitations/[token]") {
			t.Error("the request log shows an invitation's token")
		}
	})
}
