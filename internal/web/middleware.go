package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/web/httpx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe wraps every request: a request id, a recovered panic turned into a
// 500, one structured log line (method, route, status, duration, client IP;
// never a header, so never a key) and the Prometheus metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		b := make([]byte, 8)
		rand.Read(b)
		id := "req_" + hex.EncodeToString(b)
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(httpx.WithRequestID(r.Context(), id))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.Logger.ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(p), "method", r.Method, "path", httpx.LoggedPath(r), "request_id", id)
				if rec.status == 0 {
					httpx.APIError(rec, http.StatusInternalServerError, "Internal error", "")
				}
			}
			route := r.Pattern
			if route == "" || route == "/" {
				route = "unmatched" // no route: the JSON 404 (or 405) of "/"
			}
			status := rec.status
			switch {
			case status == 0 && r.Context().Err() != nil:
				status = 499 // the client closed the connection before the answer
			case status == 0:
				status = http.StatusOK
			}
			elapsed := time.Since(start)
			method := metricMethod(r.Method)
			s.metrics.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
			s.metrics.duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
			// Typed attributes: the line every request writes, without
			// boxing each value.
			s.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method), slog.String("route", route),
				slog.String("path", httpx.LoggedPath(r)), slog.Int("status", status),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000), slog.String("ip", s.kit.ClientIP(r).String()),
				slog.String("request_id", id))
		}()
		next.ServeHTTP(rec, r)
	})
}

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cauri_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cauri_http_request_duration_seconds", Help: "HTTP request duration by method and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// metricMethod is a request's method as a metric's label: any method but
// the standard ones is "other", so that odd methods cannot grow the
// metrics without bound (the route label is bounded by the route table:
// "unmatched" for any other path).
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// metricsHandler is GET /metrics: with CAURI_METRICS_TOKEN set, for the
// requests that carry it as a bearer token; without, for loopback clients
// only (a scraper on the same host, or through a tunnel), since the
// metrics tell a lot about a business.
func (s *Server) metricsHandler() http.Handler {
	h := promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{})
	return s.kit.Page(func(w http.ResponseWriter, r *http.Request) error {
		if s.MetricsToken != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.MetricsToken)) != 1 {
				return cauri.Errorf(cauri.EUnauthorized, "The metrics need the token set as CAURI_METRICS_TOKEN, as Authorization: Bearer <token>")
			}
		} else if ap, err := netip.ParseAddrPort(r.RemoteAddr); err != nil || !ap.Addr().Unmap().IsLoopback() {
			return cauri.Errorf(cauri.EForbidden, "The metrics are served to this host only; set CAURI_METRICS_TOKEN to scrape them from elsewhere")
		}
		h.ServeHTTP(w, r)
		return nil
	})
}

// notFound answers a request no route takes: 405 with Allow when the path
// is routed for other methods, else 404, each saying where to look.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) error {
	if allow := s.allowed(r.URL.Path); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return cauri.Errorf(cauri.EMethodNotAllowed, "%s %s is not a route: %s takes %s", r.Method, r.URL.Path, r.URL.Path, strings.Join(allow, ", "))
	}
	return cauri.Errorf(cauri.ENotFound, "No route %s %s: the API is under /v1 (its reference at /docs), the dashboard at /dashboard", r.Method, r.URL.Path)
}

// patterns records the routes' patterns, to tell which methods a path is
// routed for (the 405's Allow).
type patterns struct{ list []string }

func (p *patterns) Handle(pattern string, _ http.Handler) { p.list = append(p.list, pattern) }
func (p *patterns) HandleFunc(pattern string, _ func(http.ResponseWriter, *http.Request)) {
	p.list = append(p.list, pattern)
}

// methods returns, for a path, the methods of the routes whose pattern it
// matches ({name} matches one segment; a trailing / a subtree).
func (p *patterns) methods(path string) []string {
	var out []string
	for _, pat := range p.list {
		method, route, ok := strings.Cut(pat, " ")
		if !ok || route == "/" || route == "/v1/" || route == "/v1/partner/" {
			continue
		}
		if matchRoute(route, path) && !slices.Contains(out, method) {
			out = append(out, method)
		}
	}
	return out
}

func matchRoute(route, path string) bool {
	rs, ps := strings.Split(strings.Trim(route, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if strings.HasSuffix(route, "/") && len(ps) >= len(rs) {
		ps = ps[:len(rs)]
	}
	if len(rs) != len(ps) {
		return false
	}
	for i, seg := range rs {
		if !strings.HasPrefix(seg, "{") && seg != ps[i] {
			return false
		}
	}
	return true
}
