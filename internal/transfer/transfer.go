// Package transfer sends money out to Mobile Money accounts through the
// workspace's gateways that can send money (SPEC sections 2, 3, 4 and 7,
// "Transfers"), exactly once: a transfer is committed, processing, before
// its aggregator is called, and its reference is the aggregator's own
// idempotency id. Outcomes arrive by the aggregators' callbacks or by the
// reconciler, and end the transfer with its webhook.
//
// It imports the domain, the store, the catalog, the gateway package and
// the routing engine.
package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
)

// Service creates and follows transfers.
type Service struct {
	Store Store
	Now   func() time.Time // injected clock
	// Connectors builds gateways' connectors.
	Connectors *movement.Connectors
	// Failures logs and counts what goes wrong where no request waits.
	Failures *movement.Failures
	// CallbackURL is the base of the aggregators' callback addresses.
	CallbackURL string
	// Committed, when set, is called after a change that emitted an event
	// is committed: the webhook worker sends its delivery at once.
	Committed func()
	// Route, when set, chooses among the gateways that can send a
	// transfer and learns from each payout's outcome.
	Route *routing.Router
	// Ended, when set, is told of each transfer this service ends, once
	// committed: a refund paid back by a transfer ends with it.
	Ended func(ctx context.Context, tr *cauri.Transfer)
}

// Params is a create request as the merchant sent it. Amount is the JSON
// number's text, so that no float ever holds money.
type Params struct {
	Amount        string
	Country       string
	Operator      string
	Phone         string
	Currency      string
	RecipientName string
	Description   string
	// CheckRecipientName asks that the transfer be refused (nom_different)
	// when the aggregator's name for the account clearly differs from
	// RecipientName (docs/transfers.md).
	CheckRecipientName bool
}

// invalid is a 400 with the SPEC's code.
func invalid(reason, format string, args ...any) error {
	return cauri.Reasonf(cauri.EInvalid, reason, format, args...)
}

// route is the gateway chosen for a transfer.
type route struct {
	gateway *cauri.Gateway
	code    string
}

// Validate checks a create request's fields in the documented order
// (montant_invalide, pays_non_desservi, operateur_manquant,
// operateur_non_desservi, methode_desactivee, telephone_invalide,
// devise_invalide, then recipient_name: invalid_body, or nom_manquant when
// a name check is asked without a name) and returns the transfer it
// describes, not yet stored.
func (s *Service) Validate(ctx context.Context, ws *cauri.Workspace, p Params) (*cauri.Transfer, error) {
	amountText := strings.TrimSpace(p.Amount)
	if amountText == "" {
		return nil, invalid("montant_invalide", "amount is required")
	}
	country, ok := catalog.LookupCountry(p.Country)
	if ok && len(strings.TrimSpace(p.Country)) != 2 {
		ok = false // the SPEC asks for the ISO code
	}
	// The amount's decimals depend on the currency: check it against the
	// country's (or the one given) once both are known, but report it first.
	cur := cauri.Currency("")
	if ok {
		cur = country.Currency
	}
	if c, err := cauri.ParseCurrency(p.Currency); p.Currency != "" && err == nil {
		cur = c
	}
	if cur == "" {
		cur = "XOF" // any: only the shape of the number is judged here
	}
	amount, err := cauri.ParseAmount("amount", amountText, cur)
	if err != nil {
		return nil, invalid("montant_invalide", "%s", cauri.ErrorMessage(err))
	}
	d, err := s.destination(ctx, ws, p.Country, p.Operator, p.Phone, amount)
	if err != nil {
		return nil, err
	}
	if p.Currency != "" {
		c, err := cauri.ParseCurrency(p.Currency)
		if err != nil || c != d.country.Currency {
			return nil, invalid("devise_invalide", "currency %q is not the currency of %s (%s)", p.Currency, d.country.Code, d.country.Currency)
		}
	}
	name, err := cauri.CleanText("recipient_name", p.RecipientName, 200)
	if err != nil {
		return nil, invalid("invalid_body", "%s", cauri.ErrorMessage(err))
	}
	if p.CheckRecipientName && !HasNameWords(name) {
		return nil, invalid("nom_manquant", "recipient_name is required with recipient_name_check: the name the recipient's account should bear")
	}
	desc, err := cauri.CleanText("description", p.Description, 500)
	if err != nil {
		return nil, invalid("invalid_body", "%s", cauri.ErrorMessage(err))
	}
	now := s.Now().UTC()
	rt := d.route
	return &cauri.Transfer{
		ID: cauri.NewID("tr_"), WorkspaceID: ws.ID, Livemode: true, Reference: cauri.NewUUID(), Status: cauri.TransferProcessing,
		Amount: amount, Currency: d.country.Currency, Country: d.country.Code, Operator: d.operator, ProviderOperator: rt.code,
		Phone: d.phone, RecipientName: name, Description: desc, GatewayID: rt.gateway.ID, Provider: rt.gateway.Provider,
		CreatedAt: now, UpdatedAt: now, RecipientNameCheck: nameCheckAsked(p.CheckRecipientName),
	}, nil
}

