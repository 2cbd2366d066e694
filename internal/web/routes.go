package web

import (
	"net/http"
	"time"

	"github.com/cauri-pay/cauri/internal/ratelimit"
)

// The rate limits, in one table: SPEC section 8's, and those this service
// adds where the SPEC gives none (docs/decisions.md, "Rate limits"). Each
// means at most Count accepted in any window of Per (ratelimit), shared by
// every node through Redis when CAURI_REDIS_URL is set. The routes below
// name the one each takes.
var (
	limitCreateSession  = ratelimit.PerMinute("create_session", 60)                            // per IP (SPEC)
	limitSandbox        = ratelimit.PerMinute("sandbox", 30)                                   // per IP (SPEC)
	limitInitiate       = ratelimit.PerMinute("initiate", 30)                                  // per IP (SPEC); also the page's forms and codes
	limitVerify         = ratelimit.PerMinute("verify", 60)                                    // per IP (SPEC)
	limitRoute          = ratelimit.PerMinute("route", 120)                                    // per IP (SPEC)
	limitLinks          = ratelimit.PerMinute("payment_links", 60)                             // per IP (SPEC): creation
	limitTransfers      = ratelimit.PerMinute("transfers", 30)                                 // per workspace (SPEC): a batch takes one turn
	limitResend         = ratelimit.PerMinute("resend", 30)                                    // per workspace: resending deliveries
	limitPartner        = ratelimit.PerMinute("partner", 120)                                  // per partner
	limitLoginIP        = ratelimit.PerMinute("login_ip", 20)                                  // per IP: sign-in and invitations
	limitLoginEmail     = ratelimit.PerMinute("login_email", 5)                                // per address and client network (loginKey)
	limitLoginEmailHour = ratelimit.Limit{Name: "login_email_hour", Count: 20, Per: time.Hour} // the same, growing: an hour's
	limitRefused        = ratelimit.PerMinute("refused_credential", 30)                        // per IP: refused API keys and partner secrets
)

