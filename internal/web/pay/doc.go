// Package pay is what a paying customer sees: the hosted page of a
// checkout session ({pay_url}/{id}) and of a payment link
// ({pay_url}/l/{slug}), in French or English, working with or without
// JavaScript; the routes its script calls (/checkout/initiate, verify,
// code, sandbox); the operators' logos. routes.go lists them.
package pay

import (
	"embed"
	"html/template"
	"net/url"
	"time"

	"github.com/cauri-pay/cauri/internal/web/httpx"
)

//go:embed templates/*.html
var templateFS embed.FS

// Pages is the hosted pages' handlers and what they call.
type Pages struct {
	*httpx.Kit
	Checkout Checkout
	Accounts Workspaces // a workspace's name, when the session gives none
	PayURL   string     // where the pages are: {pay_url}/{id}
	LinkURL  string     // where the links' pages are: {pay_url}/l
	Now      func() time.Time
	path     string // PayURL's path, where the pages are routed
	pages    *template.Template
}

// New is the hosted pages, their templates parsed: it fails when one does
// not parse, so a broken page never reaches a customer.
func New(p Pages) (*Pages, error) {
	u, err := url.Parse(p.PayURL)
	if err != nil {
		return nil, err
	}
	p.path = u.Path
	p.pages, err = httpx.Templates(templateFS, template.FuncMap{"countries": countryTabs}, "templates/*.html")
	return &p, err
}
