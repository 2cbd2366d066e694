package pay

import (
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// Routes registers the hosted pages and the routes their script calls. None
// takes a key: a session's unguessable id (a link's slug) is the
// credential, as on the page. Their errors are answered in the script's
// shape ({"success": false, "message"}) by s.Page; a page's own form
// answers the page again, the reason shown. The per-IP limits are SPEC
// section 8's.
func (s *Pages) Routes(mux httpx.Mux) {
	mux.Handle("GET "+s.path+"/{id}", s.Page(s.checkoutPage))
	mux.Handle("POST "+s.path+"/{id}", s.Page(s.checkoutPagePost)) // LimitSandbox, or LimitInitiate for a payment
	mux.Handle("GET "+s.path+"/l/{slug}", s.Page(s.linkPage))
	mux.Handle("POST "+s.path+"/l/{slug}", s.Page(s.linkPagePost)) // LimitInitiate

	mux.Handle("POST /checkout/sandbox", s.Page(s.PerIP(httpx.LimitSandbox, s.sandboxSettle)))
	mux.Handle("POST /checkout/initiate", s.Page(s.PerIP(httpx.LimitInitiate, s.initiate)))
	mux.Handle("POST /checkout/verify", s.Page(s.PerIP(httpx.LimitVerify, s.verify)))
	mux.Handle("POST /checkout/code", s.Page(s.PerIP(httpx.LimitInitiate, s.submitCode)))

	mux.Handle("GET /static/logos/{file}", s.Page(s.logo))
	mux.Handle("GET /static/", httpx.StaticFiles())
}
