package pay

import (
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// pageData is what the checkout page template shows.
type pageData struct {
	T           map[string]string
	Lang        string
	Session     *cauri.Session
	Merchant    string
	Logo        string
	Amount      string
	Action      string // where the no-JavaScript form posts
	RedirectURL string // where the result sends the customer, if anywhere
	Error       string
	Methods     []pageMethod // a live session's ways to pay
	Waiting     bool         // a live payment waits for the customer's confirmation
	ContinueURL string       // the aggregator's page where the waiting payment goes on
	NeedsCode   bool         // the waiting payment asks for the code the aggregator sent
	// Instructions are the aggregator's words for the waiting payment;
	// Steps, the same split around the USSD codes they name, which the
	// page makes dialable.
	Instructions string
	Steps        []instructionPart
	// AskHolder: a card holder's name and e-mail are asked with their
	// address (a link's page asks every payer's already).
	AskHolder bool
	// Phone is the number the form opens with: the session's customer's,
	// or the one the last try was made with.
	Phone string
	// WaitingFor names the number and the method the waiting payment was
	// sent to; Waited, how many seconds ago (the script counts on from it).
	WaitingFor *waitingTo
	Waited     int
	// LastFailure is why the last try did not go through, in the
	// customer's words (what happened, what to do), when the customer may
	// try again. The aggregator's own words stay on the attempt, for the
	// merchant.
	LastFailure string
	// Receipt is a paid session's proof of payment.
	Receipt *receipt
	// Expired: the session's expiry has passed and it takes no payment
	// (a payment waiting at the expiry is still followed).
	Expired bool
	// Resend: the last try's request can be sent again as it was (after
	// a failure, or once the wait's countdown is over).
	Resend bool
	// Switch: after a failed try, the methods other than its own wait
	// behind "Pay with another operator", so that the reason, the way to
	// send again and the Pay button stay on a phone's screen.
	Switch bool
	// Exhausted: the session took all the tries it takes.
	Exhausted bool
	// ConfirmCancel: the customer tapped cancel; the page asks whether to
	// cancel indeed before anything changes.
	ConfirmCancel bool
	// ReturnURL is the way back to the merchant (cancel_url) offered, not
	// taken, while a failed live payment can be tried again.
	ReturnURL string
}

// pageReasons are the texts of the service's refusals the page words in
// the customer's language (by the refusal's reason); others are shown as
// the service says them.
var pageReasons = map[string]string{
	"session_expired": "session_expired", "attempts_exhausted": "attempts_exhausted",
	"resend_too_soon": "resend_too_soon", "payment_waiting": "payment_still_open", "wrong_number": "refusal_wrong_number",
}

// refusalText is why a failed attempt failed, in the customer's words:
// what happened and what to do, by the kind its connector reads in the
// aggregator's reason (the reason itself is the merchant's).
func refusalText(t map[string]string, a *cauri.PaymentAttempt) string {
	return t[refusalKey(connectors.Refusal(a.Provider, a.Reason))]
}

// refusalKey is the page's text of a kind of refusal.
func refusalKey(r gateway.Refusal) string {
	if r == gateway.RefusalOther {
		return "refusal_other"
	}
	return "refusal_" + string(r)
}

// receipt is what a customer keeps of a payment.
type receipt struct {
	Merchant, Amount, Date, Reference, Number, OperatorRef string
}

// pageMethod is one choice on the live page: an operator of a country, paid
// through the first gateway that serves it (the service fails over).
type pageMethod struct {
	Value, Label, Logo string
	Card               bool // paid on the aggregator's page: no phone number
	// Preauth is how the customer gets the code the method asks for before
	// paying (in the page's language); "" when it asks none.
	Preauth string
	// Billing: a card whose aggregator needs the card holder's name,
	// e-mail, phone and postal address (CinetPay).
	Billing bool
	// Chosen: the choice the page opens with.
	Chosen bool
	// Other: an operator of another country than the customer's (known
	// from their number), listed behind "Other countries".
	Other bool
	// Name and Place: the operator's name and its country's, in the
	// page's language; Short: the method is shown under its country's
	// tab, by Name alone (Place is for screen readers).
	Name, Place       string
	Short             bool
	country, operator string // the method's (catalog keys); "" for a card
}

// countryTab is one country of the page's methods shown as tabs: when
// no country can be told (no number, a language naming none), a
// compact row of countries, each showing only its operators, keeps the
// Pay button on a phone's screen.
type countryTab struct {
	Code, Name string
	Chosen     bool // the chosen method's country (else the first)
	Methods    []pageMethod
}

// countryTabs groups the mobile money methods by country when there are
// two countries or more and none is put behind "Other countries"; nil
// otherwise (cards are not in any tab).
func countryTabs(methods []pageMethod) []countryTab {
	var tabs []countryTab
	for _, m := range methods {
		if m.Other {
			return nil
		}
		if m.Card || m.country == "" {
			continue
		}
		i := slices.IndexFunc(tabs, func(t countryTab) bool { return t.Code == m.country })
		if i < 0 {
			tabs = append(tabs, countryTab{Code: m.country, Name: m.Place})
			i = len(tabs) - 1
		}
		m.Short = true
		tabs[i].Methods = append(tabs[i].Methods, m)
		tabs[i].Chosen = tabs[i].Chosen || m.Chosen
	}
	if len(tabs) < 2 {
		return nil
	}
	if !slices.ContainsFunc(tabs, func(t countryTab) bool { return t.Chosen }) {
		tabs[0].Chosen = true
	}
	return tabs
}

// checkoutPage is the hosted page of a session: GET {pay_url}/{id}.
func (s *Pages) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderCheckout(w, r, nil)
}

