package dashboard

import (
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// pageSize is how many rows a dashboard list shows at once.
const pageSize = 50

// signedInUser is a dashboard request's caller: its session and the
// workspace it selected.
type signedInUser struct {
	d  *store.DashboardSession
	ws *cauri.Workspace
}

// dashHandler is a httpx.Handler of a signed-in dashboard user.
type dashHandler func(w http.ResponseWriter, r *http.Request, u *signedInUser) error

// signedInPage guards a dashboard page (routes.go says which): without a
// session it sends to the sign-in, without a workspace to the
// dashboard's home to pick one. The page's changes are the user's: the
// audit log records them so.
func (s *Dashboard) signedInPage(h dashHandler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, d, err := s.dashboardSession(r)
		switch {
		case cauri.ErrorCode(err) == cauri.EUnauthorized:
			http.Redirect(w, r, "/dashboard/login", http.StatusSeeOther)
			return nil
		case err != nil:
			return err
		case d.WorkspaceID == "":
			http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
			return nil
		}
		*r = *r.WithContext(store.WithActor(r.Context(), "user:"+d.UserID))
		ws, err := s.Accounts.Workspace(r.Context(), d.WorkspaceID)
		if err != nil {
			return err
		}
		shownMode(d, ws)
		return h(w, r, &signedInUser{d: d, ws: ws})
	}
}

// signedInForm guards a dashboard form (routes.go says which): its body
// read (small), its CSRF token checked, then as signedInPage.
func (s *Dashboard) signedInForm(h dashHandler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		r.Body = http.MaxBytesReader(w, r.Body, 8192)
		if err := r.ParseForm(); err != nil {
			return cauri.Errorf(cauri.EInvalid, "Invalid form")
		}
		if err := checkCSRF(r); err != nil {
			return err
		}
		return s.signedInPage(h)(w, r)
	}
}

// shownMode sets the data a session shows to what its workspace can have:
// an unverified workspace has test data only (its live keys make test
// objects), so its pages show test data whatever the session last chose.
func shownMode(d *store.DashboardSession, ws *cauri.Workspace) {
	if ws != nil {
		d.Livemode = ws.Livemode(d.Livemode)
	}
}

// frame is what every signed-in dashboard page shows around its content
// (the "top" template): the page's title and navigation key, the
// workspace, the data shown (live or test) and the banners.
type frame struct {
	T           map[string]string
	Lang        string
	CSRF        string
	Page        string // the page's key in navPages
	Path        string // its address, where the mode switch comes back to
	Workspace   string
	WorkspaceID string
	Livemode    bool
	Unverified  bool // the workspace stays in test mode until the service verifies it
}

// frame starts a dashboard page: its language, headers and CSRF token.
func (s *Dashboard) frame(w http.ResponseWriter, r *http.Request, page string, ws *cauri.Workspace, livemode bool) frame {
	lang, t := httpx.Language(r)
	httpx.SetPageHeaders(w)
	f := frame{T: t, Lang: lang, CSRF: s.csrfToken(w, r), Page: page, Path: pagePath(page), Livemode: livemode}
	if ws != nil {
		f.Workspace, f.WorkspaceID, f.Unverified = ws.Name, ws.ID, !ws.Verified
	}
	return f
}

// pageKey is the navigation's key of a page's address ("" for any other).
func pageKey(path string) string {
	for _, p := range navPages {
		if p.Path == path {
			return p.Key
		}
	}
	return ""
}

// pagePath is the address of the navigation's page key; the overview's for
// any other.
func pagePath(key string) string {
	for _, p := range navPages {
		if p.Key == key {
			return p.Path
		}
	}
	return "/dashboard"
}

type navPage struct{ Key, Path string }

// navPages are the dashboard's pages, in the navigation's order.
var navPages = []navPage{
	{"overview", "/dashboard"}, {"transactions", "/dashboard/transactions"}, {"links", "/dashboard/links"},
	{"transfers", "/dashboard/transfers"}, {"webhooks", "/dashboard/webhooks"}, {"gateways", "/dashboard/gateways"},
	{"keys", "/dashboard/keys"}, {"team", "/dashboard/team"},
}

type txRow struct {
	ID, OrderID, Customer, Amount, Status, Provider, Created string
}

type transactionsData struct {
	frame
	Rows       []txRow
	Query      url.Values
	ExportURL  string
	Next, Prev string
	Error      string
}

