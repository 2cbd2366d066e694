package web

import "net/http"

// router is what routes registers on: the ServeMux, or a test's recorder.
type router interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// routes lists every route of the service. openapi.yaml documents each one;
// TestOpenAPI_DocumentsEveryRoute holds the two together.
func (s *Server) routes(mux router) {
	// Checkout sessions (SPEC section 4, Checkout).
	mux.Handle("POST /v1/checkout/sessions", s.api(s.createSession))
	mux.Handle("GET /v1/checkout/sessions/{id}/status", s.api(s.sessionStatus))
	mux.Handle("GET /v1/checkout/sessions/{id}/methods", s.api(s.sessionMethods))

	// Payment links (SPEC section 4, Payment links).
	mux.Handle("POST /v1/payment-links", s.api(s.createLink))
	mux.Handle("GET /v1/payment-links/{id}/check", s.api(s.checkLink))

	// Transactions (SPEC section 4): the export, for the dashboard.
	mux.Handle("GET /v1/transactions/export", s.api(s.exportTransactions))

	// The merchant dashboard.
	mux.Handle("GET /dashboard/login", s.page(s.loginPage))
	mux.Handle("POST /dashboard/login", s.page(s.login))
	mux.Handle("POST /dashboard/logout", s.page(s.logout))
	mux.Handle("GET /dashboard", s.page(s.dashboard))
	mux.Handle("POST /dashboard/workspace", s.page(s.selectWorkspace))
	mux.Handle("GET /dashboard/transactions", s.page(s.transactionsPage))
	mux.Handle("GET /dashboard/transactions/{id}", s.page(s.transactionPage))
	mux.Handle("GET /dashboard/links", s.page(s.linksPage))
	mux.Handle("GET /dashboard/transfers", s.page(s.transfersPage))
	mux.Handle("GET /dashboard/webhooks", s.page(s.webhooksPage))
	mux.Handle("POST /dashboard/webhooks", s.page(s.saveWebhooks))
	mux.Handle("POST /dashboard/deliveries/{id}/resend", s.page(s.resendFromDashboard))
	mux.Handle("POST /dashboard/notifications/{id}/read", s.page(s.acknowledge))
	mux.Handle("POST /dashboard/links", s.page(s.createLinkFromDashboard))
	mux.Handle("POST /dashboard/links/{id}", s.page(s.linkSwitch))
	mux.Handle("GET /dashboard/keys", s.page(s.keysPage))
	mux.Handle("GET /dashboard/team", s.page(s.teamPage))
	mux.Handle("POST /dashboard/team", s.page(s.invite))
	mux.Handle("POST /dashboard/team/invitations/{id}/revoke", s.page(s.revokeInvitation))
	mux.Handle("GET /dashboard/invitations/{token}", s.page(s.invitationPage))
	mux.Handle("POST /dashboard/invitations/{token}", s.page(s.acceptInvitation))
	mux.Handle("GET /dashboard/gateways", s.page(s.gatewaysPage))
	mux.Handle("POST /dashboard/gateways", s.page(s.addGateway))
	mux.Handle("POST /dashboard/gateways/{id}", s.page(s.gatewaySwitch))
	mux.Handle("POST /dashboard/gateways/{id}/operators", s.page(s.gatewayOperator))
	mux.Handle("POST /dashboard/keys", s.page(s.rollKey))

	// Routing (SPEC section 4, Routing).
	mux.Handle("POST /v1/route", s.api(s.route))
	mux.Handle("GET /v1/route", s.api(s.routeOverview))

	// Transfers (SPEC section 4, Transfers).
	mux.Handle("POST /v1/transfers", s.api(transferCodes(s.createTransfer)))
	mux.Handle("GET /v1/transfers", s.api(transferCodes(s.listTransfers)))
	mux.Handle("GET /v1/transfers/{id}", s.api(transferCodes(s.getTransfer)))
	mux.Handle("POST /v1/transfers/batch", s.api(transferCodes(s.createTransferBatch))) // beyond the SPEC: docs/transfers.md

	// Webhooks: configuration and the delivery log.
	mux.Handle("GET /v1/config/webhook", s.api(s.getWebhookConfig))
	mux.Handle("PATCH /v1/config/webhook", s.api(s.patchWebhookConfig))
	mux.Handle("GET /v1/webhooks/deliveries", s.api(s.listDeliveries))
	mux.Handle("GET /v1/webhooks/deliveries/{id}", s.api(s.getDelivery))
	mux.Handle("POST /v1/webhooks/deliveries/{id}/resend", s.api(s.resendDelivery))

	// Partner provisioning (SPEC section 4, Partner): docs/partner.md.
	mux.Handle("POST /v1/partner/merchants", s.api(s.partner(s.createMerchant)))
	mux.Handle("GET /v1/partner/merchants", s.api(s.partner(s.listMerchants)))
	mux.Handle("GET /v1/partner/merchants/{id}", s.api(s.partner(s.getMerchant)))
	mux.Handle("PATCH /v1/partner/merchants/{id}", s.api(s.partner(s.updateMerchant)))
	mux.Handle("POST /v1/partner/merchants/{id}/gateways", s.api(s.partner(s.addMerchantGateway)))
	mux.Handle("GET /v1/partner/merchants/{id}/verification", s.api(s.partner(s.merchantVerification)))
	mux.Handle("/v1/partner/", s.api(s.partner(s.partnerNoRoute)))

	// Outside /v1: the sandbox settle, used by the hosted page's test buttons.
	mux.Handle("POST /checkout/sandbox", s.page(s.sandboxSettle))
	mux.Handle("POST /checkout/initiate", s.page(s.initiate))
	mux.Handle("POST /checkout/verify", s.page(s.verify))
	mux.Handle("POST /checkout/code", s.page(s.submitCode))

	// Aggregators' callbacks, one address per gateway.
	mux.Handle("POST /callbacks/{gatewayId}", s.api(s.gatewayCallback))
	mux.Handle("PUT /callbacks/{gatewayId}", s.api(s.gatewayCallback)) // MTN MoMo calls back with PUT
	mux.Handle("GET /callbacks/{gatewayId}", s.api(s.gatewayCallbackPing))

	// Hosted pages and their assets.
	mux.Handle("GET "+s.payPath+"/{id}", s.page(s.checkoutPage))
	mux.Handle("POST "+s.payPath+"/{id}", s.page(s.checkoutPagePost))
	mux.Handle("GET "+s.payPath+"/l/{slug}", s.page(s.linkPage))
	mux.Handle("POST "+s.payPath+"/l/{slug}", s.page(s.linkPagePost))
	mux.Handle("GET /static/logos/{file}", s.page(s.logo))
	mux.Handle("GET /static/", staticFiles())

	// The interface description and its reference page.
	mux.HandleFunc("GET /v1/openapi.json", s.openAPIJSON)
	mux.HandleFunc("GET /v1/openapi.yaml", s.openAPIYAML)
	mux.HandleFunc("GET /docs", s.reference)
	mux.HandleFunc("GET /static/reference/redoc.standalone.js", s.redocJS)

	// Operations.
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.metricsHandler())

	// Anything else under /v1 is a JSON 404, not the mux's plain text.
	mux.Handle("/v1/", s.api(notFound))
}
