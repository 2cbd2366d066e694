package dashboard

import "github.com/cauri-pay/cauri/internal/web/httpx"

// Routes registers the dashboard. signedInPage needs a dashboard session
// (its cookie) with a workspace selected, and sends to the sign-in without
// one; signedInForm needs its CSRF token too. The others say what they
// check. Errors are answered as an HTML page (s.html, errors.go); a form
// that can show its own refusal (sign-in, invitation) renders it.
func (s *Dashboard) Routes(mux httpx.Mux) {
	mux.Handle("GET /dashboard/login", s.html(s.loginPage)) // none
	mux.Handle("POST /dashboard/login", s.html(s.login))    // CSRF; LimitLoginIP, LimitLoginEmail(Hour)
	mux.Handle("POST /dashboard/logout", s.html(s.logout))  // dashboard session, CSRF
	mux.Handle("GET /dashboard", s.html(s.dashboard))       // dashboard session; picks the workspace
	mux.Handle("POST /dashboard/workspace", s.html(s.selectWorkspace))
	mux.Handle("GET /dashboard/transactions", s.html(s.signedInPage(s.transactionsPage)))
	mux.Handle("GET /dashboard/transactions/{id}", s.html(s.signedInPage(s.transactionPage)))
	mux.Handle("POST /dashboard/transactions/{id}/refund", s.html(s.signedInForm(s.refundFromDashboard)))
	mux.Handle("GET /dashboard/links", s.html(s.signedInPage(s.linksPage)))
	mux.Handle("POST /dashboard/links", s.html(s.signedInForm(s.createLinkFromDashboard)))
	mux.Handle("POST /dashboard/links/{id}", s.html(s.signedInForm(s.linkSwitch)))
	mux.Handle("GET /dashboard/links/{id}/qr", s.html(s.signedInPage(s.linkQR)))
	mux.Handle("GET /dashboard/transfers", s.html(s.signedInPage(s.transfersPage)))
	mux.Handle("GET /dashboard/webhooks", s.html(s.signedInPage(s.webhooksPage)))
	mux.Handle("POST /dashboard/webhooks", s.html(s.signedInForm(s.saveWebhooks)))
	mux.Handle("POST /dashboard/webhooks/test", s.html(s.signedInForm(s.sendTestWebhook)))              // LimitResend per workspace
	mux.Handle("POST /dashboard/deliveries/{id}/resend", s.html(s.signedInForm(s.resendFromDashboard))) // LimitResend per workspace
	mux.Handle("POST /dashboard/notifications/{id}/read", s.html(s.signedInForm(s.acknowledge)))
	mux.Handle("POST /dashboard/notifications/read", s.html(s.signedInForm(s.acknowledgeAll)))
	mux.Handle("GET /dashboard/keys", s.html(s.signedInPage(s.keysPage)))
	mux.Handle("POST /dashboard/keys", s.html(s.signedInForm(s.rollKey)))
	mux.Handle("GET /dashboard/team", s.html(s.signedInPage(s.teamPage)))
	mux.Handle("POST /dashboard/team", s.html(s.signedInForm(s.invite)))
	mux.Handle("POST /dashboard/team/invitations/{id}/revoke", s.html(s.signedInForm(s.revokeInvitation)))
	mux.Handle("GET /dashboard/invitations/{token}", s.html(s.invitationPage))    // the invitation token
	mux.Handle("POST /dashboard/invitations/{token}", s.html(s.acceptInvitation)) // the invitation token, CSRF; LimitLoginIP, LimitLoginEmail(Hour)
	mux.Handle("GET /dashboard/gateways", s.html(s.signedInPage(s.gatewaysPage)))
	mux.Handle("POST /dashboard/gateways", s.html(s.signedInForm(s.addGateway)))
	mux.Handle("POST /dashboard/gateways/{id}", s.html(s.signedInForm(s.gatewaySwitch)))
	mux.Handle("POST /dashboard/gateways/{id}/operators", s.html(s.signedInForm(s.gatewayOperator)))

	// Transactions (SPEC section 4): the export, in the API's error shape.
	mux.Handle("GET /v1/transactions/export", s.API(s.exportTransactions)) // dashboard session
}
