package api

import "github.com/cauri-pay/cauri/internal/web/httpx"

// Routes registers the API's routes, each with its credential (anyKey: a
// public or secret key; secretKey; partner: the partner's secret; a
// callback: none, the connector checks the aggregator's signature and the
// outcome is always read back from the aggregator) and its rate limit
// (httpx.Limit*: PerIP in front; per workspace or partner inside the
// handler, once the caller is known). A refused key or partner secret also
// takes httpx.LimitRefused. Every error is answered in SPEC section 7's
// shape (s.API); transferCodes gives each transfer error its code, and
// refundCodes each refund error.
// openapi.yaml documents each route; TestOpenAPI_DocumentsEveryRoute holds
// the two together.
func (s *API) Routes(mux httpx.Mux) {
	// Checkout sessions (SPEC section 4, Checkout).
	mux.Handle("POST /v1/checkout/sessions", s.API(s.PerIP(httpx.LimitCreateSession, s.anyKey(s.createSession))))
	mux.Handle("GET /v1/checkout/sessions/{id}/status", s.API(s.anyKey(s.sessionStatus)))
	mux.Handle("GET /v1/checkout/sessions/{id}/methods", s.API(s.anyKey(s.sessionMethods)))

	// Payment links (SPEC section 4, Payment links): live data only.
	mux.Handle("POST /v1/payment-links", s.API(s.PerIP(httpx.LimitLinks, s.secretKey(s.createLink))))
	mux.Handle("GET /v1/payment-links", s.API(s.secretKey(s.listLinks)))
	mux.Handle("GET /v1/payment-links/{id}", s.API(s.secretKey(s.getLink)))
	mux.Handle("PATCH /v1/payment-links/{id}", s.API(s.secretKey(s.updateLink)))
	mux.Handle("GET /v1/payment-links/{id}/check", s.API(s.secretKey(s.checkLink)))
	mux.Handle("GET /v1/payment-links/{id}/qr", s.API(s.secretKey(s.linkQR)))

	// Routing (SPEC section 4, Routing).
	mux.Handle("POST /v1/route", s.API(s.PerIP(httpx.LimitRoute, s.secretKey(s.route))))
	mux.Handle("GET /v1/route", s.API(s.PerIP(httpx.LimitRoute, s.routeOverview))) // no key

	// Transfers (SPEC section 4, Transfers): live keys only; LimitTransfers
	// per workspace (a batch takes one turn) and the daily cap.
	mux.Handle("POST /v1/transfers", s.API(transferCodes(s.secretKey(s.createTransfer))))
	mux.Handle("GET /v1/transfers", s.API(transferCodes(s.secretKey(s.listTransfers))))
	mux.Handle("GET /v1/transfers/{id}", s.API(transferCodes(s.secretKey(s.getTransfer))))
	mux.Handle("POST /v1/transfers/batch", s.API(transferCodes(s.secretKey(s.createTransferBatch)))) // beyond the SPEC
	// Beyond the SPEC: a recipient's name before a payout; LimitRecipients.
	mux.Handle("POST /v1/transfers/recipient", s.API(transferCodes(s.secretKey(s.transferRecipient))))

	// Refunds (issue 19, docs/refunds.md): a test key refunds test
	// payments; LimitRefunds per workspace when creating.
	mux.Handle("POST /v1/refunds", s.API(refundCodes(s.secretKey(s.createRefund))))
	mux.Handle("GET /v1/refunds", s.API(refundCodes(s.secretKey(s.listRefunds))))
	mux.Handle("GET /v1/refunds/{id}", s.API(refundCodes(s.secretKey(s.getRefund))))

	// Webhooks: configuration and the delivery log.
	mux.Handle("GET /v1/config/webhook", s.API(s.secretKey(s.getWebhookConfig)))
	mux.Handle("PATCH /v1/config/webhook", s.API(s.secretKey(s.patchWebhookConfig)))
	mux.Handle("GET /v1/webhooks/deliveries", s.API(s.secretKey(s.listDeliveries)))
	mux.Handle("GET /v1/webhooks/deliveries/{id}", s.API(s.secretKey(s.getDelivery)))
	mux.Handle("POST /v1/webhooks/deliveries/{id}/resend", s.API(s.secretKey(s.resendDelivery))) // LimitResend per workspace

	// Partner provisioning (SPEC section 4, Partner): docs/partner.md.
	// LimitPartner per partner.
	mux.Handle("POST /v1/partner/merchants", s.API(s.partner(s.createMerchant)))
	mux.Handle("GET /v1/partner/merchants", s.API(s.partner(s.listMerchants)))
	mux.Handle("GET /v1/partner/merchants/{id}", s.API(s.partner(s.getMerchant)))
	mux.Handle("PATCH /v1/partner/merchants/{id}", s.API(s.partner(s.updateMerchant)))
	mux.Handle("POST /v1/partner/merchants/{id}/gateways", s.API(s.partner(s.addMerchantGateway)))
	mux.Handle("GET /v1/partner/merchants/{id}/verification", s.API(s.partner(s.merchantVerification)))
	mux.Handle("/v1/partner/", s.API(s.partner(s.partnerNoRoute)))

	// Aggregators' callbacks, one address per gateway.
	mux.Handle("POST /callbacks/{gatewayId}", s.API(s.gatewayCallback))
	mux.Handle("POST /callbacks/{gatewayId}/{segment}", s.API(s.gatewayCallback))
	mux.Handle("PUT /callbacks/{gatewayId}", s.API(s.gatewayCallback)) // MTN MoMo calls back with PUT
	mux.Handle("GET /callbacks/{gatewayId}", s.API(s.gatewayCallbackPing))
}
