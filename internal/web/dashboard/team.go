package dashboard

import (
	"net/http"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type invitationRow struct {
	ID, Email, Expires string
}

type teamData struct {
	frame
	Members     []store.Member
	Invitations []invitationRow
	Link        string // the link of an invitation just made: shown this once
	Email       string
	Error       string
}

// teamPage is GET /dashboard/team: the workspace's members, its pending
// invitations (each with a button to revoke it) and the form that invites
// someone.
func (s *Dashboard) teamPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	return s.renderTeam(w, r, u, "", nil)
}

func (s *Dashboard) renderTeam(w http.ResponseWriter, r *http.Request, u *signedInUser, link string, refused error) error {
	d, ws := u.d, u.ws
	members, pending, err := s.Accounts.Team(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	data := teamData{frame: s.frame(w, r, "team", ws, d.Livemode), Members: members, Link: link}
	for _, inv := range pending {
		data.Invitations = append(data.Invitations, invitationRow{ID: inv.ID, Email: inv.Email,
			Expires: inv.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")})
	}
	if refused != nil {
		data.Error, data.Email = cauri.ErrorMessage(refused), r.PostForm.Get("email")
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "team.html", data)
}

// invite is POST /dashboard/team: an invitation of an e-mail address to
// the workspace, valid 7 days. Cauri sends no e-mail: the page that
// answers shows the invitation's link once, for the member to pass on.
func (s *Dashboard) invite(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	d, ws := u.d, u.ws
	token, err := s.Accounts.Invite(r.Context(), ws.ID, d.UserID, r.PostForm.Get("email"))
	if err != nil {
		if cauri.ErrorCode(err) == cauri.EInternal {
			return err
		}
		return s.renderTeam(w, r, u, "", err)
	}
	return s.renderTeam(w, r, u, s.DashboardURL+"/dashboard/invitations/"+token, nil)
}

// revokeInvitation is POST /dashboard/team/invitations/{id}/revoke.
func (s *Dashboard) revokeInvitation(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	if err := s.Accounts.Revoke(r.Context(), ws.ID, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/team", http.StatusSeeOther)
	return nil
}

type invitationData struct {
	T          map[string]string
	Lang       string
	CSRF       string
	Workspace  string
	Email      string
	HasAccount bool
	Error      string
}

// invitationPage is GET /dashboard/invitations/{token}: whom the link
// invites to which workspace, and the password to join with (a new one,
// or the account's when the address has one). A link that no longer works
// is 410.
func (s *Dashboard) invitationPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderInvitation(w, r, nil)
}

func (s *Dashboard) renderInvitation(w http.ResponseWriter, r *http.Request, refused error) error {
	lang, t := httpx.Language(r)
	httpx.SetPageHeaders(w)
	data := invitationData{T: t, Lang: lang, CSRF: s.csrfToken(w, r)}
	inv, workspace, hasAccount, err := s.Accounts.Invitation(r.Context(), r.PathValue("token"))
	switch {
	case cauri.ErrorCode(err) == cauri.ENotFound:
		data.Error = t["invitation_gone"]
		w.WriteHeader(http.StatusGone)
		return s.pages.ExecuteTemplate(w, "invitation.html", data)
	case err != nil:
		return err
	}
	data.Workspace, data.Email, data.HasAccount = workspace, inv.Email, hasAccount
	if refused != nil {
		data.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "invitation.html", data)
}

// acceptInvitation is POST /dashboard/invitations/{token}: joins the
// workspace (creating the account with the password chosen, or checking
// the account's password), then signs in with it selected. Throttled as
// the sign-in is.
func (s *Dashboard) acceptInvitation(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return s.renderInvitation(w, r, cauri.Errorf(cauri.EInvalid, "Invalid form"))
	}
	if err := checkCSRF(r); err != nil {
		return s.renderInvitation(w, r, err)
	}
	if err := s.LimitByIP(w, r, httpx.LimitLoginIP); err != nil {
		return s.renderInvitation(w, r, err)
	}
	token := r.PathValue("token")
	inv, _, _, err := s.Accounts.Invitation(r.Context(), token)
	if err != nil {
		return s.renderInvitation(w, r, nil) // 410 (or the error) from the page
	}
	for _, l := range []ratelimit.Limit{httpx.LimitLoginEmail, httpx.LimitLoginEmailHour} {
		if err := s.Limit(w, r, l, "per address from this network", s.loginKey(r, inv.Email), ""); err != nil {
			return s.renderInvitation(w, r, err)
		}
	}
	session, err := s.Accounts.Accept(r.Context(), token, r.PostForm.Get("password"))
	switch {
	case err == nil:
	case cauri.ErrorCode(err) == cauri.EInternal:
		return err
	default:
		return s.renderInvitation(w, r, err)
	}
	return s.startSession(w, r, session)
}