// maxPage bounds the page number, so its offset cannot overflow.
const maxPage = 1 << 20

// transactionsPage is GET /dashboard/transactions: the selected workspace's
// transactions of the selected mode, filtered as the export is (status,
// from, to, search), 50 a page, with the export of the same filters.
func (s *Dashboard) transactionsPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	d, ws := u.d, u.ws
	q, ferr := httpx.Query(r)
	data := transactionsData{frame: s.frame(w, r, "transactions", ws, d.Livemode), Query: q}
	var f store.ExportFilter
	if ferr == nil {
		f, _, ferr = transactionFilter(q)
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = min(max(page, 0), maxPage)
	if ferr != nil {
		data.Error = cauri.ErrorMessage(ferr)
		w.WriteHeader(http.StatusBadRequest)
		return s.pages.ExecuteTemplate(w, "transactions.html", data)
	}
	f.Limit, f.Offset = pageSize+1, page*pageSize
	err := s.Reports.Transactions(r.Context(), d.WorkspaceID, d.Livemode, f, func(row store.ExportRow) error {
		if len(data.Rows) < pageSize {
			e := newExportRow(row)
			customer := e.CustomerName
			if customer == "" {
				customer = e.CustomerEmail
			}
			data.Rows = append(data.Rows, txRow{ID: e.ID, OrderID: e.OrderID, Customer: customer,
				Amount: cauri.DisplayAmount(row.Session.Amount, row.Session.Currency), Status: string(e.Status), Provider: e.Provider,
				Created: row.Session.CreatedAt.UTC().Format("2006-01-02 15:04")})
		} else {
			next := cloneQuery(q)
			next.Set("page", strconv.Itoa(page+1))
			data.Next = "/dashboard/transactions?" + next.Encode()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if page > 0 {
		prev := cloneQuery(q)
		prev.Set("page", strconv.Itoa(page-1))
		data.Prev = "/dashboard/transactions?" + prev.Encode()
	}
	export := cloneQuery(q)
	export.Del("page")
	data.ExportURL = "/v1/transactions/export?" + export.Encode()
	return s.pages.ExecuteTemplate(w, "transactions.html", data)
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

type linkRow struct {
	ID, Title, Amount, URL string
	Active                 bool
	State                  string       // checkout.LinkOpen, LinkInactive, LinkExpired, LinkUsedUp
	Payments               string       // "3", or "3 / 5" with a limit
	Expires, Phone         string       // "" when not set
	WhatsApp               string       // the share sheet's addresses
	SMS                    template.URL // sms: is no scheme html/template trusts; this one is ours, its text escaped
}

type linksData struct {
	frame
	Currency cauri.Currency
	Error    string
	Links    []linkRow
	Older    string // the next page's address; "" on the last
}

// linksPage is GET /dashboard/links: the workspace's payment links, newest
// first, each with its state, its payments, its share sheet (QR code,
// copy, WhatsApp, SMS) and its switch, and the form that creates one.
func (s *Dashboard) linksPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	return s.renderLinks(w, r, u, nil)
}

func (s *Dashboard) renderLinks(w http.ResponseWriter, r *http.Request, u *signedInUser, refused error) error {
	d, ws := u.d, u.ws
	// Links are live only: whatever data is selected, the page lists them
	// (a workspace still in test mode has none).
	links, more, err := s.Checkout.Links(r.Context(), ws, true, pageSize, r.URL.Query().Get("starting_after"))
	switch {
	case cauri.ErrorReason(err) == "test_mode":
		links, more = nil, false
	case cauri.ErrorCode(err) == cauri.EInvalid: // a stale starting_after: the first page
		if links, more, err = s.Checkout.Links(r.Context(), ws, true, pageSize, ""); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	data := linksData{frame: s.frame(w, r, "links", ws, d.Livemode), Currency: ws.DefaultCurrency}
	now := s.Now()
	for _, l := range links {
		row := linkRow{ID: l.ID, Title: l.Title, Amount: cauri.DisplayAmount(l.Amount, l.Currency), URL: l.URL(s.LinkURL), Active: l.Active,
			State: l.State(now), Payments: strconv.Itoa(l.Completed), Phone: l.Phone}
		if l.MaxPayments > 0 {
			row.Payments += " / " + strconv.Itoa(l.MaxPayments)
		}
		if l.ExpiresAt != nil {
			row.Expires = l.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
		}
		text := l.Title + " " + row.URL
		row.WhatsApp = "https://wa.me/?text=" + url.PathEscape(text)
		row.SMS = template.URL("sms:?&body=" + url.PathEscape(text))
		data.Links = append(data.Links, row)
	}
	if more {
		data.Older = "/dashboard/links?starting_after=" + url.QueryEscape(links[len(links)-1].ID)
	}
	if refused != nil {
		data.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "links.html", data)
}

// createLinkFromDashboard is POST /dashboard/links: a payment link, checked
// as POST /v1/payment-links checks it (production data only). The form's
// expiry is a date and time in UTC (a datetime-local field).
func (s *Dashboard) createLinkFromDashboard(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	d, ws := u.d, u.ws
	f := r.PostForm
	p := checkout.LinkParams{Title: f.Get("title"), Amount: strings.TrimSpace(f.Get("amount")), Currency: f.Get("currency"),
		MaxPayments: strings.TrimSpace(f.Get("max_payments")), Phone: f.Get("phone"), ExpiresAt: strings.TrimSpace(f.Get("expires_at"))}
	if p.ExpiresAt != "" {
		if t, err := time.Parse("2006-01-02T15:04", p.ExpiresAt); err == nil {
			p.ExpiresAt = t.Format(time.RFC3339)
		}
	}
	if _, err := s.Checkout.CreateLink(r.Context(), ws, d.Livemode, p); err != nil {
		if cauri.ErrorCode(err) == cauri.EInternal {
			return err
		}
		return s.renderLinks(w, r, u, err)
	}
	http.Redirect(w, r, "/dashboard/links", http.StatusSeeOther)
	return nil
}

// linkSwitch is POST /dashboard/links/{id}: deactivate or reactivate.
func (s *Dashboard) linkSwitch(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	if _, err := s.Checkout.SetLinkActive(r.Context(), ws.ID, r.PathValue("id"), r.PostForm.Get("active") == "true"); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/links", http.StatusSeeOther)
	return nil
}

// linkQR is GET /dashboard/links/{id}/qr: the QR code of the link's page
// address (SVG, or PNG with format=png), for the share sheet.
func (s *Dashboard) linkQR(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	l, err := s.Checkout.GetLink(r.Context(), u.ws, true, r.PathValue("id"))
	if err != nil {
		return err
	}
	return httpx.WriteQR(w, l.URL(s.LinkURL), r.URL.Query().Get("format"), l.ID)
}

type transferRow struct {
	ID, Created, Recipient, Phone, Amount, Status, Provider, Failure string
	Reported                                                         string // the name the payout's result gave (M-Pesa B2C)
}

type transfersData struct {
	frame
	Status string
	Rows   []transferRow
}

// transfersPage is GET /dashboard/transfers: the workspace's latest 200
// transfers (always live), of one status when asked.
func (s *Dashboard) transfersPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	status := cauri.TransferStatus(r.URL.Query().Get("status"))
	switch status {
	case "", cauri.TransferProcessing, cauri.TransferSucceeded, cauri.TransferFailed:
	default:
		status = ""
	}
	list, err := s.Transfers.List(r.Context(), ws.ID, status, 200)
	if err != nil {
		return err
	}
	data := transfersData{frame: s.frame(w, r, "transfers", ws, true), Status: string(status)}
	for _, tr := range list {
		data.Rows = append(data.Rows, transferRow{ID: tr.ID, Created: tr.CreatedAt.UTC().Format("2006-01-02 15:04"),
			Recipient: tr.RecipientName, Phone: tr.Phone, Amount: cauri.DisplayAmount(tr.Amount, tr.Currency), Status: string(tr.Status),
			Provider: tr.Provider, Failure: tr.FailureCode, Reported: tr.RecipientNameReported})
	}
	return s.pages.ExecuteTemplate(w, "transfers.html", data)
}

type attemptRow struct {
	Created, Gateway, Provider, Operator, Phone, Status, Reason, Route, ProviderRef string
}

type transactionData struct {
	frame
	Session  cauri.SessionObject
	Amount   string
	Metadata []metadataRow // by key
	// Created, Updated and Completed are the session's times as the
	// page's language writes them (Completed "" while it has not ended).
	Created, Updated, Completed string
	Attempts                    []attemptRow
	Deliveries                  []deliveryRow
	Refunds                     []refundRow
	// Refundable is what is left to refund, in major units ("" when
	// nothing is: no refund form); RefundKey the form's idempotency key,
	// so that a form sent twice refunds once.
	Refundable, RefundKey string
	Error                 string // why a refund was refused
}

type metadataRow struct{ Key, Value string }

type refundRow struct {
	ID, Created, Amount, Method, Status, Failure, Reason string
}

// transactionPage is GET /dashboard/transactions/{id}: a session with its
// attempts (the gateway that served each, and why it was chosen), its
// refunds (and the form refunding it, while something is left) and its
// webhook deliveries. Another workspace's, or the other mode's, is 404.
func (s *Dashboard) transactionPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	return s.renderTransaction(w, r, u, nil)
}

func (s *Dashboard) renderTransaction(w http.ResponseWriter, r *http.Request, u *signedInUser, refused error) error {
	d, ws := u.d, u.ws
	sess, attempts, err := s.Checkout.Detail(r.Context(), ws.ID, d.Livemode, r.PathValue("id"))
	if err != nil {
		return err
	}
	names, err := s.Gateways.Names(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	deliveries, err := s.Webhooks.Deliveries(r.Context(), ws.ID, d.Livemode, store.DeliveryFilter{TransactionID: sess.ID, Limit: 200})
	if err != nil {
		return err
	}
	refunds, left, err := s.Refunds.OfSession(r.Context(), sess)
	if err != nil {
		return err
	}
	data := transactionData{frame: s.frame(w, r, "transactions", ws, sess.Livemode), Session: sess.Object(s.PayURL), Amount: cauri.DisplayAmount(sess.Amount, sess.Currency)}
	data.Created, data.Updated = httpx.DateTime(data.T, sess.CreatedAt), httpx.DateTime(data.T, sess.UpdatedAt)
	if sess.CompletedAt != nil {
		data.Completed = httpx.DateTime(data.T, *sess.CompletedAt)
	}
	for _, k := range slices.Sorted(maps.Keys(sess.Metadata)) {
		data.Metadata = append(data.Metadata, metadataRow{k, sess.Metadata[k]})
	}
	for _, a := range attempts {
		data.Attempts = append(data.Attempts, attemptRow{Created: a.CreatedAt.UTC().Format("2006-01-02 15:04:05"), Gateway: names[a.GatewayID],
			Provider: a.Provider, Operator: a.Operator, Phone: a.Phone, Status: string(a.Status), Reason: a.Reason, Route: a.RouteReason,
			ProviderRef: a.ProviderRef})
	}
	for _, dl := range deliveries {
		data.Deliveries = append(data.Deliveries, newDeliveryRow(dl))
	}
	for _, rf := range refunds {
		failure := rf.FailureCode
		if rf.FailureMessage != "" {
			failure += ": " + rf.FailureMessage
		}
		data.Refunds = append(data.Refunds, refundRow{ID: rf.ID, Created: rf.CreatedAt.UTC().Format("2006-01-02 15:04:05"),
			Amount: cauri.DisplayAmount(rf.Amount, rf.Currency), Method: string(rf.Method), Status: string(rf.Status), Failure: failure, Reason: rf.Reason})
	}
	if left > 0 {
		data.Refundable, data.RefundKey = cauri.FormatAmount(left, sess.Currency), cauri.NewID("")
	}
	if refused != nil {
		data.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "transaction.html", data)
}

// refundFromDashboard is POST /dashboard/transactions/{id}/refund: a
// refund of the transaction, checked as POST /v1/refunds checks it, in the
// data shown (test or live), by any member of the workspace (the dashboard
// has no roles: a member may do what the workspace's secret key does). The
// form's key makes a form sent twice one refund. A refusal shows on the
// page.
func (s *Dashboard) refundFromDashboard(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	d, ws := u.d, u.ws
	f := r.PostForm
	key := ""
	if k := strings.TrimSpace(f.Get("key")); k != "" {
		key = "dashboard:" + k
	}
	_, _, err := s.Refunds.Create(r.Context(), ws, d.Livemode, refund.Params{TransactionID: r.PathValue("id"),
		Amount: strings.TrimSpace(f.Get("amount")), Method: f.Get("method"), Reason: f.Get("reason")}, key)
	if err != nil {
		if code := cauri.ErrorCode(err); code == cauri.EInternal || code == cauri.ENotFound {
			return err
		}
		return s.renderTransaction(w, r, u, err)
	}
	http.Redirect(w, r, "/dashboard/transactions/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
	return nil
}