// checkoutPagePost is the page's forms: the cancel button (the same with
// or without JavaScript) and, for browsers without JavaScript, the
// simulate buttons of a test session (the same service as
// /checkout/sandbox) or the payment of a live one (as /checkout/initiate);
// then the page again.
func (s *Pages) checkoutPagePost(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return s.renderCheckout(w, r, cauri.Errorf(cauri.EInvalid, "Invalid form"))
	}
	limit := httpx.LimitSandbox
	if r.PostForm.Get("method") != "" || r.PostForm.Has("cancel") || r.PostForm.Has("otp") || r.PostForm.Has("resend") || r.PostForm.Has("switch") {
		limit = httpx.LimitInitiate // a payment counts as /checkout/initiate does
	}
	if err := s.LimitByIP(w, r, limit); err != nil {
		return s.renderCheckout(w, r, err)
	}
	var err error
	if r.PostForm.Has("cancel") && r.PostForm.Get("confirm") != "1" {
		// The first tap only asks: a stray one must not end the payment.
		return s.renderCheckout(w, r, nil)
	} else if r.PostForm.Has("cancel") {
		_, err = s.Checkout.Cancel(r.Context(), r.PathValue("id"))
	} else if method := r.PostForm.Get("method"); method != "" {
		gw, code, _ := strings.Cut(method, "|")
		_, err = s.Checkout.Initiate(r.Context(), r.PathValue("id"), checkout.Payment{GatewayID: gw, Code: code,
			Phone: r.PostForm.Get("phone"), AuthCode: r.PostForm.Get("authcode"), Holder: formHolder(r.PostForm)})
	} else if r.PostForm.Has("otp") {
		_, _, err = s.Checkout.SubmitCode(r.Context(), r.PathValue("id"), r.PostForm.Get("otp"))
	} else if r.PostForm.Has("resend") {
		_, err = s.Checkout.Resend(r.Context(), r.PathValue("id"))
	} else if r.PostForm.Has("switch") {
		// The wait ends (when the aggregator says the request has): the
		// page opens on the methods, with the number kept.
		if _, err = s.Checkout.Release(r.Context(), r.PathValue("id")); err == nil {
			http.Redirect(w, r, s.PayURL+"/"+r.PathValue("id")+"#pay", http.StatusSeeOther)
			return nil
		}
	} else if r.PostForm.Has("issue") {
		_, err = s.settle(r, r.PathValue("id"), r.PostForm.Get("issue"))
	}
	// Anything else is an aggregator's page sending the customer back with
	// a POST (CinetPay): the page again, which follows the payment.
	if err != nil {
		if cauri.ErrorCode(err) == cauri.EInternal {
			return err
		}
		return s.renderCheckout(w, r, err)
	}
	http.Redirect(w, r, s.PayURL+"/"+r.PathValue("id"), http.StatusSeeOther)
	return nil
}