// nameCheckAsked is a new transfer's RecipientNameCheck: unavailable when
// the check is asked, until the aggregator's name matches.
func nameCheckAsked(asked bool) cauri.NameCheck {
	if asked {
		return cauri.NameCheckUnavailable
	}
	return cauri.NameCheckNone
}

// destination is where a transfer goes, validated.
type destination struct {
	country  *catalog.Country
	operator string
	phone    string // E.164
	route    *route // the gateway the routing chooses
	gateways []*cauri.Gateway
}

// destination checks a transfer's country, operator and phone in the
// documented order (pays_non_desservi, operateur_manquant,
// operateur_non_desservi, methode_desactivee, telephone_invalide) against
// the workspace's gateways: a transfer's and a name lookup's.
func (s *Service) destination(ctx context.Context, ws *cauri.Workspace, countryCode, operatorKey, phoneText string, amount int64) (*destination, error) {
	country, ok := catalog.LookupCountry(countryCode)
	if ok && len(strings.TrimSpace(countryCode)) != 2 {
		ok = false // the SPEC asks for the ISO code
	}
	gateways, err := s.Store.Gateways(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	if !ok || !servesCountry(gateways, country.Code) {
		return nil, invalid("pays_non_desservi", "country %q is not served: no gateway of this workspace sends money there (see GET /v1/transfers?options=1)", countryCode)
	}
	operator := strings.TrimSpace(operatorKey)
	if operator == "" {
		return nil, invalid("operateur_manquant", "operator is required (an operator key such as orange_money, mtn_momo, wave)")
	}
	rt, enabled := s.pickRoute(gateways, routing.Context{Country: country.Code, Operator: operator, Kind: routing.Payout, Amount: amount})
	if rt == nil && !enabled {
		return nil, invalid("operateur_non_desservi", "operator %q is not served in %s by this workspace's gateways", operator, country.Code)
	}
	if rt == nil {
		return nil, invalid("methode_desactivee", "operator %q is disabled in %s on this workspace's gateways", operator, country.Code)
	}
	phone, err := catalog.ParsePhone("phone", phoneText, country.Code)
	if err != nil {
		return nil, invalid("telephone_invalide", "%s", cauri.ErrorMessage(err))
	}
	return &destination{country: country, operator: operator, phone: phone, route: rt, gateways: gateways}, nil
}

// sends reports whether a gateway can send money live to a country.
func sends(g *cauri.Gateway, country string) bool {
	p, ok := gateway.Lookup(g.Provider)
	return ok && g.Live && g.Payout && p.PaysOut(country)
}

func servesCountry(gateways []*cauri.Gateway, country string) bool {
	for _, g := range gateways {
		for _, r := range g.Routes {
			if sends(g, r.Country) && r.Country == country {
				return true
			}
		}
	}
	return false
}

// pickRoute chooses the gateway that sends money to the context's operator
// in its country: the routing engine ranks the providers of the enabled
// gateways serving it (without the engine, or among gateways of one
// provider, the first added wins). served reports whether some gateway,
// enabled or not, serves it at all.
func (s *Service) pickRoute(gateways []*cauri.Gateway, c routing.Context) (rt *route, served bool) {
	routes, served := payoutRoutes(gateways, c.Country, c.Operator)
	for _, r := range routes {
		c.Providers = append(c.Providers, r.gateway.Provider)
	}
	if len(routes) == 0 {
		return nil, served
	}
	if s.Route == nil {
		return routes[0], served
	}
	best := s.Route.Choose(c).Provider
	for _, r := range routes {
		if r.gateway.Provider == best {
			return r, served
		}
	}
	return routes[0], served
}

// payoutRoutes are the enabled gateways that send money to operator in
// country, in the order they were added; served reports whether some
// gateway, enabled or not, serves it at all.
func payoutRoutes(gateways []*cauri.Gateway, country, operator string) (routes []*route, served bool) {
	for _, g := range gateways {
		for _, r := range g.Routes {
			if !sends(g, r.Country) || r.Country != country || r.Operator != operator {
				continue
			}
			served = true
			if g.Enabled && r.Enabled {
				routes = append(routes, &route{gateway: g, code: r.Code})
			}
		}
	}
	return routes, served
}

// Fingerprint identifies a request by its normalised fields, so that a
// replay with other whitespace, key order or phone format is still the
// same request.
func Fingerprint(tr *cauri.Transfer) string {
	fields := []any{tr.Amount, tr.Currency, tr.Country, tr.Operator, tr.Phone, tr.RecipientName, tr.Description}
	if tr.RecipientNameCheck != cauri.NameCheckNone {
		fields = append(fields, "recipient_name_check") // only then: the keys of earlier requests keep their fingerprint
	}
	b, _ := json.Marshal(fields)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// requestFingerprint is Fingerprint of a request's fields normalised
// without the workspace's gateways (which may have changed since the
// request was first made); false when the fields are not valid.
func requestFingerprint(p Params) (string, bool) {
	country, ok := catalog.LookupCountry(p.Country)
	if !ok || len(strings.TrimSpace(p.Country)) != 2 {
		return "", false
	}
	if c, err := cauri.ParseCurrency(p.Currency); p.Currency != "" && (err != nil || c != country.Currency) {
		return "", false
	}
	amount, err1 := cauri.ParseAmount("amount", strings.TrimSpace(p.Amount), country.Currency)
	phone, err2 := catalog.ParsePhone("phone", p.Phone, country.Code)
	name, err3 := cauri.CleanText("recipient_name", p.RecipientName, 200)
	desc, err4 := cauri.CleanText("description", p.Description, 500)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return "", false
	}
	return Fingerprint(&cauri.Transfer{Amount: amount, Currency: country.Currency, Country: country.Code,
		Operator: strings.TrimSpace(p.Operator), Phone: phone, RecipientName: name, Description: desc,
		RecipientNameCheck: nameCheckAsked(p.CheckRecipientName)}), true
}

// ReplayWait bounds how long a replay waits for the first request of its
// key, still running (its payout call not returned), before answering 409
// idempotency_key_in_use.
var ReplayWait = 10 * time.Second

// awaitFirst returns a replay's transfer once it will keep existing: while
// the first request of the key is still running (its payout call has not
// returned: the transfer may yet be deleted as never received, "not
// created"), it waits for it, at most ReplayWait, then answers 409
// idempotency_key_in_use (Retry-After). When the first request ends with
// the transfer deleted, a replay answers as it did: 500, not created,
// retry with the same key (concurrent copies of one request share its
// outcome, rather than each sending it again to an aggregator that just
// refused it).
func (s *Service) awaitFirst(ctx context.Context, tr *cauri.Transfer, err error) (*cauri.Transfer, error) {
	deadline := time.Now().Add(ReplayWait)
	for {
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, &cauri.Error{Code: cauri.EInternal, Reason: "internal",
				Message: "The first request with this Idempotency-Key could not be sent and created nothing; retry with the same Idempotency-Key"}
		case err != nil || tr == nil || tr.Status != cauri.TransferProcessing || tr.InitiatedAt != nil ||
			s.Now().Sub(tr.CreatedAt) >= movement.InitiationDeadline:
			return tr, err // it will keep existing (or nothing was found)
		case time.Now().After(deadline):
			return nil, &cauri.Error{Code: cauri.EConflict, Reason: "idempotency_key_in_use",
				Message: "The first request with this Idempotency-Key is still being processed; retry in a moment"}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		tr, err = s.Store.Transfer(ctx, tr.WorkspaceID, tr.ID)
	}
}

// ReplayRequest finds the transfer an idempotency key created for this same
// request, before validation: whatever changed since in the workspace (nil
// if none, or if the request is not valid on its face; 422 when the key
// was used for another request).
func (s *Service) ReplayRequest(ctx context.Context, ws *cauri.Workspace, key string, p Params) (*cauri.Transfer, error) {
	fp, ok := requestFingerprint(p)
	if key == "" || !ok {
		return nil, nil
	}
	prev, err := s.Store.TransferByIdempotencyKey(ctx, ws.ID, true, &store.Idempotency{Key: key, Fingerprint: fp}, s.Now())
	if errors.Is(err, store.ErrIdempotencyMismatch) {
		return nil, cauri.KeyReused(key, "transfer")
	}
	return s.awaitFirst(ctx, prev, err)
}

// Create commits the validated transfer tr (with its idempotency key, under
// the daily cap) and makes the payout. It returns the transfer, and whether
// it is a replay of an earlier request with the same key.
//
// The payout's answer decides: accepted, the transfer is processing (201);
// refused for want of funds, it is kept failed (transfer.failed) and the
// answer is 402 solde_insuffisant; refused otherwise, it is kept failed and
// answered 201 failed; surely never received by the aggregator (no
// connection, credentials refused, or a 5xx after which the aggregator
// says it has no such payout), it is deleted with its idempotency key and
// the answer is 500 internal: nothing was created. A timeout leaves it
// processing: the reconciler learns the outcome.
func (s *Service) Create(ctx context.Context, ws *cauri.Workspace, tr *cauri.Transfer, key string) (*cauri.Transfer, bool, error) {
	var idem *store.Idempotency
	if key != "" {
		idem = &store.Idempotency{Key: key, Fingerprint: Fingerprint(tr)}
	}
	now := s.Now().UTC()
	dayStart := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	prev, err := s.Store.CreateTransfer(ctx, tr, idem, dayStart, underDailyCap)
	if errors.Is(err, store.ErrIdempotencyMismatch) {
		return nil, false, cauri.KeyReused(key, "request")
	}
	if err != nil {
		return nil, false, err
	}
	if prev != "" {
		existing, err := s.Store.Transfer(ctx, ws.ID, prev)
		existing, err = s.awaitFirst(ctx, existing, err)
		return existing, true, err
	}
	// The payout runs to its end even if the client leaves: its outcome
	// must be recorded.
	ctx = context.WithoutCancel(ctx)
	done, err := s.payout(ctx, tr, false)
	if err != nil {
		return nil, false, err
	}
	if done.Status == cauri.TransferFailed && done.FailureCode == "solde_insuffisant" {
		return nil, false, cauri.Reasonf(cauri.EPayment, "solde_insuffisant",
			"Insufficient balance at %s for this transfer (%s); transfer %s is failed", tr.Provider, done.FailureMessage, tr.ID)
	}
	return done, false, nil
}

// payout calls the transfer's aggregator and records what it answered.
//
// Only a request that surely never reached the aggregator (no connection,
// credentials refused, a refusal before anything was created) counts as
// not sent. Then a first try (redrive false) deletes the transfer with its
// idempotency key ("500 internal: not created", retry with the same key),
// and a re-drive by the reconciler, whose transfer the merchant may have
// seen, ends it failed (not_received) with its webhook. Any other failure
// (a 5xx, an unreadable answer, no answer) may have reached it: the
// transfer stays processing and the aggregator's status decides, later.
func (s *Service) payout(ctx context.Context, tr *cauri.Transfer, redrive bool) (*cauri.Transfer, error) {
	notSent := func(cause error) (*cauri.Transfer, error) {
		if e := gateway.ErrorOf(cause); e != nil && e.Credentials {
			s.markCredentials(ctx, tr, e.Message)
		}
		if redrive { // finish tells the routing engine
			return s.finish(ctx, tr.ID, gateway.Status{Outcome: gateway.Failed, Reason: "not sent: " + cause.Error()}, "not_received")
		}
		s.learn(ctx, tr, routing.Technical)
		deleted, err := s.Store.DeleteTransfer(ctx, tr)
		if err != nil || !deleted { // something ended it meanwhile: it exists
			if err != nil {
				return nil, err
			}
			return s.transfer(ctx, tr.WorkspaceID, tr.ID)
		}
		return nil, &cauri.Error{Code: cauri.EInternal, Reason: "internal", Cause: cause,
			Message: "The transfer could not be sent to " + tr.Provider + " and was not created; retry with the same Idempotency-Key"}
	}
	payer, err := s.payer(ctx, tr.GatewayID)
	if err != nil {
		return notSent(err)
	}
	p := gateway.Payout{Reference: tr.Reference, Amount: tr.Amount, Currency: tr.Currency, Phone: tr.Phone, Operator: tr.ProviderOperator,
		Country: tr.Country, RecipientName: tr.RecipientName, Description: tr.Description, NotifyURL: s.notifyURL(tr),
		Created: func(ref string) error { tr.ProviderRef = ref; return s.Store.SetTransferProviderRef(ctx, tr.ID, ref) }}
	st, sent, err := movement.Send(func() (gateway.Status, error) { return payer.Payout(ctx, p) }, payer.IdempotentPayout())
	if sent == movement.NotSent {
		return notSent(err)
	}
	if st.ProviderRef != "" {
		tr.ProviderRef = st.ProviderRef
	}
	if merr := s.Store.MarkTransferInitiated(ctx, tr.ID, s.Now().UTC(), tr.ProviderRef); merr != nil {
		// The payout is sent: never answer "not created". The reconciler
		// adopts a transfer whose call end was not recorded.
		s.Failures.Record(ctx, movement.Transfer, "mark_initiated", tr.ID, merr)
		return tr, nil
	}
	if err != nil {
		return s.transfer(ctx, tr.WorkspaceID, tr.ID) // it may have arrived: the status decides, later
	}
	return s.finishAt(ctx, tr.ID, st, "", true)
}

// notifyURL is the callback address of tr's gateway.
func (s *Service) notifyURL(tr *cauri.Transfer) string { return s.CallbackURL + "/" + tr.GatewayID }

// payer builds the gateway's connector, which must be able to send money.
func (s *Service) payer(ctx context.Context, gatewayID string) (gateway.Payer, error) {
	g, err := s.Store.GatewayByID(ctx, gatewayID)
	if err != nil {
		return nil, err
	}
	c, err := s.Connectors.For(ctx, movement.Transfer, g)
	if err != nil {
		return nil, err
	}
	p, ok := c.(gateway.Payer)
	if !ok {
		return nil, fmt.Errorf("%s payouts are not connected yet", g.Name)
	}
	return p, nil
}

// finish records an aggregator's answer about a processing transfer: a
// final one ends it with its event; a pending one changes nothing.
// "Not found" ends it failed only NotFoundIsFinal after its payout call.
func (s *Service) finish(ctx context.Context, id string, st gateway.Status, failureCode string) (*cauri.Transfer, error) {
	return s.finishAt(ctx, id, st, failureCode, false)
}

// finishAt is finish; instant: the aggregator refused the payout in its
// answer to the payout call (a refusal for the amount then teaches the
// provider's ceiling).
func (s *Service) finishAt(ctx context.Context, id string, st gateway.Status, failureCode string, instant bool) (*cauri.Transfer, error) {
	tr, changed, err := s.Store.FinishTransfer(ctx, id, func(tr *cauri.Transfer) error {
		now := s.Now().UTC()
		if st.ProviderRef != "" {
			tr.ProviderRef = st.ProviderRef
		}
		switch st.Outcome {
		case gateway.Succeeded:
			tr.Status = cauri.TransferSucceeded
			tr.RecipientNameReported = reportedName(st.RecipientName)
		case gateway.NotFound:
			if tr.InitiatedAt == nil || now.Sub(*tr.InitiatedAt) < movement.NotFoundIsFinal {
				return nil
			}
			tr.Status, tr.FailureCode, tr.FailureMessage = cauri.TransferFailed, "not_received", "The aggregator never received the transfer"
			if st.Reason != "" {
				tr.FailureMessage = tr.Provider + " never received the transfer (it answered " + st.Reason + "): no money moved"
			}
		case gateway.Failed:
			tr.Status, tr.FailureCode, tr.FailureMessage = cauri.TransferFailed, "rejected", st.Reason
			switch {
			case failureCode != "":
				tr.FailureCode = failureCode
			case st.CredentialsRefused:
				tr.FailureCode = cauri.FailureCredentialsRefused
				tr.FailureMessage = tr.Provider + " refused the gateway's credentials (" + st.Reason + "): no money moved; the gateway's page tells what to fix"
			case st.LowBalance:
				tr.FailureCode = "solde_insuffisant"
			}
		default:
			return nil
		}
		tr.UpdatedAt, tr.CompletedAt = now, &now
		return nil
	})
	if err == nil && changed && s.Committed != nil {
		s.Committed()
	}
	if err == nil && changed && s.Ended != nil {
		s.Ended(ctx, tr)
	}
	if err == nil && changed {
		s.gatewayCredentials(ctx, tr, st.Reason)
		switch tr.FailureCode {
		case "":
			s.learn(ctx, tr, routing.Success)
		case "rejected":
			if instant && connectors.Refusal(tr.Provider, st.Reason) == gateway.RefusalLimit {
				s.learn(ctx, tr, routing.OverLimit)
			} else {
				s.learn(ctx, tr, routing.Declined)
			}
		case "not_received":
			s.learn(ctx, tr, routing.Technical)
		} // an empty wallet is the merchant's, not the provider's doing
	}
	return tr, transferNotFound(err, id)
}

// gatewayCredentials keeps the gateway's problem in step with how its
// payout ended: a payout refused for the gateway's credentials marks the
// gateway (the dashboard's gateways page shows it, docs/transfers.md); a
// payout that succeeded clears that mark (the credentials work again).
func (s *Service) gatewayCredentials(ctx context.Context, tr *cauri.Transfer, reason string) {
	switch {
	case tr.Status == cauri.TransferSucceeded:
		_, err := s.Store.ClearGatewayProblem(ctx, tr.GatewayID, movement.CredentialsProblem)
		s.Failures.Record(ctx, movement.Transfer, "gateway_problem", tr.GatewayID, err)
	case tr.FailureCode == cauri.FailureCredentialsRefused:
		s.markCredentials(ctx, tr, reason)
	}
}

// markCredentials records on tr's gateway that its aggregator refused its
// credentials, in the aggregator's words.
func (s *Service) markCredentials(ctx context.Context, tr *cauri.Transfer, reason string) {
	which := "the gateway's credentials"
	if tr.Provider == "mpesa" {
		which = "the B2C credentials (initiator_name, and initiator_password or security_credential: an initiator's password expires on the M-Pesa portal)"
	}
	problem := movement.CredentialsProblem + fmt.Sprintf("%s answered %q to transfer %s, and no money moved. Check %s, "+
		"then remove this gateway and add it again with the right ones; a payout that succeeds through it clears this.", tr.Provider, reason, tr.ID, which)
	s.Failures.Record(ctx, movement.Transfer, "gateway_problem", tr.GatewayID, s.Store.SetGatewayProblem(context.WithoutCancel(ctx), tr.GatewayID, problem))
}

// reportedName is the name a payout's result reported, as the transfer
// keeps it: one line of printable text, at most 200 characters (the
// aggregator's text is not trusted to be tidy).
func reportedName(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if r := []rune(s); len(r) > 200 {
		s = strings.TrimSpace(string(r[:200]))
	}
	return s
}

// learn tells the routing engine how a payout ended at its provider.
func (s *Service) learn(ctx context.Context, tr *cauri.Transfer, o routing.Outcome) {
	if s.Route != nil {
		s.Route.Record(ctx, routing.Key{Provider: tr.Provider, Country: tr.Country, Operator: tr.Operator, Kind: routing.Payout, Amount: tr.Amount}, o, 0)
	}
}

// Callback handles an aggregator's callback about one of the gateway's
// transfers, named by reference: it is a signal, confirmed with the
// aggregator at once (at most every 2 seconds per transfer) before
// anything changes. ENotFound when no transfer has this reference.
func (s *Service) Callback(ctx context.Context, gatewayID, reference string) error {
	tr, err := s.Store.TransferByReference(ctx, gatewayID, reference)
	if err != nil || tr.Status != cauri.TransferProcessing {
		return err
	}
	if turn, err := s.Store.ClaimTransferCallbackCheck(ctx, tr.ID, s.Now(), movement.CallbackCheck); err != nil || !turn {
		return err
	}
	return s.check(ctx, tr)
}

// statusRef names tr to its aggregator's status read.
func (s *Service) statusRef(tr *cauri.Transfer) gateway.Ref {
	return gateway.Ref{Reference: tr.Reference, ProviderRef: tr.ProviderRef, NotifyURL: s.notifyURL(tr), Amount: tr.Amount, Currency: tr.Currency}
}

// check asks the aggregator about a processing transfer and records a
// final answer.
func (s *Service) check(ctx context.Context, tr *cauri.Transfer) error {
	payer, err := s.payer(ctx, tr.GatewayID)
	if err != nil {
		return err
	}
	st, err := payer.PayoutStatus(ctx, s.statusRef(tr))
	if err != nil || st.Outcome == gateway.Pending {
		return err
	}
	_, err = s.finish(ctx, tr.ID, st, "")
	return err
}

// Reconcile is the background pass that no lost callback or crash escapes.
// A transfer whose payout call never recorded its end (the process stopped
// between committing it and hearing the aggregator) is asked about and,
// if the aggregator never received it, sent now with the same reference,
// so it is paid once. Transfers waiting for their outcome are asked about
// with backoff. It returns how many transfers it checked.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	now := s.Now().UTC()
	orphans, err := s.Store.OrphanTransfers(ctx, now.Add(-movement.InitiationDeadline), movement.ReconcileBatch)
	if err != nil {
		return 0, err
	}
	checked := 0
	for _, tr := range orphans {
		checked++
		payer, err := s.payer(ctx, tr.GatewayID)
		if err != nil {
			s.Failures.Record(ctx, movement.Transfer, "connector", tr.ID, err)
			continue
		}
		st, err := payer.PayoutStatus(ctx, s.statusRef(tr))
		if err != nil { // the aggregator is not answering: the next pass asks again
			s.Failures.Record(ctx, movement.Transfer, "check", tr.ID, err)
			continue
		}
		// One node adopts it (the claim is conditional), and only that node
		// re-drives it: never two payouts.
		won, err := s.Store.AdoptOrphanTransfer(ctx, tr.ID, now)
		if err != nil || !won {
			s.Failures.Record(ctx, movement.Transfer, "adopt", tr.ID, err)
			continue
		}
		switch {
		case st.Outcome == gateway.NotFound && tr.ProviderRef == "":
			_, err = s.payout(ctx, tr, true) // never received: send it now, once
			s.Failures.Record(ctx, movement.Transfer, "payout", tr.ID, err)
		case st.Outcome != gateway.Pending:
			_, err = s.finish(ctx, tr.ID, st, "")
			s.Failures.Record(ctx, movement.Transfer, "finish", tr.ID, err)
		}
	}
	due, err := s.Store.DueTransfers(ctx, now, movement.StatusCheck, movement.CheckBackoffMax, movement.ReconcileBatch)
	if err != nil {
		return checked, err
	}
	for _, tr := range due {
		if turn, err := s.Store.ClaimTransferCheck(ctx, tr.ID, now, time.Second); err != nil || !turn {
			continue // another node has it
		}
		checked++
		s.Failures.Record(ctx, movement.Transfer, "check", tr.ID, s.check(ctx, tr))
	}
	return checked, nil
}

