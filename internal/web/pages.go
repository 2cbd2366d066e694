package web

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"statuses": func() []string { return []string{"PENDING", "SUCCESS", "FAILED", "CANCELLED", "REFUNDED"} },
		"navPages": func() []navPage { return navPages },
	}).ParseFS(templateFS, "templates/*.html")
}

func staticFiles() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

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
	// Instructions are the aggregator's words for the waiting payment.
	Instructions string
	// AskHolder: a card holder's name and e-mail are asked with their
	// address (a link's page asks every payer's already).
	AskHolder bool
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
}

// checkoutPage is the hosted page of a session: GET {pay_url}/{id}.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderCheckout(w, r, nil)
}

// checkoutPagePost is the page's forms: the cancel button (the same with
// or without JavaScript) and, for browsers without JavaScript, the
// simulate buttons of a test session (the same service as
// /checkout/sandbox) or the payment of a live one (as /checkout/initiate);
// then the page again.
func (s *Server) checkoutPagePost(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return s.renderCheckout(w, r, cauri.Errorf(cauri.EInvalid, "Invalid form"))
	}
	limit := limitSandbox
	if r.PostForm.Get("method") != "" || r.PostForm.Has("cancel") || r.PostForm.Has("otp") {
		limit = limitInitiate // a payment counts as /checkout/initiate does
	}
	if err := s.limitByIP(w, r, limit); err != nil {
		return s.renderCheckout(w, r, err)
	}
	var err error
	if r.PostForm.Has("cancel") {
		_, err = s.Checkout.Cancel(r.Context(), r.PathValue("id"))
	} else if method := r.PostForm.Get("method"); method != "" {
		gw, code, _ := strings.Cut(method, "|")
		_, err = s.Checkout.Initiate(r.Context(), r.PathValue("id"), checkout.Payment{GatewayID: gw, Code: code,
			Phone: r.PostForm.Get("phone"), AuthCode: r.PostForm.Get("authcode"), Holder: formHolder(r.PostForm)})
	} else if r.PostForm.Has("otp") {
		_, _, err = s.Checkout.SubmitCode(r.Context(), r.PathValue("id"), r.PostForm.Get("otp"))
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
func (s *Server) renderCheckout(w http.ResponseWriter, r *http.Request, refused error) error {
	lang, t := pickLanguage(r)
	setPageHeaders(w)
	// A live payment's outcome is checked on the way (at most every 8 s).
	sess, err := s.Checkout.Verify(r.Context(), r.PathValue("id"))
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
		Amount: cauri.DisplayAmount(sess.Amount, sess.Currency), Action: s.PayURL + "/" + sess.ID, AskHolder: true,
	}
	if d.Merchant == "" {
		d.Merchant = ws.Name
	}
	if sess.Livemode && sess.Status.Payable() {
		a, err := s.Checkout.Waiting(r.Context(), sess)
		if err != nil {
			return err
		}
		if a != nil {
			d.Waiting, d.ContinueURL, d.NeedsCode, d.Instructions = true, a.RedirectURL, a.NeedsCode, a.Instructions
		}
		methods, err := s.Checkout.Methods(r.Context(), sess, "")
		if err != nil {
			return err
		}
		d.Methods = pageMethods(methods, lang, sess.Amount, sess.Currency)
	}
	switch sess.Status {
	case cauri.SessionSuccess:
		d.RedirectURL = sess.SuccessURL
	case cauri.SessionFailed, cauri.SessionCancelled:
		d.RedirectURL = sess.CancelURL
	}
	if refused != nil {
		d.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(statusOf[cauri.ErrorCode(refused)])
	}
	return s.pages.ExecuteTemplate(w, "checkout.html", d)
}

