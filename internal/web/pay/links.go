package pay

import (
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

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
func (s *Pages) linkPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderLink(w, r, checkout.LinkPayment{}, nil)
}

// linkPagePost is the link page's form: a session attached to the link,
// paid through the chosen method; then that session's page, which follows
// the payment (or offers the aggregator's page).
func (s *Pages) linkPagePost(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return s.renderLink(w, r, checkout.LinkPayment{}, cauri.Errorf(cauri.EInvalid, "Invalid form"))
	}
	gw, code, _ := strings.Cut(r.PostForm.Get("method"), "|")
	p := checkout.LinkPayment{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Phone: r.PostForm.Get("phone"), GatewayID: gw, Code: code,
		AuthCode: r.PostForm.Get("authcode"), Billing: formHolder(r.PostForm).Billing}
	if err := s.LimitByIP(w, r, httpx.LimitInitiate); err != nil {
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

func (s *Pages) renderLink(w http.ResponseWriter, r *http.Request, form checkout.LinkPayment, refused error) error {
	lang, t := httpx.Language(r)
	httpx.SetPageHeaders(w)
	l, ws, err := s.Checkout.Link(r.Context(), r.PathValue("slug"))
	if cauri.ErrorCode(err) == cauri.ENotFound {
		w.WriteHeader(http.StatusNotFound)
		return s.pages.ExecuteTemplate(w, "notfound.html", pageData{T: t, Lang: lang})
	}
	if err != nil {
		return err
	}
	d := linkPageData{T: t, Lang: lang, Title: l.Title, Merchant: ws.Name, Amount: cauri.CustomerAmount(l.Amount, l.Currency),
		Action: s.LinkURL + "/" + l.Slug, Active: l.Active, Form: form}
	if l.Active {
		methods, err := s.Checkout.LinkMethods(r.Context(), l)
		if err != nil {
			return err
		}
		d.Methods = pageMethods(methods, lang, l.Amount, l.Currency, "")
	}
	switch {
	case refused != nil:
		d.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	case !l.Active:
		w.WriteHeader(http.StatusGone)
	}
	return s.pages.ExecuteTemplate(w, "link.html", d)
}