// Options lists where the workspace can send money: each country served by
// one of its enabled gateways that send money, with its currency and its
// enabled operators.
func (s *Service) Options(ctx context.Context, ws *cauri.Workspace) ([]CountryOption, error) {
	gateways, err := s.Store.Gateways(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	byCountry := map[string]map[string]bool{}
	for _, g := range gateways {
		if !g.Enabled {
			continue
		}
		for _, r := range g.Routes {
			if r.Enabled && sends(g, r.Country) {
				if byCountry[r.Country] == nil {
					byCountry[r.Country] = map[string]bool{}
				}
				byCountry[r.Country][r.Operator] = true
			}
		}
	}
	out := []CountryOption{}
	for code, ops := range byCountry {
		c, _ := catalog.LookupCountry(code)
		o := CountryOption{Country: code, Name: c.Name, Currency: c.Currency, Operators: []OperatorOption{}}
		for op := range ops {
			o.Operators = append(o.Operators, OperatorOption{Operator: op, Name: catalog.OperatorByKey(op).Name})
		}
		sort.Slice(o.Operators, func(i, j int) bool { return o.Operators[i].Operator < o.Operators[j].Operator })
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Country < out[j].Country })
	return out, nil
}

// CountryOption is a country the workspace can send money to.
type CountryOption struct {
	Country   string           `json:"country"`
	Name      string           `json:"name"`
	Currency  cauri.Currency   `json:"currency"`
	Operators []OperatorOption `json:"operators"`
}

