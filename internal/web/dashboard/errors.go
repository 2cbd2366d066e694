package dashboard

import (
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// html adapts a dashboard handler: its error is answered as a page, in the
// browser's language, with the error's status and a way back (a form whose
// refusal its own page cannot show: an expired CSRF token, a delivery that
// is not the workspace's).
func (s *Dashboard) html(h httpx.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.WriteError(w, r, err, s.errorPage(r))
		}
	})
}

type errorData struct {
	T             map[string]string
	Lang          string
	Message, Back string
}

func (s *Dashboard) errorPage(r *http.Request) httpx.Shape {
	return func(w http.ResponseWriter, status int, msg, _ string) {
		lang, t := httpx.Language(r)
		httpx.SetPageHeaders(w)
		w.WriteHeader(status)
		if err := s.pages.ExecuteTemplate(w, "error.html", errorData{T: t, Lang: lang, Message: msg, Back: backFrom(r.URL.Path)}); err != nil {
			s.Logger.ErrorContext(r.Context(), "error page", "err", err, "request_id", httpx.RequestID(r))
		}
	}
}

// backFrom is the dashboard page a refused request came from: the page of
// its first path segment (a delivery's and a notification's are on the
// webhooks page), or the overview.
func backFrom(path string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/dashboard/"), "/")
	switch first {
	case "deliveries", "notifications":
		first = "webhooks"
	}
	for _, p := range navPages {
		if p.Key == first {
			return p.Path
		}
	}
	return "/dashboard"
}