// pageMethods is one choice per operator and country (the service picks the
// gateway) and one per card method.
func pageMethods(methods []checkout.Method, lang string, amount int64, c cauri.Currency) []pageMethod {
	var out []pageMethod
	seen := map[string]bool{}
	for _, m := range methods {
		if seen[m.Flag+m.Name] {
			continue
		}
		seen[m.Flag+m.Name] = true
		pm := pageMethod{Value: m.GatewayID + "|" + m.Code, Label: m.Name + " · " + m.Country, Logo: m.Logo, Card: m.Type == checkout.TypeCard}
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
	return out
}

// setPageHeaders keeps the page from being framed, sniffed or leaking its
// address (which holds the session id) to the merchant's site.
func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' https: http: data:; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// logo draws an operator's or a card's icon: its initials on its colour.
func (s *Server) logo(w http.ResponseWriter, r *http.Request) error {
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

// pickLanguage chooses French or English from Accept-Language.
func pickLanguage(r *http.Request) (string, map[string]string) {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
		if strings.HasPrefix(tag, "fr") {
			return "fr", texts["fr"]
		}
		if strings.HasPrefix(tag, "en") {
			return "en", texts["en"]
		}
	}
	return "en", texts["en"]
}

var texts = map[string]map[string]string{
	"en": {
		"title": "Payment", "pay": "Pay", "test_banner": "Test mode: no real money moves.",
		"simulate_success": "Simulate success", "simulate_failure": "Simulate failure",
		"succeeded": "Payment succeeded", "failed": "Payment failed", "cancelled": "Payment cancelled",
		"refunded": "Payment refunded", "return": "Return to the merchant", "redirecting": "Taking you back to the merchant…",
		"try_again": "You can try again.", "not_found": "This payment page does not exist.",
		"live_unavailable": "No payment method is available for this payment yet. Please contact the merchant.",
		"choose":           "Choose how to pay", "phone": "Mobile Money number", "waiting": "Confirm the payment on your phone…",
		"phone_hint": "The number that will confirm the payment",
		"processing": "Processing…", "network": "Network error; please try again.",
		"cancel":        "Cancel and return to the merchant",
		"continue":      "Continue to the payment page",
		"link_inactive": "This payment link is no longer active. Please contact the merchant.",
		"name":          "Your name", "email": "Your e-mail address",
		"sign_in": "Sign in", "sign_out": "Sign out", "password": "Password", "dashboard": "Dashboard", "workspace": "Workspace",
		"data": "Data", "live": "Live", "test": "Test", "show": "Show", "export": "Export transactions", "status": "Status",
		"from": "From", "to": "To", "search": "Order, name or e-mail", "format": "Format",
		"transactions": "Transactions", "links": "Payment links", "date": "Date", "order": "Order", "customer": "Customer",
		"amount": "Amount", "provider": "Provider", "nothing": "No transaction matches.", "newer": "Newer", "older": "Older",
		"title_col": "Title", "page": "Page", "state": "State", "active": "Active", "inactive": "Inactive",
		"deactivate": "Deactivate", "reactivate": "Reactivate", "no_links": "No payment link yet.", "create_link": "Create a payment link",
		"transfers": "Transfers", "recipient": "Recipient", "all": "All", "no_transfers": "No transfer.",
		"webhooks": "Webhooks", "acknowledge": "Dismiss", "webhook_url": "Webhook URL", "test_webhook_url": "Test webhook URL (optional)",
		"events": "Events", "save": "Save", "event": "Event", "object": "Object", "result": "Last answer", "resend": "Resend",
		"no_deliveries": "No delivery.",
		"attempts":      "Payment attempts", "operator": "Operator", "why": "Why this gateway", "no_attempts": "No attempt.",
		"overview": "Overview", "gateways": "Gateways", "keys": "API keys", "team": "Team",
		"unverified_banner": "Test mode until verified: this workspace's identity is not verified yet, so every payment is a test payment, even with live keys.",
		"period":            "Period", "days": "days", "currency": "Currency", "volume": "Volume", "success_rate": "Success rate",
		"payments": "Payments", "volume_per_day": "Volume per day", "max": "highest:", "rate_per_day": "Success rate per day",
		"today": "today", "per_provider": "Per provider", "per_operator": "Per operator",
		"key": "Key", "kind": "Kind", "mode": "Mode", "created": "Created", "expires": "Stops working", "never": "—",
		"secret_key": "Secret key", "public_key": "Public key", "roll": "Roll", "grace": "Keep the old key working for",
		"now": "stop it now", "hour": "1 hour", "day": "24 hours", "three_days": "3 days", "week": "7 days",
		"new_key":   "Your new key. Copy it now: it will not be shown again.",
		"keys_hint": "Secret keys sign your API calls and your webhooks; keep them on your server. Public keys may appear in a page.",
		"name_col":  "Name", "enabled": "Enabled", "disabled": "Disabled", "enable": "Enable", "disable": "Disable",
		"health": "Last 24 hours", "credentials": "Credentials", "add_gateway": "Connect a gateway", "countries": "Countries (optional, e.g. SN,CI)",
		"live_credentials": "Live credentials (not the aggregator's sandbox)", "operators": "Operators", "no_gateways": "No gateway yet: connect one to take live payments.",
		"attempts_short": "attempts", "optional": "optional", "since": "Member since", "balance": "Balance",
		"connect_note": "Connect: the service collects your payments through its own gateways and holds the money; your balance is settled to you by the service.",
		"down":         "unreachable", "up": "answering", "last_failure": "Last failure", "can_collect": "collects", "can_payout": "sends money",
		"member": "Member", "invite": "Invite", "invite_email": "E-mail address to invite", "invitation_link": "Invitation link (valid 7 days); send it to your colleague. It will not be shown again.",
		"pending_invitations": "Pending invitations", "revoke": "Revoke", "accept": "Join", "invited_to": "You are invited to",
		"choose_password": "Choose a password (10 characters or more)", "your_password": "Your password",
		"invitation_gone": "This invitation is no longer valid. Ask for a new one.",
		"gateway_problem": "This gateway cannot be used:", "credential_sets": "Your account's credentials:",
		"holder": "Card holder", "holder_phone": "Card holder's phone number (+ and country code)", "holder_name": "First and last name", "address": "Address", "city": "City",
		"region": "State or region", "zip": "Postal code",
		"authcode": "Payment code", "otp": "Code you received", "send_code": "Confirm the code",
	},
	"fr": {
		"title": "Paiement", "pay": "Payer", "test_banner": "Mode test : aucun argent réel ne circule.",
		"simulate_success": "Simuler un succès", "simulate_failure": "Simuler un échec",
		"succeeded": "Paiement réussi", "failed": "Paiement échoué", "cancelled": "Paiement annulé",
		"refunded": "Paiement remboursé", "return": "Retour chez le marchand", "redirecting": "Retour chez le marchand…",
		"try_again": "Vous pouvez réessayer.", "not_found": "Cette page de paiement n'existe pas.",
		"live_unavailable": "Aucun moyen de paiement n'est encore disponible pour ce paiement. Contactez le marchand.",
		"choose":           "Choisissez comment payer", "phone": "Numéro Mobile Money", "waiting": "Confirmez le paiement sur votre téléphone…",
		"phone_hint": "Le numéro qui confirmera le paiement",
		"processing": "Traitement…", "network": "Erreur réseau ; réessayez.",
		"cancel":        "Annuler et retourner chez le marchand",
		"continue":      "Continuer vers la page de paiement",
		"link_inactive": "Ce lien de paiement n'est plus actif. Contactez le marchand.",
		"name":          "Votre nom", "email": "Votre adresse e-mail",
		"sign_in": "Se connecter", "sign_out": "Se déconnecter", "password": "Mot de passe", "dashboard": "Tableau de bord",
		"workspace": "Espace", "data": "Données", "live": "Production", "test": "Test", "show": "Afficher",
		"export": "Exporter les transactions", "status": "Statut", "from": "Du", "to": "Au", "search": "Commande, nom ou e-mail",
		"format":       "Format",
		"transactions": "Transactions", "links": "Liens de paiement", "date": "Date", "order": "Commande", "customer": "Client",
		"amount": "Montant", "provider": "Agrégateur", "nothing": "Aucune transaction ne correspond.", "newer": "Plus récentes",
		"older": "Plus anciennes", "title_col": "Titre", "page": "Page", "state": "État", "active": "Actif", "inactive": "Inactif",
		"deactivate": "Désactiver", "reactivate": "Réactiver", "no_links": "Aucun lien de paiement.", "create_link": "Créer un lien de paiement",
		"transfers": "Transferts", "recipient": "Bénéficiaire", "all": "Tous", "no_transfers": "Aucun transfert.",
		"webhooks": "Webhooks", "acknowledge": "Masquer", "webhook_url": "URL des webhooks", "test_webhook_url": "URL des webhooks de test (facultative)",
		"events": "Événements", "save": "Enregistrer", "event": "Événement", "object": "Objet", "result": "Dernière réponse",
		"resend": "Renvoyer", "no_deliveries": "Aucun envoi.",
		"attempts": "Tentatives de paiement", "operator": "Opérateur", "why": "Pourquoi cet agrégateur", "no_attempts": "Aucune tentative.",
		"overview": "Vue d'ensemble", "gateways": "Agrégateurs", "keys": "Clés d'API", "team": "Équipe",
		"unverified_banner": "Mode test jusqu'à la vérification : l'identité de cet espace n'est pas encore vérifiée, chaque paiement est donc un paiement de test, même avec les clés de production.",
		"period":            "Période", "days": "jours", "currency": "Devise", "volume": "Volume", "success_rate": "Taux de succès",
		"payments": "Paiements", "volume_per_day": "Volume par jour", "max": "maximum :", "rate_per_day": "Taux de succès par jour",
		"today": "aujourd'hui", "per_provider": "Par agrégateur", "per_operator": "Par opérateur",
		"key": "Clé", "kind": "Type", "mode": "Mode", "created": "Créée", "expires": "Cesse de fonctionner", "never": "—",
		"secret_key": "Clé secrète", "public_key": "Clé publique", "roll": "Renouveler", "grace": "Garder l'ancienne clé valide",
		"now": "l'arrêter maintenant", "hour": "1 heure", "day": "24 heures", "three_days": "3 jours", "week": "7 jours",
		"new_key":   "Votre nouvelle clé. Copiez-la maintenant : elle ne sera plus affichée.",
		"keys_hint": "Les clés secrètes signent vos appels d'API et vos webhooks ; gardez-les sur votre serveur. Les clés publiques peuvent figurer dans une page.",
		"name_col":  "Nom", "enabled": "Actif", "disabled": "Inactif", "enable": "Activer", "disable": "Désactiver",
		"health": "Dernières 24 heures", "credentials": "Identifiants", "add_gateway": "Connecter un agrégateur", "countries": "Pays (facultatif, ex. SN,CI)",
		"live_credentials": "Identifiants de production (pas le bac à sable de l'agrégateur)", "operators": "Opérateurs", "no_gateways": "Aucun agrégateur : connectez-en un pour encaisser en production.",
		"attempts_short": "tentatives", "optional": "facultatif", "since": "Membre depuis", "balance": "Solde",
		"connect_note": "Connect : le service encaisse vos paiements par ses propres agrégateurs et détient l'argent ; il vous verse votre solde.",
		"down":         "injoignable", "up": "répond", "last_failure": "Dernier échec", "can_collect": "encaisse", "can_payout": "envoie de l'argent",
		"member": "Membre", "invite": "Inviter", "invite_email": "Adresse e-mail à inviter", "invitation_link": "Lien d'invitation (valable 7 jours) ; envoyez-le à votre collègue. Il ne sera plus affiché.",
		"pending_invitations": "Invitations en attente", "revoke": "Révoquer", "accept": "Rejoindre", "invited_to": "Vous êtes invité·e à rejoindre",
		"choose_password": "Choisissez un mot de passe (10 caractères ou plus)", "your_password": "Votre mot de passe",
		"invitation_gone": "Cette invitation n'est plus valable. Demandez-en une nouvelle.",
		"gateway_problem": "Cet agrégateur est inutilisable :", "credential_sets": "Les identifiants de votre compte :",
		"holder": "Titulaire de la carte", "holder_phone": "Téléphone du titulaire (+ et indicatif du pays)", "holder_name": "Prénom et nom", "address": "Adresse", "city": "Ville",
		"region": "Région", "zip": "Code postal",
		"authcode": "Code de paiement", "otp": "Code reçu", "send_code": "Valider le code",
	},
}