// renderCheckout shows the page; refused is why a simulate form was
// refused, shown on the page with the status the sandbox route would give.
func (s *Pages) renderCheckout(w http.ResponseWriter, r *http.Request, refused error) error {
	lang, t := httpx.Language(r)
	httpx.SetPageHeaders(w)
	// A live payment's outcome is checked on the way (at most every 8 s).
	sess, err := s.Checkout.Refresh(r.Context(), r.PathValue("id"))
	if cauri.ErrorCode(err) == cauri.ENotFound {
		w.WriteHeader(http.StatusNotFound)
		return s.pages.ExecuteTemplate(w, "notfound.html", pageData{T: t, Lang: lang})
	}
	if err != nil {
		return err
	}
	ws, err := s.Accounts.Workspace(r.Context(), sess.WorkspaceID)
	if err != nil {
		return err
	}
	d := pageData{
		T: t, Lang: lang, Session: sess, Merchant: sess.MerchantName, Logo: sess.MerchantLogo,
		Amount: cauri.CustomerAmount(sess.Amount, sess.Currency), Action: s.PayURL + "/" + sess.ID, AskHolder: true,
	}
	if d.Merchant == "" {
		d.Merchant = ws.Name
	}
	if sess.Status == cauri.SessionCancelled && sess.Expired(sess.UpdatedAt) {
		d.Expired = true // cancelled by its expiry, or after it
	}
	if sess.Status.Payable() && sess.Expired(s.now()) {
		waiting, err := s.Checkout.Waiting(r.Context(), sess)
		if err != nil {
			return err
		}
		d.Expired = waiting == nil
	}
	worded := false
	if sess.Livemode && sess.Status.Payable() && !d.Expired {
		waiting, err := s.Checkout.Waiting(r.Context(), sess)
		if err != nil {
			return err
		}
		if waiting != nil {
			d.Waiting, d.ContinueURL, d.NeedsCode, d.Instructions = true, waiting.RedirectURL, waiting.NeedsCode, waiting.Instructions
			d.Steps = instructionParts(waiting.Instructions)
		}
		methods, err := s.Checkout.Methods(r.Context(), sess, "")
		if err != nil {
			return err
		}
		d.Methods = pageMethods(methods, lang, sess.Amount, sess.Currency, sess.CustomerPhone, httpx.Region(r))
		d.Phone = sess.CustomerPhone
		attempts, err := s.Checkout.Attempts(r.Context(), sess)
		if err != nil {
			return err
		}
		var last *cauri.PaymentAttempt
		if len(attempts) > 0 {
			last = attempts[0]
		}
		// A payment the aggregator refused (or that could not reach it) is
		// the last attempt, failed: the page says why in the customer's
		// words, not in the error's (the aggregator's).
		worded = cauri.ErrorCode(refused) == cauri.EBadGateway && last != nil && last.Status == cauri.AttemptFailed
		switch {
		case r.Method == http.MethodPost && r.PostForm.Has("method"):
			// A refused payment's page keeps what the customer chose and typed.
			keepChoice(d.Methods, r.PostForm.Get("method"))
			d.Phone = r.PostForm.Get("phone")
			if worded {
				d.LastFailure = refusalText(t, last)
			}
		case waiting != nil:
			d.WaitingFor, d.Waited = waitingFor(d.Methods, waiting), max(0, int(s.now().Sub(waiting.CreatedAt)/time.Second))
			d.Resend = checkout.Resendable(waiting) && len(attempts) < checkout.MaxAttempts
		case len(attempts) >= checkout.MaxAttempts:
			d.Exhausted = true
		case last != nil && last.Status == cauri.AttemptFailed:
			// Another try starts from the last one: its method, its number,
			// and why it failed.
			if i := methodOf(d.Methods, last); i >= 0 {
				keepChoice(d.Methods, d.Methods[i].Value)
				foldOthers(d.Methods)
				d.Switch = len(d.Methods) > 1
			}
			d.Phone, d.LastFailure, d.Resend = last.Phone, refusalText(t, last), checkout.Resendable(last)
			if sess.Status != cauri.SessionFailed {
				// The page says no more than that the payment is open: say
				// the last try failed.
				d.LastFailure = t["last_failed"] + " " + d.LastFailure
			}
		}
	}
	if sess.Livemode && sess.Status == cauri.SessionSuccess {
		attempts, err := s.Checkout.Attempts(r.Context(), sess)
		if err != nil {
			return err
		}
		d.Receipt = &receipt{Merchant: d.Merchant, Amount: d.Amount, Reference: sess.ID}
		if sess.CompletedAt != nil {
			d.Receipt.Date = sess.CompletedAt.UTC().Format("2006-01-02 15:04 UTC")
		}
		if i := slices.IndexFunc(attempts, func(a *cauri.PaymentAttempt) bool { return a.Status == cauri.AttemptSucceeded }); i >= 0 {
			d.Receipt.OperatorRef, d.Receipt.Number = attempts[i].ProviderRef, catalog.DisplayPhone(attempts[i].Phone)
		}
	}
	switch sess.Status {
	case cauri.SessionSuccess:
		d.RedirectURL = sess.SuccessURL
	case cauri.SessionFailed, cauri.SessionCancelled:
		d.RedirectURL = sess.CancelURL
		if sess.Status == cauri.SessionFailed && len(d.Methods) > 0 && !d.Exhausted {
			// A live payment that failed (a request the customer missed)
			// can be tried again: the customer stays, with a way back.
			d.RedirectURL, d.ReturnURL = "", sess.CancelURL
		}
	}
	if d.Expired {
		d.RedirectURL = sess.CancelURL
	}
	d.ConfirmCancel = r.Method == http.MethodPost && r.PostForm.Has("cancel") && refused == nil && sess.Status == cauri.SessionPending && !d.Waiting
	if refused != nil {
		d.Error = cauri.ErrorMessage(refused)
		if k, ok := pageReasons[cauri.ErrorReason(refused)]; ok {
			d.Error = t[k]
		}
		if worded {
			d.Error = "" // LastFailure says it
		}
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "checkout.html", d)
}

