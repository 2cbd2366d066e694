package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/routing"
)

// Payment is the customer's choice on the hosted page: a method (the
// gateway and the gateway's operator code the methods route listed), the
// phone number, and the code the operator gave the customer beforehand
// when the method asks for one (Method.Preauth).
type Payment struct {
	GatewayID, Code, Phone string
	AuthCode               string
	// Holder is the card holder, for a card through an aggregator that
	// needs one (gateway.Provider.CardBilling); Phone is theirs then.
	Holder Holder
}

// Holder is a card holder as the hosted page asks for one: their name and
// e-mail (the session's when it has them) and their postal address.
type Holder struct {
	Name, Email string
	gateway.Billing
}

// holder checks a card holder's details for a card through provider p,
// which needs them all, and completes them from the session.
func holder(sess *cauri.Session, h Holder, phone string) (Holder, string, error) {
	h.Name, h.Email = strings.TrimSpace(h.Name), strings.TrimSpace(h.Email)
	if h.Name == "" {
		h.Name = sess.CustomerName
	}
	if h.Email == "" {
		h.Email = sess.CustomerEmail
	}
	if len(strings.Fields(h.Name)) < 2 || len(h.Name) > 200 {
		return h, "", cauri.Errorf(cauri.EInvalid, "Enter the card holder's first and last name (at most 200 characters)")
	}
	if _, err := mail.ParseAddress(h.Email); err != nil || !strings.Contains(h.Email, "@") {
		return h, "", cauri.Errorf(cauri.EInvalid, "Enter the card holder's e-mail address")
	}
	for _, f := range []struct{ name, value string }{{"address", h.Address}, {"city", h.City}, {"state or region", h.State},
		{"postal code", h.ZipCode}} {
		if strings.TrimSpace(f.value) == "" {
			return h, "", cauri.Errorf(cauri.EInvalid, "Enter the card holder's %s, as the card's bank knows it", f.name)
		}
		if len(f.value) > 120 {
			return h, "", cauri.Errorf(cauri.EInvalid, "The card holder's %s is longer than 120 characters", f.name)
		}
	}
	e164, err := catalog.ParseInternationalPhone("phone", phone)
	return h, e164, err
}

// Initiate starts paying a live session with one of its methods (the
// gateway and the gateway's operator code the methods route listed) from
// the customer's phone. If that gateway cannot start the payment for a
// reason another could overcome, the next gateway serving the same
// operator is tried; before moving on, a transient failure is checked with
// the first gateway, and the session never has two pending attempts, so a
// customer is never debited twice.
func (s *Service) Initiate(ctx context.Context, sessionID string, p Payment) (*cauri.PaymentAttempt, error) {
	gatewayID, code, phone := p.GatewayID, p.Code, p.Phone
	sess, err := s.Store.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !sess.Livemode {
		return nil, cauri.Errorf(cauri.EForbidden, "This is a test session: settle it with the simulate buttons (POST /checkout/sandbox)")
	}
	if !sess.Status.Payable() {
		return nil, cauri.Errorf(cauri.EConflict, "Session is %s and can no longer be paid", sess.Status)
	}
	if sess.Expired(s.Now()) {
		return nil, expired(sess)
	}
	methods, err := s.Methods(ctx, sess, "")
	if err != nil {
		return nil, err
	}
	var chosen *Method
	for i := range methods {
		if methods[i].GatewayID == gatewayID && methods[i].Code == code {
			chosen = &methods[i]
		}
	}
	if chosen == nil {
		return nil, cauri.Errorf(cauri.EInvalid, "This payment method is not available for this payment")
	}
	gateways, err := s.gateways(ctx, sess)
	if err != nil {
		return nil, err
	}
	var e164, operator string
	var candidates []*cauri.Gateway
	if chosen.Type == TypeCard {
		// A card is paid on the aggregator's page, through the gateway listed.
		operator = strings.ToLower(code)
		if prov, ok := gateway.Lookup(chosen.Provider); ok && prov.CardBilling {
			if p.Holder, e164, err = holder(sess, p.Holder, phone); err != nil {
				return nil, err
			}
		}
		for _, g := range gateways {
			if g.ID == gatewayID {
				candidates = append(candidates, g)
			}
		}
	} else {
		if e164, err = catalog.ParsePhone("phone", phone, chosen.Flag); err != nil {
			return nil, err
		}
		// Every gateway serving the operator; the routing engine orders
		// them (without it, the chosen one first, then the order they
		// were added).
		for _, g := range gateways {
			for _, r := range g.Routes {
				if g.ID == gatewayID && r.Code == code && r.Country == chosen.Flag {
					operator = r.Operator
					candidates = append([]*cauri.Gateway{g}, candidates...)
				}
			}
		}
		for _, g := range gateways {
			if g.ID == gatewayID || !g.Enabled || !g.Collect || !g.Live {
				continue
			}
			for _, r := range g.Routes {
				if r.Enabled && r.Country == chosen.Flag && r.Operator == operator {
					candidates = append(candidates, g)
				}
			}
		}
	}
	p.AuthCode = strings.TrimSpace(p.AuthCode)
	if len(p.AuthCode) > 32 {
		return nil, cauri.Errorf(cauri.EInvalid, "authCode is longer than 32 characters")
	}
	if help := PreauthHelp(chosen.Provider, code); help != nil && p.AuthCode == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "This operator asks for a payment code first: %s", help["en"])
	}
	avoid, err := s.failedProviders(ctx, sess, e164)
	if err != nil {
		return nil, err
	}
	candidates, reason := s.rank(candidates, routing.Context{Country: chosen.Flag, Operator: operator, Kind: routing.Collect,
		Amount: sess.Amount, Avoid: avoid})
	for i, g := range candidates {
		if i > 0 {
			reason = "failover: " + candidates[i-1].Provider + " could not start the payment; next in the ranking"
		}
		a, err := s.attempt(ctx, sess, g, chosen.Flag, operator, e164, p, reason, i == 0)
		if err == nil || !gateway.IsTransient(err) && cauri.ErrorCode(err) != cauri.EInternal {
			return a, err // started, refused by the aggregator, or refused here
		}
	}
	// Every gateway failed to start it; the causes are on the attempts.
	return nil, cauri.Errorf(cauri.EBadGateway, "The payment could not be started; please try again in a moment")
}

