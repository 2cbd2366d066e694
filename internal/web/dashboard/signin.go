package dashboard

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// The merchant dashboard's sign-in: an e-mail address and a password
// (bcrypt), a session cookie holding a random token (the store keeps its
// hash), CSRF protection by a second cookie echoed in every form (the
// double-submit pattern, with SameSite cookies), and throttling.
const (
	sessionCookie = "cauri_session"
	csrfCookie    = "cauri_csrf"
)

// secureCookies: cookies are Secure when the service is served over https.
func (s *Dashboard) secureCookies() bool { return strings.HasPrefix(s.PayURL, "https://") }

func (s *Dashboard) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration, sameSite http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(maxAge.Seconds()), HttpOnly: true,
		Secure: s.secureCookies(), SameSite: sameSite})
}

// csrfToken returns the request's CSRF token, setting the cookie first if
// the browser has none yet.
func (s *Dashboard) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 52 {
		return c.Value
	}
	t := accounts.NewToken()
	s.setCookie(w, csrfCookie, t, 0, http.SameSiteStrictMode)
	return t
}

// checkCSRF refuses a form whose token does not match the cookie's.
func checkCSRF(r *http.Request) error {
	c, err := r.Cookie(csrfCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostForm.Get("csrf"))) != 1 {
		return cauri.Errorf(cauri.EForbidden, "This form expired or did not come from the dashboard; reload the page and try again")
	}
	return nil
}

// dashboardSession reads the signed-in session of a request.
func (s *Dashboard) dashboardSession(r *http.Request) (string, *store.DashboardSession, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return "", nil, cauri.Errorf(cauri.EUnauthorized, "Not signed in to the dashboard")
	}
	d, err := s.Accounts.Session(r.Context(), c.Value)
	return c.Value, d, err
}

type loginData struct {
	T     map[string]string
	Lang  string
	CSRF  string
	Email string
	Error string
}

// loginPage is GET /dashboard/login.
func (s *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderLogin(w, r, "", nil)
}

func (s *Dashboard) renderLogin(w http.ResponseWriter, r *http.Request, email string, refused error) error {
	lang, t := httpx.Language(r)
	httpx.SetPageHeaders(w)
	d := loginData{T: t, Lang: lang, CSRF: s.csrfToken(w, r), Email: email}
	if refused != nil {
		d.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "login.html", d)
}

// login is POST /dashboard/login: 20 tries a minute per IP, 5 per address.
func (s *Dashboard) login(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return s.renderLogin(w, r, "", cauri.Errorf(cauri.EInvalid, "Invalid form"))
	}
	email := strings.ToLower(strings.TrimSpace(r.PostForm.Get("email")))
	if err := checkCSRF(r); err != nil {
		return s.renderLogin(w, r, email, err)
	}
	if err := s.LimitByIP(w, r, httpx.LimitLoginIP); err != nil {
		return s.renderLogin(w, r, email, err)
	}
	for _, l := range []ratelimit.Limit{httpx.LimitLoginEmail, httpx.LimitLoginEmailHour} { // 5 a minute, then 20 an hour: a growing wait
		if err := s.Limit(w, r, l, "per address from this network", s.loginKey(r, email), ""); err != nil {
			return s.renderLogin(w, r, email, err)
		}
	}
	token, err := s.Accounts.SignIn(r.Context(), email, r.PostForm.Get("password"))
	if cauri.ErrorCode(err) == cauri.EUnauthorized {
		return s.renderLogin(w, r, email, err)
	}
	if err != nil {
		return err
	}
	return s.startSession(w, r, token)
}

// startSession gives the browser a dashboard session's cookie and sends
// it to the dashboard.
func (s *Dashboard) startSession(w http.ResponseWriter, r *http.Request, token string) error {
	s.setCookie(w, sessionCookie, token, cauri.DashboardSessionLifetime, http.SameSiteLaxMode)
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	return nil
}

// logout is POST /dashboard/logout.
func (s *Dashboard) logout(w http.ResponseWriter, r *http.Request) error {
	r.ParseForm()
	if err := checkCSRF(r); err != nil {
		return err
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := s.Accounts.SignOut(r.Context(), c.Value); err != nil {
			return err
		}
	}
	s.setCookie(w, sessionCookie, "", -time.Second, http.SameSiteLaxMode)
	http.Redirect(w, r, "/dashboard/login", http.StatusSeeOther)
	return nil
}

// selectWorkspace is POST /dashboard/workspace: the workspace and mode
// (live or test data) the dashboard shows.
func (s *Dashboard) selectWorkspace(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return cauri.Errorf(cauri.EInvalid, "Invalid form")
	}
	if err := checkCSRF(r); err != nil {
		return err
	}
	token, _, err := s.dashboardSession(r)
	if err != nil {
		return err
	}
	if err := s.Accounts.Select(r.Context(), token, r.PostForm.Get("workspace"), r.PostForm.Get("mode") != "test"); err != nil {
		return err
	}
	// Back to the page the switch was on (one of the navigation's: never
	// an address from outside).
	http.Redirect(w, r, pagePath(pageKey(r.PostForm.Get("return"))), http.StatusSeeOther)
	return nil
}

// loginKey is the key of the per-address sign-in limit: the address and
// the client's network, so that someone guessing an owner's password from
// elsewhere never locks the owner out of their own dashboard.
func (s *Dashboard) loginKey(r *http.Request, email string) string {
	return ratelimit.IPKey(s.ClientIP(r)) + "|" + strings.ToLower(strings.TrimSpace(email))
}
