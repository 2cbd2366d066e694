// Package dashboard is the merchant's dashboard (/dashboard): sign-in and
// team, the overview, transactions and their export, links, transfers,
// webhooks, gateways and keys, in French or English. Every page but the
// sign-in and an invitation's needs a dashboard session (a cookie); every
// form, its CSRF token too. routes.go lists the pages, each with its guard.
package dashboard

import (
	"embed"
	"html/template"
	"time"

	"github.com/cauri-pay/cauri/internal/web/httpx"
)

//go:embed templates/*.html
var templateFS embed.FS

// Dashboard is the dashboard's handlers and what they call.
type Dashboard struct {
	*httpx.Kit
	Accounts  Accounts // sign-in, sessions, keys, team
	Checkout  Checkout // transactions' detail, links
	Transfers Transfers
	Refunds   Refunds // a transaction's refunds, and refunding it
	Reports   Reports // the overview, the lists, the exports
	Gateways  Gateways
	Webhooks  Webhooks
	Router    Health // a provider's health (nil: none shown)
	PayURL    string // a session's url; https there makes the cookies Secure
	LinkURL   string // where the links' pages are
	// DashboardURL is where the dashboard is: invitation links.
	DashboardURL string
	Now          func() time.Time
	pages        *template.Template
}

// New is the dashboard, its templates parsed: it fails when one does not
// parse.
func New(d Dashboard) (*Dashboard, error) {
	var err error
	d.pages, err = httpx.Templates(templateFS, template.FuncMap{
		"statuses": func() []string { return []string{"PENDING", "SUCCESS", "FAILED", "CANCELLED", "REFUNDED"} },
		"navPages": func() []navPage { return navPages },
	}, "templates/*.html")
	return &d, err
}
