package web

import "net/http"

// routes lists every route of the service.
func (s *Server) routes(mux *http.ServeMux) {
	// Checkout sessions (SPEC section 4, Checkout).
	mux.Handle("POST /v1/checkout/sessions", s.api(s.createSession))
	mux.Handle("GET /v1/checkout/sessions/{id}/status", s.api(s.sessionStatus))
	mux.Handle("GET /v1/checkout/sessions/{id}/methods", s.api(s.sessionMethods))

	// Outside /v1: the sandbox settle, used by the hosted page's test buttons.
	mux.Handle("POST /checkout/sandbox", s.page(s.sandboxSettle))

	// Hosted pages and their assets.
	mux.Handle("GET "+s.payPath+"/{id}", s.page(s.checkoutPage))
	mux.Handle("POST "+s.payPath+"/{id}", s.page(s.checkoutPageSimulate))
	mux.Handle("GET /static/logos/{file}", s.page(s.logo))
	mux.Handle("GET /static/", staticFiles())

	// Operations.
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", s.metricsHandler())

	// Anything else under /v1 is a JSON 404, not the mux's plain text.
	mux.Handle("/v1/", s.api(notFound))
}