// failedProviders is the providers that failed this customer: the
// session's failed attempts, and those of the customer's phone number in
// the workspace's other sessions of the last hour (a payment link's next
// visit, a new checkout). The customer's next attempt goes to them last (a
// retry sent back to the provider that just failed the customer succeeds
// less often than one sent elsewhere; docs/routing.md).
func (s *Service) failedProviders(ctx context.Context, sess *cauri.Session, e164 string) ([]string, error) {
	if s.Route == nil {
		return nil, nil
	}
	attempts, err := s.Store.Attempts(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range attempts {
		if a.Status == cauri.AttemptFailed && !slices.Contains(out, a.Provider) {
			out = append(out, a.Provider)
		}
	}
	now := s.Now()
	byPhone, err := s.Store.FailedAttemptsForPhone(ctx, sess.WorkspaceID, sess.Livemode, e164, now.Add(-retryWindow), now)
	if err != nil {
		return nil, err
	}
	for _, a := range byPhone {
		if !slices.Contains(out, a.Provider) {
			out = append(out, a.Provider)
		}
	}
	return out, nil
}

// retryWindow is how long a provider that failed a customer's phone
// number is ranked last for that number's payments in other sessions.
const retryWindow = time.Hour

// isRetry reports whether a came after another attempt that failed the
// customer (one the customer saw: not a gateway that could not start it
// and was failed over): of its session, or of the customer's phone number
// in the workspace's other sessions within retryWindow before it, the
// attempts whose providers failedProviders ranks last. After means a
// started after the other failed (its updated_at), not after the other
// started: a payment begun while another session's attempt was still
// pending was no retry of it. The engine leaves a retry's success or
// decline out of the provider's rate (routing.Key.Retry).
func (s *Service) isRetry(ctx context.Context, sess *cauri.Session, a *cauri.PaymentAttempt) bool {
	attempts, err := s.Store.Attempts(ctx, a.SessionID)
	if err != nil {
		return false
	}
	if a.Phone != "" {
		byPhone, err := s.Store.FailedAttemptsForPhone(ctx, sess.WorkspaceID, sess.Livemode, a.Phone, a.CreatedAt.Add(-retryWindow), a.CreatedAt)
		if err != nil {
			return false
		}
		attempts = append(attempts, byPhone...)
	}
	for _, e := range attempts {
		if e.ID != a.ID && e.Status == cauri.AttemptFailed && e.UpdatedAt.Before(a.CreatedAt) && !strings.HasPrefix(e.Reason, gateway.NotStarted) {
			return true
		}
	}
	return false
}

// rank orders the gateways that can carry a payment by the routing
// engine's ranking of their providers (several gateways of one provider
// keep the order they came in), and returns the reason for the first.
func (s *Service) rank(gateways []*cauri.Gateway, c routing.Context) ([]*cauri.Gateway, string) {
	if s.Route == nil || len(gateways) == 0 {
		return gateways, ""
	}
	for _, g := range gateways {
		if !slices.Contains(c.Providers, g.Provider) {
			c.Providers = append(c.Providers, g.Provider)
		}
	}
	d := s.Route.Choose(c)
	order := append([]string{d.Provider}, d.Alternates...)
	out := slices.Clone(gateways)
	slices.SortStableFunc(out, func(a, b *cauri.Gateway) int {
		return slices.Index(order, a.Provider) - slices.Index(order, b.Provider)
	})
	return out, d.Reason
}

// attempt tries one gateway. It returns the attempt when it is pending, an
// EBadGateway error when the aggregator refused it, and a transient
// gateway error only when the aggregator surely started nothing, so that
// the next gateway may be tried:
//
//   - the request never left (no connection), or the aggregator refused the
//     credentials: nothing started;
//   - the aggregator answered a 5xx or an unreadable body: the initiation is
//     sent again with the same reference where that cannot pay twice
//     (pawaPay), then its status is read; only "not found" moves on;
//   - no answer came (a timeout): it may still be processed, so it stays
//     pending and the reconciler learns its outcome. Never a failover.
//
// first: the try's first gateway, held to the session's tries' limits
// (a failover goes on with the same try).
func (s *Service) attempt(ctx context.Context, sess *cauri.Session, g *cauri.Gateway, country, operator, phone string, p Payment, reason string, first bool) (*cauri.PaymentAttempt, error) {
	// A customer who leaves mid-call must not cut the initiation short: its
	// outcome and initiated_at must be recorded, or the payment could never
	// be checked. The aggregator calls have their own timeouts.
	ctx = context.WithoutCancel(ctx)
	code, card := cardCode(country, operator), country == ""
	for _, r := range g.Routes {
		if r.Country == country && r.Operator == operator {
			code = r.Code
		}
	}
	now := s.Now().UTC()
	a := &cauri.PaymentAttempt{
		ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: g.Provider, Reference: cauri.NewUUID(), Country: country,
		Operator: operator, OperatorCode: code, Phone: phone, Status: cauri.AttemptPending, CreatedAt: now, UpdatedAt: now,
		RouteReason: reason,
	}
	if err := s.Store.StartAttempt(ctx, a, admitAttempt(a, now, first), s.reopened); err != nil {
		return nil, err
	}
	conn, err := s.connector(ctx, g)
	if err != nil {
		s.fail(ctx, a.ID, gateway.NotStarted+err.Error())
		return nil, &gateway.Error{Transient: true, NotSent: true, Message: err.Error()}
	}
	name, email := sess.CustomerName, sess.CustomerEmail
	if p.Holder.Name != "" {
		name, email = p.Holder.Name, p.Holder.Email
	}
	col := gateway.Collection{Reference: a.Reference, Amount: sess.Amount, Currency: sess.Currency,
		Phone: phone, Operator: code, Description: sess.Description, Email: email, Name: name, Billing: p.Holder.Billing,
		Country: country, Card: card, Code: p.AuthCode, ReturnURL: s.PayURL + "/" + sess.ID, NotifyURL: s.CallbackURL + "/" + g.ID,
		Created: func(ref string) error { a.ProviderRef = ref; return s.Store.SetProviderRef(ctx, a.ID, ref) }}
	st, sent, err := movement.Send(func() (gateway.Status, error) { return conn.Collect(ctx, col) }, isIdempotent(conn))
	// From now on the attempt may be checked: the initiation call is over.
	next := nextAction(st)
	if merr := s.Store.MarkInitiated(ctx, a.ID, s.Now().UTC(), next); merr != nil {
		return nil, merr
	}
	a.RedirectURL, a.NeedsCode, a.Instructions = st.RedirectURL, next.Type == cauri.ActionEnterCode, next.Instructions
	switch sent {
	case movement.NotSent:
		s.fail(ctx, a.ID, gateway.NotStarted+err.Error())
		return nil, &gateway.Error{Transient: true, NotSent: true, Message: err.Error()}
	case movement.Unreadable:
		check, cerr := conn.CollectionStatus(ctx, gateway.Ref{Reference: a.Reference, ProviderRef: a.ProviderRef})
		if cerr == nil && check.Outcome == gateway.NotFound {
			s.fail(ctx, a.ID, gateway.NotStarted+err.Error())
			return nil, err
		}
		return a, nil
	case movement.NoAnswer:
		return a, nil // it stays pending until the aggregator tells
	}
	switch st.Outcome {
	case gateway.Failed:
		if _, err := s.finishAt(ctx, a.ID, st, true, true); err != nil {
			return nil, err
		}
		return nil, cauri.Errorf(cauri.EBadGateway, "%s refused the payment: %s", g.Name, st.Reason)
	case gateway.Succeeded:
		if _, err := s.finish(ctx, a.ID, st, true); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// fail ends an attempt that never started (the customer never saw it; the
// next gateway may be tried), logging what stops it from being recorded.
func (s *Service) fail(ctx context.Context, attemptID, reason string) {
	_, err := s.finish(ctx, attemptID, gateway.Status{Outcome: gateway.Failed, Reason: reason}, false)
	s.Failures.Record(ctx, movement.Payment, "finish", attemptID, err)
}

// nextAction is the customer step an aggregator's answer about a pending
// payment asks for.
func nextAction(st gateway.Status) cauri.NextAction {
	switch {
	case st.RedirectURL != "":
		return cauri.NextAction{Type: cauri.ActionRedirect, URL: st.RedirectURL, Instructions: st.Instructions}
	case st.NeedsCode:
		return cauri.NextAction{Type: cauri.ActionEnterCode, Instructions: st.Instructions}
	}
	return cauri.NextAction{Type: cauri.ActionApprove, Instructions: st.Instructions}
}

// pending records what a pending attempt now waits for, when a status read
// or a submitted code changed it (pawaPay gives Wave's page with a status
// read; a code accepted leaves an approval).
func (s *Service) pending(ctx context.Context, a *cauri.PaymentAttempt, st gateway.Status) error {
	next := nextAction(st)
	if next.Type == cauri.ActionApprove && next.Instructions == "" && a.RedirectURL != "" {
		return nil // a status read that says nothing of the page keeps it
	}
	if next == a.NextAction() {
		return nil
	}
	return s.Store.SetNextAction(ctx, a.ID, next)
}

// PreauthHelp is how the customer gets the code that provider's operator
// code asks for before paying ("en" and "fr"), or nil when it asks none.
func PreauthHelp(provider, code string) map[string]string {
	if p, ok := gateway.Lookup(provider); ok {
		return p.Preauth[code]
	}
	return nil
}

// cardCode is the code of a card method (a card attempt has no country):
// its operator key in capitals, as the methods route lists it.
func cardCode(country, operator string) string {
	if country != "" {
		return ""
	}
	return strings.ToUpper(operator)
}

func isIdempotent(c gateway.Connector) bool {
	ic, ok := c.(gateway.IdempotentCollector)
	return ok && ic.IdempotentCollect()
}

// payOnce admits, at now, a new attempt of a session that can still be
// paid, has not expired and has no other attempt pending: both could
// succeed, and the customer would pay twice.
func payOnce(sess *cauri.Session, waiting bool, now time.Time) error {
	switch {
	case !sess.Status.Payable():
		return cauri.Errorf(cauri.EConflict, "Session is %s and can no longer be paid", sess.Status)
	case sess.Expired(now):
		return expired(sess)
	case waiting:
		return cauri.Errorf(cauri.EConflict, "A payment is already waiting for the customer's confirmation; confirm it on the phone or wait for it to end")
	}
	return nil
}

// expired is the refusal of a payment of a session past its expiry.
func expired(sess *cauri.Session) error {
	return cauri.Reasonf(cauri.EConflict, "session_expired", "This payment expired at %s and can no longer be paid; ask the merchant for a new one",
		sess.ExpiresAt.UTC().Format(time.RFC3339))
}

// reopened is the event of a failed session made pending again by a new try.
func (s *Service) reopened(sess *cauri.Session) *cauri.Event {
	data, _ := json.Marshal(sess.Object(s.PayURL))
	return cauri.SessionEvent(sess, data, sess.UpdatedAt)
}

func (s *Service) connector(ctx context.Context, g *cauri.Gateway) (gateway.Connector, error) {
	return s.Connectors.For(ctx, movement.Payment, g)
}

// finish settles an attempt and its session. A failure of an attempt the
// customer never saw (notify false: the gateway was down, another is tried)
// changes the attempt only.
func (s *Service) finish(ctx context.Context, attemptID string, st gateway.Status, notify bool) (*cauri.Session, error) {
	return s.finishAt(ctx, attemptID, st, notify, false)
}

// finishAt is finish; instant: the aggregator refused the payment in its
// answer to the initiation (a refusal for the amount then teaches the
// provider's ceiling).
func (s *Service) finishAt(ctx context.Context, attemptID string, st gateway.Status, notify, instant bool) (*cauri.Session, error) {
	var ended *cauri.PaymentAttempt // the attempt, when this call ended it
	sess, err := s.Store.UpdateAttempt(ctx, attemptID, func(sess *cauri.Session, a *cauri.PaymentAttempt) (*cauri.Event, error) {
		now := s.Now().UTC()
		defer func() {
			if a.Status != cauri.AttemptPending {
				ended = a
			}
		}()
		a.UpdatedAt, a.Reason = now, st.Reason
		if st.ProviderRef != "" {
			a.ProviderRef = st.ProviderRef
		}
		switch st.Outcome {
		case gateway.Succeeded:
			a.Status = cauri.AttemptSucceeded
			if a.FinalRef != "" {
				a.ProviderRef = a.FinalRef // a callback proved it before (final)
			}
			if sess.Status == cauri.SessionSuccess || sess.Status == cauri.SessionRefunded {
				a.Reason = "collected after the session was " + string(sess.Status) + ": to refund"
				return nil, nil
			}
			// The money moved: that wins over FAILED and CANCELLED.
			sess.Status, sess.Provider = cauri.SessionSuccess, a.Provider
		case gateway.NotFound:
			if a.InitiatedAt == nil || now.Sub(*a.InitiatedAt) < movement.NotFoundIsFinal {
				a.Reason = "" // too early to conclude: it may still arrive
				return nil, nil
			}
			fallthrough
		case gateway.Failed:
			a.Status = cauri.AttemptFailed
			if !notify || sess.Status != cauri.SessionPending && sess.Status != cauri.SessionFailed {
				return nil, nil
			}
			sess.Status = cauri.SessionFailed
		default:
			return nil, nil
		}
		sess.UpdatedAt, sess.CompletedAt = now, &now
		data, err := json.Marshal(sess.Object(s.PayURL))
		if err != nil {
			return nil, err
		}
		return cauri.SessionEvent(sess, data, now), nil
	})
	if err == nil && notify && s.Committed != nil {
		s.Committed()
	}
	if err == nil && ended != nil && ended.Status != cauri.AttemptSucceeded && ended.FinalRef != "" {
		// The aggregator's own callback said it was paid (final): the
		// customer may have been charged.
		s.Failures.Record(ctx, movement.Payment, "final_reference", attemptID, fmt.Errorf(
			"payment %s ended %s although the aggregator's callback said it was paid (%s): to check by hand", attemptID, ended.Status, ended.FinalRef))
	}
	if err == nil && ended != nil && s.Route != nil {
		// What the routing engine learns: a collected payment, a payment the
		// customer's side refused, one the aggregator could not start, or
		// one it refused at once for its amount (its ceiling).
		o := routing.Declined
		switch {
		case ended.Status == cauri.AttemptSucceeded:
			o = routing.Success
		case !notify || st.Outcome == gateway.NotFound:
			o = routing.Technical
		case instant && connectors.Refusal(ended.Provider, st.Reason) == gateway.RefusalLimit:
			o = routing.OverLimit
		}
		s.Route.Record(ctx, routing.Key{Provider: ended.Provider, Country: ended.Country, Operator: ended.Operator, Kind: routing.Collect,
			Amount: sess.Amount, Retry: s.isRetry(ctx, sess, ended)}, o, 0)
	}
	return sess, err
}

// Refresh is asked by the hosted page while the customer confirms: it
// checks the session's pending attempt with its aggregator, at most once
// every movement.StatusCheck across all nodes, and returns the session.
func (s *Service) Refresh(ctx context.Context, sessionID string) (*cauri.Session, error) {
	sess, err := s.Store.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !sess.Livemode {
		return sess, nil
	}
	attempts, err := s.Store.Attempts(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		if a.Status != cauri.AttemptPending {
			continue
		}
		if turn, err := s.Store.ClaimAttemptCheck(ctx, a.ID, s.Now(), movement.StatusCheck); err != nil || !turn {
			return sess, err
		}
		if updated, err := s.check(ctx, a); err != nil {
			// The page shows what is known; the next check will tell.
			s.Failures.Record(ctx, movement.Payment, "check", a.ID, err)
		} else if updated != nil {
			return updated, nil
		}
	}
	return s.Store.Session(ctx, sessionID)
}

// check asks the aggregator about a pending attempt and records its
// answer: the step it waits for, or its end (then the session is returned).
func (s *Service) check(ctx context.Context, a *cauri.PaymentAttempt) (*cauri.Session, error) {
	g, err := s.Store.GatewayByID(ctx, a.GatewayID) // its own, or the platform's for a Connect workspace
	if err != nil {
		return nil, err
	}
	conn, err := s.connector(ctx, g)
	if err != nil {
		return nil, err
	}
	st, err := conn.CollectionStatus(ctx, gateway.Ref{Reference: a.Reference, ProviderRef: a.ProviderRef})
	if err != nil {
		return nil, err
	}
	if st.Outcome == gateway.Pending {
		return nil, s.pending(ctx, a, st)
	}
	return s.finish(ctx, a.ID, st, true)
}

// ErrUnknownGateway is a callback to the address of no gateway: the only
// callback refused (404); any other gets its 200 so that the aggregator
// stops retrying.
var ErrUnknownGateway = errors.New("checkout: no such gateway")

// Signal is what an aggregator's callback says, once its own scheme has
// verified it: which payment (or transfer, or refund: they share the
// address) it names, by our reference or the aggregator's id; and, when
// the callback proves a payment (gateway.PaidReference: M-Pesa's, to the
// address with the push's token), the payment's final id (Final) and the
// provisional one it replaces (Provisional).
type Signal struct {
	Ref                string
	Provisional, Final string
}

// CallbackReference reads what an aggregator's callback to gateway
// gatewayID says (EInvalid when the aggregator's scheme refuses it).
func (s *Service) CallbackReference(ctx context.Context, gatewayID string, h http.Header, body []byte) (Signal, error) {
	g, err := s.Store.GatewayByID(ctx, gatewayID)
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return Signal{}, &cauri.Error{Code: cauri.ENotFound, Message: cauri.ErrorMessage(err), Cause: ErrUnknownGateway}
	}
	if err != nil {
		return Signal{}, err
	}
	conn, err := s.connector(ctx, g)
	if err != nil {
		return Signal{}, err
	}
	ref, err := conn.CallbackReference(h, body)
	if err != nil {
		return Signal{}, cauri.Errorf(cauri.EInvalid, "%s", err.Error())
	}
	sig := Signal{Ref: ref}
	sig.Provisional, sig.Final = gateway.PaidReference(conn, h, body)
	return sig, nil
}

// Callback handles an aggregator's callback about the payment with our
// reference (or the aggregator's own id) at gateway gatewayID: it checks
// the attempt with the aggregator at once (a callback is a signal, never
// believed as such), and keeps the final id a callback proves (final).
// A callback about an attempt already settled changes nothing else;
// ENotFound when no attempt has this reference.
func (s *Service) Callback(ctx context.Context, gatewayID string, sig Signal) error {
	g, err := s.Store.GatewayByID(ctx, gatewayID)
	if err != nil {
		return err
	}
	a, err := s.Store.AttemptByReference(ctx, g.ID, sig.Ref)
	if cauri.ErrorCode(err) == cauri.ENotFound { // a callback naming the aggregator's id only (M-Pesa)
		a, err = s.Store.AttemptByProviderRef(ctx, g.ID, sig.Ref)
	}
	if err != nil {
		return err
	}
	if a.Status != cauri.AttemptPending && sig.Final == "" {
		return nil
	}
	var checked error
	if a.Status == cauri.AttemptPending {
		// A callback asks the aggregator at once, even right after a status
		// read did, but at most every 2 seconds per payment, however many
		// callbacks arrive; one that proves its payment (only the
		// aggregator can send it) always.
		if sig.Final == "" {
			if turn, err := s.Store.ClaimCallbackCheck(ctx, a.ID, s.Now(), movement.CallbackCheck); err != nil || !turn {
				return err
			}
		}
		_, checked = s.check(ctx, a)
	}
	return errors.Join(checked, s.final(ctx, a, sig))
}

// final gives the attempt the final id a callback proved (sig.Final,
// gateway.PaidReference) in place of the provisional one (sig.Provisional,
// M-Pesa's CheckoutRequestID), once: at once when it has succeeded, else
// kept with it until it succeeds (finishAt), so that a status read that
// had not yet confirmed the payment loses nothing. Only while its provider
// ref is still sig.Provisional, so a second callback, or one about another
// push, changes nothing. Written to the store, so any node refunds the
// payment by it. A payment Cauri ended otherwise keeps nothing, and is
// logged and counted with the attempt's id.
func (s *Service) final(ctx context.Context, a *cauri.PaymentAttempt, sig Signal) error {
	if sig.Final == "" {
		return nil
	}
	replace := func() (bool, error) { return s.Store.ReplaceProviderRef(ctx, a.ID, sig.Provisional, sig.Final) }
	if done, err := replace(); err != nil || done {
		return err
	}
	if kept, err := s.Store.KeepFinalRef(ctx, a.ID, sig.Provisional, sig.Final); err != nil || kept {
		return err
	}
	if done, err := replace(); err != nil || done { // it succeeded in between
		return err
	}
	now, err := s.Store.AttemptByReference(ctx, a.GatewayID, a.Reference)
	if err != nil || now.ProviderRef == sig.Final || now.FinalRef == sig.Final {
		return err // the same callback again
	}
	why := "Cauri ended it " + string(now.Status) + " before: collected after it gave up, to check by hand"
	switch {
	case now.Status == cauri.AttemptPending && now.FinalRef != "":
		why = "it keeps another one (" + now.FinalRef + ") from an earlier callback: to check by hand"
	case now.Status == cauri.AttemptPending || now.Status == cauri.AttemptSucceeded:
		why = "it is known by another id (" + now.ProviderRef + ", not " + sig.Provisional + "): not kept"
	}
	s.Failures.Record(ctx, movement.Payment, "final_reference", a.ID, fmt.Errorf(
		"the aggregator's callback says payment %s was paid (%s), but %s", a.ID, sig.Final, why))
	return nil
}

// Waiting is the payment of a live session that waits for the customer (a
// session has at most one), or nil.
func (s *Service) Waiting(ctx context.Context, sess *cauri.Session) (*cauri.PaymentAttempt, error) {
	if !sess.Livemode || !sess.Status.Payable() {
		return nil, nil
	}
	attempts, err := s.Store.Attempts(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		if a.Status == cauri.AttemptPending {
			return a, nil
		}
	}
	return nil, nil
}

// Attempts are a live session's payment attempts, newest first (none for
// a test session): the page shows the receipt of the one that succeeded,
// or starts another try from the last.
func (s *Service) Attempts(ctx context.Context, sess *cauri.Session) ([]*cauri.PaymentAttempt, error) {
	if !sess.Livemode {
		return nil, nil
	}
	return s.Store.Attempts(ctx, sess.ID)
}

// SubmitCode gives the aggregator the code the customer entered on the
// hosted page for the session's pending payment, when that payment waits
// for one (cauri.ActionEnterCode), and returns the session and the payment.
// A code the aggregator refuses leaves the payment waiting for a code or
// fails it, as the aggregator says.
func (s *Service) SubmitCode(ctx context.Context, sessionID, code string) (*cauri.Session, *cauri.PaymentAttempt, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return nil, nil, cauri.Errorf(cauri.EInvalid, "code is required: enter the code you received")
	}
	if len(code) > 32 {
		return nil, nil, cauri.Errorf(cauri.EInvalid, "code is longer than 32 characters")
	}
	sess, err := s.Store.Session(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.Waiting(ctx, sess)
	if err != nil {
		return nil, nil, err
	}
	if a == nil || !a.NeedsCode {
		return nil, nil, cauri.Errorf(cauri.EConflict, "No payment of this session is waiting for a code")
	}
	g, err := s.Store.GatewayByID(ctx, a.GatewayID)
	if err != nil {
		return nil, nil, err
	}
	conn, err := s.connector(ctx, g)
	if err != nil {
		return nil, nil, err
	}
	submitter, ok := conn.(gateway.CodeSubmitter)
	if !ok {
		return nil, nil, cauri.Errorf(cauri.EConflict, "%s takes no code for this payment", g.Name)
	}
	ctx = context.WithoutCancel(ctx) // the aggregator's answer must be recorded
	st, err := submitter.SubmitCode(ctx, gateway.Ref{Reference: a.Reference, ProviderRef: a.ProviderRef}, code)
	if errors.Is(err, gateway.ErrNoCode) {
		return nil, nil, cauri.Errorf(cauri.EConflict, "%s takes no code for this payment", g.Name)
	}
	if err != nil {
		return nil, nil, cauri.Errorf(cauri.EBadGateway, "%s did not answer; please try again in a moment", g.Name)
	}
	if st.Outcome == gateway.Pending {
		if err := s.pending(ctx, a, st); err != nil {
			return nil, nil, err
		}
	} else if _, err := s.finish(ctx, a.ID, st, true); err != nil {
		return nil, nil, err
	}
	if sess, err = s.Store.Session(ctx, sessionID); err != nil {
		return nil, nil, err
	}
	if a, err = s.Waiting(ctx, sess); err != nil {
		return nil, nil, err
	}
	return sess, a, nil
}

// Probe checks whether a provider's API answers, through one of its live
// gateways: a status read of a payment that does not exist moves no money.
// The observed connector records the answer for the routing engine.
func (s *Service) Probe(ctx context.Context, provider string) error {
	g, err := s.Store.ProbeGateway(ctx, provider)
	if err != nil {
		return err
	}
	conn, err := s.connector(ctx, g)
	if err != nil {
		return err
	}
	// An aggregator's own id that none gives (0), for the connectors that
	// read by it (FedaPay): every connector makes a real call.
	_, err = conn.CollectionStatus(ctx, gateway.Ref{Reference: cauri.NewUUID(), ProviderRef: "0"})
	return err
}

// Reconcile is the background pass that no lost callback escapes: it asks
// the aggregators about pending attempts (with backoff), and cancels the
// PENDING sessions whose expiry has passed with no payment waiting
// (payment.cancelled). It returns how many attempts it checked.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	now := s.Now().UTC()
	if _, err := s.Store.AdoptOrphanAttempts(ctx, now.Add(-movement.InitiationDeadline), now); err != nil {
		return 0, err
	}
	attempts, err := s.Store.DueAttempts(ctx, now, movement.StatusCheck, movement.CheckBackoffMax, movement.ReconcileBatch)
	if err != nil {
		return 0, err
	}
	checked := 0
	for _, a := range attempts {
		if turn, err := s.Store.ClaimAttemptCheck(ctx, a.ID, now, time.Second); err != nil || !turn {
			continue // another node has it
		}
		checked++
		_, err := s.check(ctx, a)
		s.Failures.Record(ctx, movement.Payment, "check", a.ID, err)
	}
	ended, err := s.Store.ExpiredSessions(ctx, now, movement.ReconcileBatch)
	if err != nil {
		return checked, err
	}
	for _, id := range ended {
		_, err := s.cancel(ctx, id, true, now)
		s.Failures.Record(ctx, movement.Payment, "cancel", id, err)
	}
	return checked, nil
}

// Cancel is the customer giving up on the hosted page: a PENDING session
// with no payment waiting on the phone becomes CANCELLED (payment.cancelled).
// A payment already started cannot be cancelled here: the customer may be
// confirming it, and the aggregator's answer decides.
func (s *Service) Cancel(ctx context.Context, sessionID string) (*cauri.Session, error) {
	now := s.Now().UTC()
	done, err := s.cancel(ctx, sessionID, false, now)
	if err != nil {
		return nil, err
	}
	sess, err := s.Store.Session(ctx, sessionID)
	if err != nil || done {
		return sess, err
	}
	if sess.Status != cauri.SessionPending {
		return nil, cauri.Errorf(cauri.EConflict, "Session is %s: it can no longer be cancelled", sess.Status)
	}
	return nil, cauri.Errorf(cauri.EConflict, "A payment is waiting for confirmation on the phone: it cannot be cancelled now")
}

// cancel cancels a session (when onExpiry, only one whose expiry has
// passed at now) if it is PENDING with nothing waiting, with its
// payment.cancelled event. As Stripe expires a session only when no
// payment is in progress, a payment waiting at the expiry keeps it: its
// outcome settles it, and it takes no new payment.
func (s *Service) cancel(ctx context.Context, id string, onExpiry bool, now time.Time) (bool, error) {
	done, err := s.Store.CancelSession(ctx, id, func(sess *cauri.Session, waiting bool) *cauri.Event {
		if sess.Status != cauri.SessionPending || onExpiry && !sess.Expired(now) || waiting {
			return nil
		}
		sess.Status, sess.UpdatedAt = cauri.SessionCancelled, now
		data, _ := json.Marshal(sess.Object(s.PayURL))
		return cauri.SessionEvent(sess, data, now)
	})
	if err == nil && done && s.Committed != nil {
		s.Committed()
	}
	return done, err
}
