package pay

import (
	"net/http"
	"slices"
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
	// State is checkout.LinkOpen or why the page takes no payment; Closed
	// is its text then.
	State, Closed string
	AskHolder     bool   // never: the form asks every payer's name and e-mail
	PhoneEnd      string // a restricted link's number's last digits
	Methods       []pageMethod
	Form          checkout.LinkPayment
	// Card: a card is among the methods (the e-mail it needs is said).
	Card bool
	// Switch is never set: a link's page shows no failed try.
	Switch bool
}

// linkTexts are the page's texts of a link that takes no payment, and of
// a payment it refused, by state or by the refusal's reason: in the
// customer's language, not the service's English.
var linkTexts = map[string]string{
	checkout.LinkInactive: "link_inactive", checkout.LinkExpired: "link_expired", checkout.LinkUsedUp: "link_used_up",
	checkout.LinkBusy: "link_busy", "link_inactive": "link_inactive", "link_expired": "link_expired",
	"link_used_up": "link_used_up", "link_busy": "link_busy", "link_phone": "link_phone",
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
	state, err := s.Checkout.LinkState(r.Context(), l)
	if err != nil {
		return err
	}
	d := linkPageData{T: t, Lang: lang, Title: l.Title, Merchant: ws.Name, Amount: cauri.CustomerAmount(l.Amount, l.Currency),
		Action: s.LinkURL + "/" + l.Slug, State: state, Closed: t[linkTexts[state]], Form: form}
	if l.Phone != "" {
		d.PhoneEnd = l.Phone[max(0, len(l.Phone)-2):] // enough to recognise one's own number, too little to reveal it
	}
	if state == checkout.LinkOpen {
		methods, err := s.Checkout.LinkMethods(r.Context(), l)
		if err != nil {
			return err
		}
		d.Methods = pageMethods(methods, lang, l.Amount, l.Currency, "", httpx.Region(r))
		d.Card = slices.ContainsFunc(d.Methods, func(m pageMethod) bool { return m.Card })
	}
	switch {
	case refused != nil:
		d.Error = cauri.ErrorMessage(refused)
		if text, ok := t[linkTexts[cauri.ErrorReason(refused)]]; ok {
			d.Error = text
		}
		w.WriteHeader(httpx.Status(refused))
	case state == checkout.LinkInactive || state == checkout.LinkExpired || state == checkout.LinkUsedUp:
		w.WriteHeader(http.StatusGone)
	}
	return s.pages.ExecuteTemplate(w, "link.html", d)
}