// instructionPart is a piece of an aggregator's instructions: words, or a
// USSD code to dial (*110#, *144*82#) with its tel: address.
type instructionPart struct {
	Text string
	Dial string
	Href template.URL
}

// ussdCode is a USSD code as instructions write it: a star or a hash,
// digits, stars or hashes with at least one digit, and the closing hash.
var ussdCode = regexp.MustCompile(`[*#][0-9*#]*[0-9][0-9*]*#`)

// instructionParts splits an aggregator's instructions around the USSD
// codes they name, so that a tap dials one. Only the aggregator's own
// words are shown: a code the aggregator did not give is never added.
func instructionParts(s string) []instructionPart {
	var out []instructionPart
	last := 0
	for _, m := range ussdCode.FindAllStringIndex(s, -1) {
		if m[0] > last {
			out = append(out, instructionPart{Text: s[last:m[0]]})
		}
		code := s[m[0]:m[1]]
		// A tel: address carries "#" escaped, or the dialler stops at it.
		out = append(out, instructionPart{Dial: code, Href: template.URL("tel:" + strings.ReplaceAll(code, "#", "%23"))})
		last = m[1]
	}
	if last < len(s) {
		out = append(out, instructionPart{Text: s[last:]})
	}
	return out
}

// pageMethods is one choice per operator and country (the service picks the
// gateway) and one per card method. When the customer's phone number is
// known (phone, E.164), its country's operators come first, the number's
// operator first of all, and that one is chosen (otherwise the first); the
// other countries' operators are then Other. Without a number, the
// country of the customer's language (region, "fr-SN") is taken the same
// way, when it has methods, with no operator chosen for it.
func pageMethods(methods []checkout.Method, lang string, amount int64, c cauri.Currency, phone, region string) []pageMethod {
	var out []pageMethod
	seen := map[string]bool{}
	for _, m := range methods {
		if seen[m.Flag+m.Name] {
			continue
		}
		seen[m.Flag+m.Name] = true
		pm := pageMethod{Value: m.GatewayID + "|" + m.Code, Label: m.Name + " · " + countryName(m, lang), Logo: m.Logo, Card: m.Type == checkout.TypeCard,
			Name: m.Name, Place: countryName(m, lang), country: m.Flag, operator: m.Operator}
		if pm.Card {
			pm.Label = m.Name
		}
		if p, ok := gateway.Lookup(m.Provider); ok && pm.Card && p.CardBilling {
			pm.Billing = true
		}
		if help := checkout.PreauthHelp(m.Provider, m.Code); help != nil {
			pm.Preauth = strings.ReplaceAll(help[lang], "{amount}", cauri.FormatAmount(amount, c))
		}
		out = append(out, pm)
	}
	country, operator := phoneOperator(out, phone)
	if country == "" && phone == "" && slices.ContainsFunc(out, func(m pageMethod) bool { return m.country == region && !m.Card }) {
		country = region
	}
	if country != "" {
		rank := func(m pageMethod) int {
			switch {
			case m.country == country && m.operator == operator:
				return 0
			case m.country == country:
				return 1
			}
			return 2
		}
		slices.SortStableFunc(out, func(a, b pageMethod) int { return rank(a) - rank(b) })
		for i := range out {
			out[i].Other = out[i].country != "" && out[i].country != country
		}
	}
	if len(out) > 0 {
		out[0].Chosen = true
	}
	return out
}