// router is what routes registers on: the ServeMux, or a test's recorder.
type router interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// routes lists every route of the service, each with what it asks of the
// caller (a key: "any key" includes public keys; a secret key; live: a test
// key is refused or finds nothing) and the rate limit it takes. A refused
// API key or partner secret also takes limitRefused. openapi.yaml documents
// each route; TestOpenAPI_DocumentsEveryRoute holds the two together.
func (s *Server) routes(mux router) {
	// Checkout sessions (SPEC section 4, Checkout).
	mux.Handle("POST /v1/checkout/sessions", s.api(s.createSession))              // any key; limitCreateSession
	mux.Handle("GET /v1/checkout/sessions/{id}/status", s.api(s.sessionStatus))   // any key
	mux.Handle("GET /v1/checkout/sessions/{id}/methods", s.api(s.sessionMethods)) // any key

	// Payment links (SPEC section 4, Payment links).
	mux.Handle("POST /v1/payment-links", s.api(s.createLink))          // secret key, live; limitLinks
	mux.Handle("GET /v1/payment-links/{id}/check", s.api(s.checkLink)) // secret key, live

	// Transactions (SPEC section 4): the export, for the dashboard.
	mux.Handle("GET /v1/transactions/export", s.api(s.exportTransactions)) // dashboard session

	// The merchant dashboard: signedInPage needs a dashboard session (its
	// cookie) with a workspace selected; signedInForm, also the CSRF token.
	// The others check what their comment says themselves.
	mux.Handle("GET /dashboard/login", s.page(s.loginPage)) // none
	mux.Handle("POST /dashboard/login", s.page(s.login))    // CSRF; limitLoginIP, limitLoginEmail(Hour)
	mux.Handle("POST /dashboard/logout", s.page(s.logout))  // dashboard session, CSRF
	mux.Handle("GET /dashboard", s.page(s.dashboard))
	mux.Handle("POST /dashboard/workspace", s.page(s.selectWorkspace))
	mux.Handle("GET /dashboard/transactions", s.page(s.signedInPage(s.transactionsPage)))
	mux.Handle("GET /dashboard/transactions/{id}", s.page(s.signedInPage(s.transactionPage)))
	mux.Handle("GET /dashboard/links", s.page(s.signedInPage(s.linksPage)))
	mux.Handle("GET /dashboard/transfers", s.page(s.signedInPage(s.transfersPage)))
	mux.Handle("GET /dashboard/webhooks", s.page(s.signedInPage(s.webhooksPage)))
	mux.Handle("POST /dashboard/webhooks", s.page(s.signedInForm(s.saveWebhooks)))
	mux.Handle("POST /dashboard/deliveries/{id}/resend", s.page(s.signedInForm(s.resendFromDashboard))) // dashboard session, CSRF; limitResend
	mux.Handle("POST /dashboard/notifications/{id}/read", s.page(s.signedInForm(s.acknowledge)))
	mux.Handle("POST /dashboard/links", s.page(s.signedInForm(s.createLinkFromDashboard)))
	mux.Handle("POST /dashboard/links/{id}", s.page(s.signedInForm(s.linkSwitch)))
	mux.Handle("GET /dashboard/keys", s.page(s.signedInPage(s.keysPage)))
	mux.Handle("GET /dashboard/team", s.page(s.signedInPage(s.teamPage)))
	mux.Handle("POST /dashboard/team", s.page(s.signedInForm(s.invite)))
	mux.Handle("POST /dashboard/team/invitations/{id}/revoke", s.page(s.signedInForm(s.revokeInvitation)))
	mux.Handle("GET /dashboard/invitations/{token}", s.page(s.invitationPage))    // the invitation token
	mux.Handle("POST /dashboard/invitations/{token}", s.page(s.acceptInvitation)) // the invitation token, CSRF; limitLoginIP, limitLoginEmail(Hour)
	mux.Handle("GET /dashboard/gateways", s.page(s.signedInPage(s.gatewaysPage)))
	mux.Handle("POST /dashboard/gateways", s.page(s.signedInForm(s.addGateway)))
	mux.Handle("POST /dashboard/gateways/{id}", s.page(s.signedInForm(s.gatewaySwitch)))
	mux.Handle("POST /dashboard/gateways/{id}/operators", s.page(s.signedInForm(s.gatewayOperator)))
	mux.Handle("POST /dashboard/keys", s.page(s.signedInForm(s.rollKey)))

	// Routing (SPEC section 4, Routing).
	mux.Handle("POST /v1/route", s.api(s.route))        // any key; limitRoute
	mux.Handle("GET /v1/route", s.api(s.routeOverview)) // any key; limitRoute

	// Transfers (SPEC section 4, Transfers).
	mux.Handle("POST /v1/transfers", s.api(transferCodes(s.createTransfer)))            // secret key, live; limitTransfers and the daily cap
	mux.Handle("GET /v1/transfers", s.api(transferCodes(s.listTransfers)))              // secret key, live
	mux.Handle("GET /v1/transfers/{id}", s.api(transferCodes(s.getTransfer)))           // secret key, live
	mux.Handle("POST /v1/transfers/batch", s.api(transferCodes(s.createTransferBatch))) // secret key, live; limitTransfers (one turn); beyond the SPEC

	// Webhooks: configuration and the delivery log.
	mux.Handle("GET /v1/config/webhook", s.api(s.getWebhookConfig))                 // secret key
	mux.Handle("PATCH /v1/config/webhook", s.api(s.patchWebhookConfig))             // secret key
	mux.Handle("GET /v1/webhooks/deliveries", s.api(s.listDeliveries))              // secret key
	mux.Handle("GET /v1/webhooks/deliveries/{id}", s.api(s.getDelivery))            // secret key
	mux.Handle("POST /v1/webhooks/deliveries/{id}/resend", s.api(s.resendDelivery)) // secret key; limitResend

	// Partner provisioning (SPEC section 4, Partner): docs/partner.md. The
	// partner's secret (x-partner-secret); limitPartner per partner.
	mux.Handle("POST /v1/partner/merchants", s.api(s.partner(s.createMerchant)))
	mux.Handle("GET /v1/partner/merchants", s.api(s.partner(s.listMerchants)))
	mux.Handle("GET /v1/partner/merchants/{id}", s.api(s.partner(s.getMerchant)))
	mux.Handle("PATCH /v1/partner/merchants/{id}", s.api(s.partner(s.updateMerchant)))
	mux.Handle("POST /v1/partner/merchants/{id}/gateways", s.api(s.partner(s.addMerchantGateway)))
	mux.Handle("GET /v1/partner/merchants/{id}/verification", s.api(s.partner(s.merchantVerification)))
	mux.Handle("/v1/partner/", s.api(s.partner(s.partnerNoRoute)))

	// Outside /v1: the sandbox settle, used by the hosted page's test buttons.
	mux.Handle("POST /checkout/sandbox", s.page(s.sandboxSettle)) // the session id; limitSandbox
	mux.Handle("POST /checkout/initiate", s.page(s.initiate))     // the session id; limitInitiate
	mux.Handle("POST /checkout/verify", s.page(s.verify))         // the session id; limitVerify
	mux.Handle("POST /checkout/code", s.page(s.submitCode))       // the session id; limitInitiate

	// Aggregators' callbacks, one address per gateway: no credential (each
	// connector checks its aggregator's signature; the outcome is always
	// read back from the aggregator).
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
	mux.HandleFunc("GET /healthz", s.healthz)      // none
	mux.HandleFunc("GET /readyz", s.readyz)        // none
	mux.Handle("GET /metrics", s.metricsHandler()) // CAURI_METRICS_TOKEN, or this host

	// Anything else is a JSON 404 (or 405 for a route that takes another
	// method), not the mux's plain text.
	mux.Handle("/v1/", s.api(s.notFound))
	mux.Handle("/", s.api(s.notFound))
}
