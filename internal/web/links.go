package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
)

type createLinkRequest struct {
	Title    string          `json:"title"`
	Amount   json.RawMessage `json:"amount"`
	Currency string          `json:"currency"`
}

// linkURL is the base of the links' pages: {pay_url}/l.
func (s *Server) linkURL() string { return s.PayURL + "/l" }

// createLink is POST /v1/payment-links: 200 with the link (SPEC section 4).
func (s *Server) createLink(w http.ResponseWriter, r *http.Request) error {
	if err := s.limitByIP(w, r, limitLinks); err != nil {
		return err
	}
	c, err := s.authenticate(r, false)
	if err != nil {
		return err
	}
	var req createLinkRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	amount, err := jsonNumber("amount", req.Amount)
	if err != nil {
		return err
	}
	l, err := s.Checkout.CreateLink(r.Context(), c.ws, c.key.Live, req.Title, amount, req.Currency)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l.Object(s.linkURL()))
	return nil
}

// checkLink is GET /v1/payment-links/{id}/check.
func (s *Server) checkLink(w http.ResponseWriter, r *http.Request) error {
	c, err := s.authenticate(r, false)
	if err != nil {
		return err
	}
	out, err := s.Checkout.CheckLink(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// linkPageData is what the link page template shows.
type linkPageData struct {
	T                     map[string]string
	Lang                  string
	Title, Merchant       string
	Amount, Action, Error string
	Active, AskHolder     bool // AskHolder: never, the form asks every payer's name and e-mail
	Methods               []pageMethod
	Form                  checkout.LinkPayment
}

// linkPage is GET {pay_url}/l/{slug}: a link's page.
func (s *Server) linkPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderLink(w, r, checkout.LinkPayment{}, nil)
}

// linkPagePost is the link page's form: a session attached to the link,
// paid through the chosen method; then that session's page, which follows
// the payment (or offers the aggregator's page).
func (s *Server) linkPagePost(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return s.renderLink(w, r, checkout.LinkPayment{}, cauri.Errorf(cauri.EInvalid, "Invalid form"))
	}
	gw, code, _ := strings.Cut(r.PostForm.Get("method"), "|")
	p := checkout.LinkPayment{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Phone: r.PostForm.Get("phone"), GatewayID: gw, Code: code,
		AuthCode: r.PostForm.Get("authcode"), Billing: formHolder(r.PostForm).Billing}
	if err := s.limitByIP(w, r, limitInitiate); err != nil {
		return s.renderLink(w, r, p, err)
	}
	sess, err := s.Checkout.PayLink(r.Context(), r.PathValue("slug"), p)
	switch {
	case sess != nil: // started, or refused: its page tells, and takes another try
		http.Redirect(w, r, s.PayURL+"/"+sess.ID, http.StatusSeeOther)
		return nil
	case cauri.ErrorCode(err) == cauri.EInternal:
		return err
	}
	return s.renderLink(w, r, p, err)
}

func (s *Server) renderLink(w http.ResponseWriter, r *http.Request, form checkout.LinkPayment, refused error) error {
	lang, t := pickLanguage(r)
	setPageHeaders(w)
	l, ws, err := s.Checkout.Link(r.Context(), r.PathValue("slug"))
	if cauri.ErrorCode(err) == cauri.ENotFound {
		w.WriteHeader(http.StatusNotFound)
		return s.pages.ExecuteTemplate(w, "notfound.html", pageData{T: t, Lang: lang})
	}
	if err != nil {
		return err
	}
	d := linkPageData{T: t, Lang: lang, Title: l.Title, Merchant: ws.Name, Amount: cauri.DisplayAmount(l.Amount, l.Currency),
		Action: s.linkURL() + "/" + l.Slug, Active: l.Active, Form: form}
	if l.Active {
		methods, err := s.Checkout.LinkMethods(r.Context(), l)
		if err != nil {
			return err
		}
		d.Methods = pageMethods(methods, lang, l.Amount, l.Currency)
	}
	switch {
	case refused != nil:
		d.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(statusOf[cauri.ErrorCode(refused)])
	case !l.Active:
		w.WriteHeader(http.StatusGone)
	}
	return s.pages.ExecuteTemplate(w, "link.html", d)
}
