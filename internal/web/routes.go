package web

import "github.com/cauri-pay/cauri/internal/web/httpx"

// routes registers every route of the service: each audience's own (its
// routes.go lists them, each with its credential, error shape and rate
// limit), then what belongs to none. A route's credential and limit are
// named beside it.
func (s *Server) routes(mux httpx.Mux) {
	s.api.Routes(mux)       // api/routes.go: /v1 for merchants' servers and partners, /callbacks for aggregators
	s.pay.Routes(mux)       // pay/routes.go: the hosted pages, /checkout/* for their script, /static
	s.dashboard.Routes(mux) // dashboard/routes.go: /dashboard, and the export /v1/transactions/export

	// The interface description and its reference page: no credential.
	mux.HandleFunc("GET /v1/openapi.json", s.openAPIJSON)
	mux.HandleFunc("GET /v1/openapi.yaml", s.openAPIYAML)
	mux.HandleFunc("GET /docs", s.reference)
	mux.HandleFunc("GET /static/reference/redoc.standalone.js", s.redocJS)

	// Operations.
	mux.HandleFunc("GET /healthz", s.healthz)      // none
	mux.HandleFunc("GET /readyz", s.readyz)        // none
	mux.Handle("GET /metrics", s.metricsHandler()) // CAURI_METRICS_TOKEN, or this host

	// Anything else is a JSON 404 (or 405 for a route that takes another
	// method), not the mux's plain text.
	mux.Handle("/v1/", s.kit.API(s.notFound))
	mux.Handle("/", s.kit.API(s.notFound))
}
