// Package web is all of Cauri's HTTP: the /v1 API, the routes outside it
// (/checkout/sandbox), the hosted payment pages with their templates and
// static files, /healthz and /metrics. routes.go lists every route. A
// request reads top to bottom: route -> handler (decode, validate) ->
// domain service -> store (one transaction) -> response.
//
// It imports the domain, the services, the store and the rate limiter.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/partner"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/transfer"
	"github.com/prometheus/client_golang/prometheus"
)

// Deps are what the server is built from.
type Deps struct {
	Checkout  *checkout.Service
	Transfers *transfer.Service
	Router    *routing.Router // ranks providers (POST and GET /v1/route)
	Limiter   ratelimit.Limiter
	Logger    *slog.Logger
	PayURL    string
	BaseURL   string            // where the dashboard is served ("": the pay URL's origin)
	Accounts  *accounts.Service // API keys, the dashboard's sign-in, sessions and team
	Partners  *partner.Service  // the partner API (/v1/partner)
	Webhooks  *delivery.Service // webhook configuration, the delivery log, resends
	Gateways  *gateways.Service // a workspace's aggregator accounts
	Reports   *reports.Service  // the dashboard's overview and transactions, the exports
	// Health is the store as /healthz and /readyz check it.
	Health interface {
		Ping(ctx context.Context) error
		Heartbeat(ctx context.Context, node string, now time.Time) error
	}
	TrustedProxies []netip.Prefix
	Now            func() time.Time
	// Registry receives the HTTP metrics; /metrics serves it, to the
	// bearers of MetricsToken, or to loopback clients when it is "".
	Registry     *prometheus.Registry
	MetricsToken string
	// Node names this process in the store's heartbeats (GET /readyz).
	Node string
	// Draining is closed when the server begins to shut down: a long
	// request (a batch of transfers) starts nothing more and answers with
	// what it did.
	Draining <-chan struct{}
}

// Server is the HTTP handler of the whole service.
type Server struct {
	Deps
	payPath     string // path part of PayURL, where the hosted pages are routed
	pages       *template.Template
	openapiJSON []byte
	metrics     *metrics
	handler     http.Handler
	allowed     func(path string) []string // the methods routed for a path
}

// New builds the server and its routes. It fails when a template does not
// parse, so a broken page never reaches a customer.
func New(d Deps) (*Server, error) {
	u, err := url.Parse(d.PayURL)
	if err != nil {
		return nil, err
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	doc, err := openAPIJSON()
	if err != nil {
		return nil, err
	}
	s := &Server{Deps: d, payPath: u.Path, pages: pages, openapiJSON: doc, metrics: newMetrics(d.Registry)}
	mux := http.NewServeMux()
	s.routes(mux)
	var rec patterns
	s.routes(&rec)
	s.allowed = rec.methods
	s.handler = s.observe(mux)
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handler is an HTTP handler that returns its error; errShape writes it.
type handler func(w http.ResponseWriter, r *http.Request) error

type errShape func(w http.ResponseWriter, status int, msg, reason string)

// apiError is the shape of SPEC section 7: {"error": "..."}.
func apiError(w http.ResponseWriter, status int, msg, reason string) {
	body := map[string]string{"error": msg}
	if reason != "" {
		body["code"] = reason // SPEC section 7: transfers and a few others
	}
	writeJSON(w, status, body)
}

// pageError is the shape of the sandbox route and the payment page:
// {"success": false, "message": "..."}.
func pageError(w http.ResponseWriter, status int, msg, _ string) {
	writeJSON(w, status, map[string]any{"success": false, "message": msg})
}

// api and page adapt a handler to http.Handler with the route's error shape.
func (s *Server) api(h handler) http.Handler  { return s.wrap(h, apiError) }
func (s *Server) page(h handler) http.Handler { return s.wrap(h, pageError) }

func (s *Server) wrap(h handler, shape errShape) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err, shape)
		}
	})
}

var statusOf = map[string]int{
	cauri.EInvalid:          http.StatusBadRequest,
	cauri.EUnauthorized:     http.StatusUnauthorized,
	cauri.EForbidden:        http.StatusForbidden,
	cauri.ENotFound:         http.StatusNotFound,
	cauri.EConflict:         http.StatusConflict,
	cauri.ETooLarge:         http.StatusRequestEntityTooLarge,
	cauri.EUnsupported:      http.StatusUnsupportedMediaType,
	cauri.EUnprocessable:    http.StatusUnprocessableEntity,
	cauri.ERateLimited:      http.StatusTooManyRequests,
	cauri.EInternal:         http.StatusInternalServerError,
	cauri.EBadGateway:       http.StatusBadGateway,
	cauri.EPayment:          http.StatusPaymentRequired,
	cauri.EUnavailable:      http.StatusServiceUnavailable,
	cauri.EMethodNotAllowed: http.StatusMethodNotAllowed,
}

// writeError answers with the error's status and client-safe message. An
// error that is not a *cauri.Error is internal: logged with its cause, and
// answered with a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error, shape errShape) {
	code := cauri.ErrorCode(err)
	if code == cauri.EInternal {
		if errors.Is(err, context.Canceled) {
			return // the client went away; nobody reads the answer
		}
		s.Logger.ErrorContext(r.Context(), "internal error", "err", err, "method", r.Method, "path", loggedPath(r), "request_id", requestID(r))
	}
	if cauri.ErrorReason(err) == "idempotency_key_in_use" {
		w.Header().Set("Retry-After", "1") // the first request of the key is still running
	}
	var later *retryLater
	if errors.As(err, &later) {
		w.Header().Set("Retry-After", strconv.Itoa(later.after))
	}
	shape(w, statusOf[code], cauri.ErrorMessage(err), cauri.ErrorReason(err))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