func (s *Pages) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// methodOf is the index of the page's method an attempt was made with (its
// country and operator), -1 when none.
func methodOf(methods []pageMethod, a *cauri.PaymentAttempt) int {
	return slices.IndexFunc(methods, func(m pageMethod) bool { return m.country == a.Country && m.operator == a.Operator && !m.Card })
}

// waitingTo is the number a waiting payment was sent to, as people read
// it, and its method ("" when not on the page); nil when it has no number.
type waitingTo struct{ Number, Method string }

// waitingFor names the number a waiting payment was sent to and its method.
func waitingFor(methods []pageMethod, a *cauri.PaymentAttempt) *waitingTo {
	if a.Phone == "" {
		return nil
	}
	w := &waitingTo{Number: catalog.DisplayPhone(a.Phone)}
	if i := methodOf(methods, a); i >= 0 {
		w.Method = methods[i].Label
	}
	return w
}

// keepChoice makes the method whose value the customer posted the chosen
// one (none changes when it is not offered any more).
func keepChoice(methods []pageMethod, value string) {
	if !slices.ContainsFunc(methods, func(m pageMethod) bool { return m.Value == value }) {
		return
	}
	for i := range methods {
		methods[i].Chosen = methods[i].Value == value
	}
}

// foldOthers puts every method but the chosen one behind the page's
// second list.
func foldOthers(methods []pageMethod) {
	for i := range methods {
		methods[i].Other = !methods[i].Chosen
	}
}

// countryName is a method's country in the page's language.
func countryName(m checkout.Method, lang string) string {
	if c, ok := catalog.LookupCountry(m.Flag); ok && lang == "fr" && c.NameFR != "" {
		return c.NameFR
	}
	return m.Country
}

// phoneOperator is the country of a customer's number among the methods'
// and the operator it belongs to ("" when it cannot be told: Wave, a
// ported number's guess is still taken).
func phoneOperator(methods []pageMethod, phone string) (country, operator string) {
	if phone == "" {
		return "", ""
	}
	for _, m := range methods {
		if m.country == "" {
			continue
		}
		if e164, err := catalog.ParsePhone("phone", phone, m.country); err == nil {
			return m.country, catalog.DetectOperator(m.country, e164).Operator
		}
	}
	return "", ""
}

// logo draws an operator's or a card's icon: its initials on its colour.
func (s *Pages) logo(w http.ResponseWriter, r *http.Request) error {
	key, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	color, label := "#5b6770", ""
	switch op := catalog.OperatorByKey(key); {
	case !ok:
	case op != nil:
		color, label = op.Color, initials(op.Name)
	default:
		for _, c := range catalog.Cards() {
			if c.Key == key {
				label = "CARD"
			}
		}
	}
	if label == "" {
		return cauri.Errorf(cauri.ENotFound, "No logo %s", r.PathValue("file"))
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="0 0 48 48"><rect width="48" height="48" rx="10" fill="%s"/><text x="24" y="29" font-family="sans-serif" font-size="%d" font-weight="700" text-anchor="middle" fill="#fff">%s</text></svg>`,
		template.HTMLEscapeString(color), 20-2*utf8.RuneCountInString(label), template.HTMLEscapeString(label))
	return nil
}

func initials(name string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '-' || r == '(' }) {
		if r, _ := utf8.DecodeRuneInString(w); r != utf8.RuneError && b.Len() < 2 {
			b.WriteRune(r)
		}
	}
	return strings.ToUpper(b.String())
}