// OperatorOption is an operator key and its name.
type OperatorOption struct {
	Operator string `json:"operator"`
	Name     string `json:"name"`
}

// underDailyCap admits a transfer while the workspace has created fewer
// than its daily cap today (GMT, whatever their outcome): the SPEC's 429
// plafond_journalier.
func underDailyCap(today, dailyCap int) error {
	if today >= dailyCap {
		return cauri.Reasonf(cauri.ERateLimited, "plafond_journalier",
			"Daily transfer cap reached: %d transfers today (GMT); it resets at midnight GMT", dailyCap)
	}
	return nil
}

// SetDailyCap sets how many transfers a workspace may create per day (GMT,
// whatever their outcome), 0 or more: 0 refuses them all.
func (s *Service) SetDailyCap(ctx context.Context, workspaceID string, dailyCap int) (*cauri.Workspace, error) {
	if dailyCap < 0 {
		return nil, cauri.Errorf(cauri.EInvalid, "the daily cap must be 0 or more")
	}
	return s.Store.SetTransferDailyCap(ctx, workspaceID, dailyCap, s.Now())
}

// Get reads one of the workspace's transfers; another workspace's is
// ENotFound, as one that does not exist.
func (s *Service) Get(ctx context.Context, workspaceID, id string) (*cauri.Transfer, error) {
	return s.transfer(ctx, workspaceID, id)
}

// transfer is the store's Transfer, its not found worded.
func (s *Service) transfer(ctx context.Context, workspaceID, id string) (*cauri.Transfer, error) {
	tr, err := s.Store.Transfer(ctx, workspaceID, id)
	return tr, transferNotFound(err, id)
}

// transferNotFound words the store's ErrNotFound about transfer id.
func transferNotFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		e := cauri.NotFound("transfer", id)
		e.Cause = err
		return e
	}
	return err
}

// List lists the workspace's live transfers, newest first: those of
// status when it is set (processing, succeeded or failed), at most limit
// (1 to 200).
func (s *Service) List(ctx context.Context, workspaceID string, status cauri.TransferStatus, limit int) ([]*cauri.Transfer, error) {
	switch status {
	case "", cauri.TransferProcessing, cauri.TransferSucceeded, cauri.TransferFailed:
	default:
		return nil, cauri.Errorf(cauri.EInvalid, "status must be processing, succeeded or failed")
	}
	if limit < 1 || limit > 200 {
		return nil, cauri.Errorf(cauri.EInvalid, "limit must be a whole number from 1 to 200")
	}
	return s.Store.Transfers(ctx, workspaceID, true, status, limit)
}
