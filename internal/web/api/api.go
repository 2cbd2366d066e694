// Package api is Cauri's JSON API, for machines: the merchants' servers
// (checkout sessions, payment links, routing, transfers, webhooks), the
// partners (/v1/partner) and the aggregators' callbacks. routes.go lists
// its routes, each with its credential and rate limit; a handler decodes,
// calls its service and encodes, and every error it returns is answered in
// SPEC section 7's shape.
package api

import (
	"time"

	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// API is the JSON API's handlers and what they call.
type API struct {
	*httpx.Kit
	Checkout  Checkout
	Transfers Transfers
	Refunds   Refunds
	Router    Ranker // ranks providers (POST and GET /v1/route)
	Accounts  Keys
	Partners  Partners
	Webhooks  Webhooks
	Gateways  Gateways
	PayURL    string // where the hosted pages are: a session's url
	LinkURL   string // where the links' pages are: a link's url
	// DashboardURL is where the dashboard is: a partner's invitation links.
	DashboardURL string
	Now          func() time.Time
	// Draining is closed when the server begins to shut down: a batch of
	// transfers starts nothing more and answers with what it did.
	Draining <-chan struct{}
	// NotFound answers a path no route takes (under /v1/partner/, once the
	// partner is authenticated).
	NotFound httpx.Handler
}
