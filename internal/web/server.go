// Package web is all of Cauri's HTTP, one server for three audiences, each
// a package over the shared request/response layer (httpx): the JSON API
// (api), the hosted payment pages (pay), the merchant's dashboard
// (dashboard). This package assembles them, and serves what belongs to
// none: the interface description and its reference page (/docs),
// /healthz, /readyz and /metrics, the JSON 404 and 405. Every request is
// observed here (request id, one log line, metrics, a panic answered 500).
// routes.go lists where each audience's routes are. A request reads top to
// bottom: route -> handler (decode, validate) -> service -> store (one
// transaction) -> response.
//
// It imports the services, the audiences and httpx; no store.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/partner"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/transfer"
	"github.com/cauri-pay/cauri/internal/web/api"
	"github.com/cauri-pay/cauri/internal/web/dashboard"
	"github.com/cauri-pay/cauri/internal/web/httpx"
	"github.com/cauri-pay/cauri/internal/web/pay"
	"github.com/prometheus/client_golang/prometheus"
)

// Deps are what the server is built from.
type Deps struct {
	Checkout  *checkout.Service
	Transfers *transfer.Service
	Refunds   *refund.Service // refunds (issue 19)
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
	kit         *httpx.Kit
	api         *api.API
	pay         *pay.Pages
	dashboard   *dashboard.Dashboard
	openapiYAML []byte // the document as served (openAPIDocs)
	openapiJSON []byte
	metrics     *metrics
	handler     http.Handler
	allowed     func(path string) []string // the methods routed for a path
}

// New builds the server and its routes. It fails when a template does not
// parse, so a broken page never reaches a customer.
func New(d Deps) (*Server, error) {
	docYAML, docJSON, err := openAPIDocs(d.BaseURL)
	if err != nil {
		return nil, err
	}
	s := &Server{Deps: d, openapiYAML: docYAML, openapiJSON: docJSON, metrics: newMetrics(d.Registry),
		kit: &httpx.Kit{Logger: d.Logger, Limiter: d.Limiter, TrustedProxies: d.TrustedProxies}}
	linkURL, dashboardURL := d.PayURL+"/l", dashboardURL(d.BaseURL, d.PayURL)
	s.api = &api.API{Kit: s.kit, Checkout: d.Checkout, Transfers: d.Transfers, Refunds: d.Refunds, Router: d.Router, Accounts: d.Accounts,
		Partners: d.Partners, Webhooks: d.Webhooks, Gateways: d.Gateways, PayURL: d.PayURL, LinkURL: linkURL,
		DashboardURL: dashboardURL, Now: d.Now, Draining: d.Draining, NotFound: s.notFound}
	if s.pay, err = pay.New(pay.Pages{Kit: s.kit, Checkout: d.Checkout, Accounts: d.Accounts, PayURL: d.PayURL, LinkURL: linkURL, Now: d.Now}); err != nil {
		return nil, err
	}
	if s.dashboard, err = dashboard.New(dashboard.Dashboard{Kit: s.kit, Accounts: d.Accounts, Checkout: d.Checkout,
		Transfers: d.Transfers, Refunds: d.Refunds, Reports: d.Reports, Gateways: d.Gateways, Webhooks: d.Webhooks, Router: d.Router,
		PayURL: d.PayURL, LinkURL: linkURL, DashboardURL: dashboardURL, Now: d.Now}); err != nil {
		return nil, err
	}
	if d.Router == nil {
		s.dashboard.Router = nil // no engine: no health shown (not a nil *Router in an interface)
	}
	mux := http.NewServeMux()
	s.routes(mux)
	var rec patterns
	s.routes(&rec)
	s.allowed = rec.methods
	s.handler = s.observe(mux)
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// dashboardURL is where the dashboard is served: the base URL, or the pay
// URL's origin.
func dashboardURL(base, payURL string) string {
	if base != "" {
		return base
	}
	u, _ := url.Parse(payURL)
	return u.Scheme + "://" + u.Host
}
