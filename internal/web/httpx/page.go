package httpx

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed templates/layout.html
var layoutFS embed.FS

//go:embed static
var staticFS embed.FS

// Templates parses an audience's page templates (patterns in fsys) with
// the layout every page shares ("head": the document's head, the
// stylesheet).
func Templates(fsys fs.FS, funcs template.FuncMap, patterns ...string) (*template.Template, error) {
	t, err := template.New("").Funcs(funcs).ParseFS(layoutFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	return t.ParseFS(fsys, patterns...)
}

// StaticFiles serves the pages' stylesheet and script under /static/.
func StaticFiles() http.Handler {
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

// SetPageHeaders keeps a page from being framed, sniffed, cached or
// leaking its address (which may hold a session id) to another site.
func SetPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' https: http: data:; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Language chooses French or English from Accept-Language.
func Language(r *http.Request) (string, map[string]string) {
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

// Region is the country of the reader's first language tag that names one
// ("fr-SN" is Senegal: "SN"), "" when none does: a page's guess of where
// its customer is when their number is not known.
func Region(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		if _, region, ok := strings.Cut(tag, "-"); ok && len(region) == 2 {
			return strings.ToUpper(region)
		}
	}
	return ""
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
		"sent_to":          "Request sent to",
		"prompt_countdown": "A confirmation request should appear on your phone within {n} s.",
		"no_prompt":        "No request on your phone? Check that it is on and has signal, and that the number above is yours. An unanswered request expires after a few minutes; this page then lets you try again.",
		"last_failed":      "The last try did not go through.",
		// Why a payment failed, in the customer's words (gateway.Refusal).
		"refusal_insufficient_funds": "Not enough money: your Mobile Money balance is too low for this payment. Top up your account, then try again.",
		"refusal_not_approved":       "The payment was not approved on your phone, or the request expired. Try again, and approve the request on your phone (with your PIN) as soon as it appears.",
		"refusal_wrong_number":       "No Mobile Money account was found for this number with this operator. Check the number and the operator, then try again.",
		"refusal_limit":              "This payment is over a limit of your Mobile Money account (per payment, per day or per month). Pay with another account or operator, or try again once the limit allows it.",
		"refusal_unavailable":        "The operator's service is unavailable at the moment. Try again in a few minutes, or pay with another operator.",
		"refusal_other":              "The payment could not be completed. You can try again, or pay with another operator.",
		"session_expired":            "This payment has expired and can no longer be made. Ask the merchant for a new payment page.",
		"send_again":                 "Send the request again",
		"switch_operator":            "Pay with another operator",
		"attempts_exhausted":         "This payment has been tried too many times. Ask the merchant for a new payment page.",
		"resend_too_soon":            "A request was just sent to this number: wait half a minute before sending another.",
		"payment_still_open":         "The last request is still open at the operator: approve it on your phone, or wait until it expires (usually within a few minutes), then try again.",
		"receipt_merchant":           "Merchant", "receipt_amount": "Amount", "receipt_date": "Date", "receipt_reference": "Reference",
		"receipt_operator_ref": "Operator reference", "receipt_number": "Paid with",
		"receipt_keep": "Keep this receipt (a screenshot will do) as proof of payment.",
		"phone_hint":   "The number that will confirm the payment",
		"processing":   "Processing…", "network": "Network error; please try again.",
		"cancel":          "Cancel and return to the merchant",
		"continue":        "Continue to the payment page",
		"link_inactive":   "This payment link is no longer active. Please contact the merchant.",
		"link_expired":    "This payment link has expired and no longer takes payments. Please contact the merchant.",
		"link_used_up":    "This payment link has already been paid as many times as the merchant allowed. Please contact the merchant.",
		"link_busy":       "Other payments through this link are under way and may use it up. Try again in a few minutes.",
		"link_phone":      "This payment link can only be paid from the phone number it was made for.",
		"link_phone_only": "This payment link can only be paid from the Mobile Money number ending in",
		"name":            "Your name", "email": "Your e-mail address", "other_countries": "Other countries", "email_optional": "Your e-mail address (optional; required for a card)", "email_optional_short": "E-mail (optional)",
		"sign_in": "Sign in", "sign_out": "Sign out", "password": "Password", "dashboard": "Dashboard", "workspace": "Workspace",
		"data": "Data", "live": "Live", "test": "Test", "show_test": "View test data", "show_live": "View live data",
		"live_after_verification": "Live data after verification", "show": "Show", "export": "Export transactions", "status": "Status",
		"from": "From", "to": "To", "search": "Order, name or e-mail", "format": "Format",
		"transactions": "Transactions", "links": "Payment links", "date": "Date", "order": "Order", "customer": "Customer",
		"amount": "Amount", "provider": "Provider", "nothing": "No transaction matches.", "newer": "Newer", "older": "Older",
		"title_col": "Title", "page": "Page", "state": "State", "active": "Active", "inactive": "Inactive",
		"deactivate": "Deactivate", "reactivate": "Reactivate", "no_links": "No payment link yet.", "create_link": "Create a payment link",
		"transfers": "Transfers", "recipient": "Recipient", "all": "All", "no_transfers": "No transfer.", "registered_name": "registered name",
		"webhooks": "Webhooks", "acknowledge": "Dismiss", "acknowledge_all": "Dismiss all", "unread_notifications": "Unread notifications in all:", "webhook_url": "Webhook URL", "test_webhook_url": "Test webhook URL (optional)",
		"events": "Events", "save": "Save", "event": "Event", "object": "Object", "result": "Last answer", "resend": "Resend",
		"no_deliveries": "No delivery.",
		"test_webhook":  "Test your endpoint", "send_test_webhook": "Send a test webhook", "test_webhook_to": "It goes to", "test_event": "test webhook",
		"test_webhook_hint":   "Sends one payment.completed event now, signed as every webhook is, about a sample payment that does not exist: its metadata has cauri_test_webhook set to \"true\" (check it before fulfilling an order). It is not retried; the log below shows your server's answer.",
		"test_webhook_no_url": "Save a webhook URL for this data first: there is nowhere to send a test to.",
		"delivery_log":        "Delivery log",
		"checklist":           "Get started", "check_done": "done",
		"months": "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", "datetime": "{day} {month} {year}, {time} UTC",
		"customer_email": "Customer's e-mail", "customer_phone": "Customer's phone", "updated": "Last change", "completed": "Ended",
		"metadata": "Metadata", "value": "Value", "no_metadata": "No metadata.", "description": "Description",
		"check_keys": "Your API keys", "check_keys_hint": "Your test and live keys are ready. The secret key stays on your server; the public key may appear in a page.",
		"check_test_payment": "Make a test payment", "check_test_payment_hint": "Create a checkout session with your test secret key, open its page and press Simulate success.",
		"check_webhook": "Receive a webhook", "check_webhook_hint": "Save the address where Cauri tells your server that a payment succeeded, then send a test webhook.",
		"check_webhook_saved": "Your address is saved; no webhook has reached it yet. Send a test webhook and check that your server answers 2xx.",
		"check_gateway":       "Connect an aggregator account", "check_gateway_hint": "Add the credentials of your account at an aggregator (pawaPay, Wave, CinetPay…) to take real payments.",
		"check_verified": "Get verified", "check_verified_hint": "Until your business is verified, every payment is a test payment. Ask the operator of this Cauri installation to verify it; it takes effect at once.",
		"signing": "Signed with", "signs_until": "also signs until",
		"signing_hint":   "The secret keys of this data sign every webhook, one signature each: verify with any of them. A rolled key keeps signing until it stops working.",
		"no_signing_key": "No secret key: webhooks cannot be signed, so none is sent.",
		"attempts":       "Payment attempts", "operator": "Operator", "why": "Why this gateway", "no_attempts": "No attempt.",
		"refunds": "Refunds", "refund": "Refund", "refund_left": "left to refund:", "refund_reason": "Reason (optional)",
		"refund_method": "Way back", "refund_by_aggregator": "Through the aggregator that collected", "refund_by_payout": "As a transfer to the payer's wallet",
		"no_refunds": "No refund.",
		"overview":   "Overview", "gateways": "Gateways", "keys": "API keys", "team": "Team",
		"unverified_banner": "Test mode until verified: this workspace's identity is not verified yet, so every payment is a test payment, even with live keys. To take real payments, ask whoever runs this Cauri service to verify your business; it takes effect at once.",
		"period":            "Period", "days": "days", "currency": "Currency", "volume": "Volume", "success_rate": "Success rate",
		"payments": "Payments", "volume_per_day": "Volume per day", "max": "highest:", "rate_per_day": "Success rate per day",
		"today": "today", "per_provider": "Per provider", "per_operator": "Per operator",
		"key": "Key", "kind": "Kind", "mode": "Mode", "created": "Created", "expires": "Stops working", "never": "—",
		"secret_key": "Secret key", "public_key": "Public key", "roll": "Roll", "grace": "Keep the old key working for",
		"now": "stop it now", "hour": "1 hour", "day": "24 hours", "three_days": "3 days", "week": "7 days",
		"new_key":   "Your new key. Copy it now: it will not be shown again.",
		"keys_hint": "Secret keys sign your API calls and your webhooks; keep them on your server. Public keys may appear in a page.",
		"name_col":  "Name", "enabled": "Enabled", "disabled": "Disabled", "enable": "Enable", "disable": "Disable",
		"health": "Last 24 hours", "credentials": "Credentials", "add_gateway": "Add a gateway", "countries": "Countries (optional, e.g. SN,CI)",
		"live_credentials": "Live credentials (not the aggregator's sandbox)", "operators": "Operators", "no_gateways": "No gateway yet: add one to take live payments.",
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
		"refused": "This did not go through", "back": "Back",
		"cancel_confirm": "Cancel this payment and go back to the merchant?",
		"cancel_yes":     "Yes, cancel the payment", "cancel_no": "No, go on paying",
		"link_expires": "Expires", "expired": "Expired", "used_up": "Used up", "share": "Share", "copy": "Copy", "copied": "Copied",
		"whatsapp": "WhatsApp", "sms": "SMS", "download_png": "Download the QR code (PNG)", "qr_alt": "QR code of the link's page",
		"expires_utc": "Expires (UTC, optional)", "max_payments": "Payments it takes (optional; 1 = single use)",
		"payer_phone": "Payer's number only (optional; + and country code)", "restricted_to": "Only from",
	},
	"fr": {
		"title": "Paiement", "pay": "Payer", "test_banner": "Mode test : aucun argent réel ne circule.",
		"simulate_success": "Simuler un succès", "simulate_failure": "Simuler un échec",
		"succeeded": "Paiement réussi", "failed": "Paiement échoué", "cancelled": "Paiement annulé",
		"refunded": "Paiement remboursé", "return": "Retour chez le marchand", "redirecting": "Redirection en cours…",
		"try_again": "Vous pouvez réessayer.", "not_found": "Cette page de paiement n'existe pas.",
		"live_unavailable": "Aucun moyen de paiement n'est encore disponible pour ce paiement. Contactez le marchand.",
		"choose":           "Choisissez comment payer", "phone": "Numéro Mobile Money", "waiting": "Confirmez le paiement sur votre téléphone…",
		"sent_to":                    "Demande envoyée au",
		"prompt_countdown":           "Une demande de confirmation doit apparaître sur votre téléphone d'ici {n} s.",
		"no_prompt":                  "Aucune demande sur votre téléphone ? Vérifiez qu'il est allumé et capte le réseau, et que le numéro ci-dessus est le vôtre. Une demande sans réponse expire au bout de quelques minutes ; cette page vous permet alors de réessayer.",
		"last_failed":                "La dernière tentative n'a pas abouti.",
		"refusal_insufficient_funds": "Solde insuffisant : votre compte Mobile Money n'a pas assez d'argent pour ce paiement. Rechargez votre compte, puis réessayez.",
		"refusal_not_approved":       "Le paiement n'a pas été validé sur votre téléphone, ou la demande a expiré. Réessayez, et validez la demande sur votre téléphone (avec votre code secret) dès qu'elle apparaît.",
		"refusal_wrong_number":       "Aucun compte Mobile Money n'a été trouvé pour ce numéro chez cet opérateur. Vérifiez le numéro et l'opérateur, puis réessayez.",
		"refusal_limit":              "Ce paiement dépasse une limite de votre compte Mobile Money (par opération, par jour ou par mois). Payez avec un autre compte ou un autre opérateur, ou réessayez quand la limite le permet.",
		"refusal_unavailable":        "Le service de l'opérateur est indisponible pour le moment. Réessayez dans quelques minutes, ou payez avec un autre opérateur.",
		"refusal_other":              "Le paiement n'a pas pu aboutir. Vous pouvez réessayer, ou payer avec un autre opérateur.",
		"session_expired":            "Ce paiement a expiré et ne peut plus être effectué. Demandez au marchand une nouvelle page de paiement.",
		"send_again":                 "Renvoyer la demande",
		"switch_operator":            "Payer avec un autre opérateur",
		"attempts_exhausted":         "Ce paiement a été tenté trop de fois. Demandez au marchand une nouvelle page de paiement.",
		"resend_too_soon":            "Une demande vient d'être envoyée à ce numéro : attendez une trentaine de secondes avant d'en envoyer une autre.",
		"payment_still_open":         "La dernière demande est encore ouverte chez l'opérateur : validez-la sur votre téléphone, ou attendez qu'elle expire (en général en quelques minutes), puis réessayez.",
		"receipt_merchant":           "Marchand", "receipt_amount": "Montant", "receipt_date": "Date", "receipt_reference": "Référence",
		"receipt_operator_ref": "Référence de l'opérateur", "receipt_number": "Payé avec",
		"receipt_keep": "Gardez ce reçu (une capture d'écran suffit) comme preuve de paiement.",
		"phone_hint":   "Le numéro qui confirmera le paiement",
		"processing":   "Traitement…", "network": "Erreur réseau ; réessayez.",
		"cancel":          "Annuler et retourner chez le marchand",
		"continue":        "Continuer vers la page de paiement",
		"link_inactive":   "Ce lien de paiement n'est plus actif. Contactez le marchand.",
		"link_expired":    "Ce lien de paiement a expiré et n'accepte plus de paiement. Contactez le marchand.",
		"link_used_up":    "Ce lien de paiement a déjà été payé autant de fois que le marchand l'a permis. Contactez le marchand.",
		"link_busy":       "D'autres paiements par ce lien sont en cours et pourraient l'épuiser. Réessayez dans quelques minutes.",
		"link_phone":      "Ce lien de paiement ne peut être payé que depuis le numéro de téléphone pour lequel il a été créé.",
		"link_phone_only": "Ce lien de paiement ne peut être payé que depuis le numéro Mobile Money se terminant par",
		"name":            "Votre nom", "email": "Votre adresse e-mail", "other_countries": "Autres pays", "email_optional": "Votre adresse e-mail (facultative ; requise pour une carte)", "email_optional_short": "E-mail (facultatif)",
		"sign_in": "Se connecter", "sign_out": "Se déconnecter", "password": "Mot de passe", "dashboard": "Tableau de bord",
		"workspace": "Espace", "data": "Données", "live": "Production", "test": "Test", "show_test": "Voir les données de test",
		"show_live": "Voir les données de production", "live_after_verification": "Production après la vérification", "show": "Afficher",
		"export": "Exporter les transactions", "status": "Statut", "from": "Du", "to": "Au", "search": "Commande, nom ou e-mail",
		"format":       "Format",
		"transactions": "Transactions", "links": "Liens de paiement", "date": "Date", "order": "Commande", "customer": "Client",
		"amount": "Montant", "provider": "Agrégateur", "nothing": "Aucune transaction ne correspond.", "newer": "Plus récentes",
		"older": "Plus anciennes", "title_col": "Titre", "page": "Page", "state": "État", "active": "Actif", "inactive": "Inactif",
		"deactivate": "Désactiver", "reactivate": "Réactiver", "no_links": "Aucun lien de paiement.", "create_link": "Créer un lien de paiement",
		"transfers": "Transferts", "recipient": "Bénéficiaire", "all": "Tous", "no_transfers": "Aucun transfert.", "registered_name": "nom enregistré",
		"webhooks": "Webhooks", "acknowledge": "Masquer", "acknowledge_all": "Tout masquer", "unread_notifications": "Notifications non lues en tout :", "webhook_url": "URL des webhooks", "test_webhook_url": "URL des webhooks de test (facultative)",
		"events": "Événements", "save": "Enregistrer", "event": "Événement", "object": "Objet", "result": "Dernière réponse",
		"resend": "Renvoyer", "no_deliveries": "Aucun envoi.",
		"test_webhook": "Tester votre serveur", "send_test_webhook": "Envoyer un webhook de test", "test_webhook_to": "Destination :", "test_event": "webhook de test",
		"test_webhook_hint":   "Envoie maintenant un événement payment.completed, signé comme tout webhook, à propos d'un paiement fictif : ses metadata ont cauri_test_webhook à \"true\" (vérifiez-le avant de livrer une commande). Il n'est pas renvoyé automatiquement ; le journal ci-dessous montre la réponse de votre serveur.",
		"test_webhook_no_url": "Enregistrez d'abord une URL de webhook pour ces données : sinon le test n'a nulle part où aller.",
		"delivery_log":        "Journal des envois",
		"checklist":           "Pour commencer", "check_done": "fait",
		"months": "janv. févr. mars avr. mai juin juil. août sept. oct. nov. déc.", "datetime": "{day} {month} {year} à {time} UTC",
		"customer_email": "E-mail du client", "customer_phone": "Téléphone du client", "updated": "Dernière modification", "completed": "Terminée",
		"metadata": "Métadonnées", "value": "Valeur", "no_metadata": "Aucune métadonnée.", "description": "Description",
		"check_keys": "Vos clés d'API", "check_keys_hint": "Vos clés de test et de production sont prêtes. La clé secrète reste sur votre serveur ; la clé publique peut figurer dans une page.",
		"check_test_payment": "Faire un paiement de test", "check_test_payment_hint": "Créez une session de paiement avec votre clé secrète de test, ouvrez sa page et appuyez sur Simuler un succès.",
		"check_webhook": "Recevoir un webhook", "check_webhook_hint": "Enregistrez l'adresse où Cauri prévient votre serveur qu'un paiement a réussi, puis envoyez un webhook de test.",
		"check_webhook_saved": "Votre adresse est enregistrée ; aucun webhook ne l'a encore atteinte. Envoyez un webhook de test et vérifiez que votre serveur répond 2xx.",
		"check_gateway":       "Connecter un compte d'agrégateur", "check_gateway_hint": "Ajoutez les identifiants de votre compte chez un agrégateur (pawaPay, Wave, CinetPay…) pour encaisser de vrais paiements.",
		"check_verified": "Faire vérifier votre entreprise", "check_verified_hint": "Tant que votre entreprise n'est pas vérifiée, chaque paiement est un paiement de test. Demandez à l'exploitant de cette installation Cauri de la vérifier ; cela prend effet immédiatement.",
		"signing": "Signés avec", "signs_until": "signe aussi jusqu'au",
		"signing_hint":   "Les clés secrètes de ces données signent chaque webhook, une signature chacune : vérifiez avec l'une ou l'autre. Une clé renouvelée continue de signer jusqu'à ce qu'elle cesse de fonctionner.",
		"no_signing_key": "Aucune clé secrète : les webhooks ne peuvent être signés, aucun n'est envoyé.",
		"attempts":       "Tentatives de paiement", "operator": "Opérateur", "why": "Pourquoi cet agrégateur", "no_attempts": "Aucune tentative.",
		"refunds": "Remboursements", "refund": "Rembourser", "refund_left": "reste à rembourser :", "refund_reason": "Motif (facultatif)",
		"refund_method": "Voie de retour", "refund_by_aggregator": "Par l'agrégateur qui a encaissé", "refund_by_payout": "Par un transfert vers le portefeuille du payeur",
		"no_refunds": "Aucun remboursement.",
		"overview":   "Vue d'ensemble", "gateways": "Agrégateurs", "keys": "Clés d'API", "team": "Équipe",
		"unverified_banner": "Mode test jusqu'à la vérification : l'identité de cet espace n'est pas encore vérifiée, chaque paiement est donc un paiement de test, même avec les clés de production. Pour encaisser de vrais paiements, demandez à l'exploitant de ce service Cauri de vérifier votre entreprise ; cela prend effet immédiatement.",
		"period":            "Période", "days": "jours", "currency": "Devise", "volume": "Volume", "success_rate": "Taux de succès",
		"payments": "Paiements", "volume_per_day": "Volume par jour", "max": "maximum :", "rate_per_day": "Taux de succès par jour",
		"today": "aujourd'hui", "per_provider": "Par agrégateur", "per_operator": "Par opérateur",
		"key": "Clé", "kind": "Type", "mode": "Mode", "created": "Créée", "expires": "Cesse de fonctionner", "never": "—",
		"secret_key": "Clé secrète", "public_key": "Clé publique", "roll": "Renouveler", "grace": "Garder l'ancienne clé valide",
		"now": "l'arrêter maintenant", "hour": "1 heure", "day": "24 heures", "three_days": "3 jours", "week": "7 jours",
		"new_key":   "Votre nouvelle clé. Copiez-la maintenant : elle ne sera plus affichée.",
		"keys_hint": "Les clés secrètes signent vos appels d'API et vos webhooks ; gardez-les sur votre serveur. Les clés publiques peuvent figurer dans une page.",
		"name_col":  "Nom", "enabled": "Actif", "disabled": "Inactif", "enable": "Activer", "disable": "Désactiver",
		"health": "Dernières 24 heures", "credentials": "Identifiants", "add_gateway": "Ajouter un agrégateur", "countries": "Pays (facultatif, ex. SN,CI)",
		"live_credentials": "Identifiants de production (pas le bac à sable de l'agrégateur)", "operators": "Opérateurs", "no_gateways": "Aucun agrégateur : ajoutez-en un pour encaisser en production.",
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
		"refused": "Cela n'a pas abouti", "back": "Retour",
		"cancel_confirm": "Annuler ce paiement et retourner chez le marchand ?",
		"cancel_yes":     "Oui, annuler le paiement", "cancel_no": "Non, continuer le paiement",
		"link_expires": "Expiration", "expired": "Expiré", "used_up": "Épuisé", "share": "Partager", "copy": "Copier", "copied": "Copié",
		"whatsapp": "WhatsApp", "sms": "SMS", "download_png": "Télécharger le code QR (PNG)", "qr_alt": "Code QR de la page du lien",
		"expires_utc": "Expire le (UTC, facultatif)", "max_payments": "Paiements acceptés (facultatif ; 1 = usage unique)",
		"payer_phone": "Numéro du payeur uniquement (facultatif ; + et indicatif du pays)", "restricted_to": "Seulement depuis",
	},
}
