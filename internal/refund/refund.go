// Package refund gives back all or part of a successful payment (issue 19,
// docs/refunds.md). A refund goes through the movement lifecycle as a
// transfer does: it is committed, pending, under its session's lock (so
// concurrent refunds never give back more than was paid), before its
// aggregator is called with our reference as the aggregator's idempotency
// id; the answer is classified with movement.Send; its outcome comes from
// the aggregator's callback (a signal, confirmed by a status read) or the
// reconciler, and ends it, with its session's REFUNDED status when it is
// the last part and its payment.updated event, in one transaction.
//
// Where the aggregator that collected cannot refund, the merchant may ask
// for a payout: the money goes back as a transfer to the payer's wallet,
// through the transfer service and its rules, and the refund ends with the
// transfer. A test session's refund succeeds at once, through the sandbox.
//
// It imports the domain, the store, the gateway package, the movement
// lifecycle and the transfer service.
package refund

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/transfer"
)

// Sandbox is the provider of test sessions' refunds, as of their payments.
const Sandbox = "sandbox"

// Service creates and follows refunds.
type Service struct {
	Store Store
	// Transfers makes the transfers of refunds by payout.
	Transfers Transfers
	Now       func() time.Time // injected clock
	// Connectors builds gateways' connectors.
	Connectors *movement.Connectors
	// Failures logs and counts what goes wrong where no request waits.
	Failures *movement.Failures
	// PayURL is the hosted pages' base: a session's url in the events.
	PayURL string
	// CallbackURL is the base of the aggregators' callback addresses.
	CallbackURL string
	// Committed, when set, is called after a change that emitted an event
	// is committed: the webhook worker sends its delivery at once.
	Committed func()
}

// Transfers is the part of the transfer service a refund by payout uses.
type Transfers interface {
	Validate(ctx context.Context, ws *cauri.Workspace, p transfer.Params) (*cauri.Transfer, error)
	Create(ctx context.Context, ws *cauri.Workspace, tr *cauri.Transfer, key string) (*cauri.Transfer, bool, error)
	Get(ctx context.Context, workspaceID, id string) (*cauri.Transfer, error)
	ReplayRequest(ctx context.Context, ws *cauri.Workspace, key string, p transfer.Params) (*cauri.Transfer, error)
}

var _ Transfers = (*transfer.Service)(nil)

// Params is a refund request as the merchant sent it. Amount is the JSON
// number's text ("" for the whole rest), so that no float holds money.
type Params struct {
	TransactionID string
	Amount        string
	Method        string
	Reason        string
}

func invalid(reason, format string, args ...any) error {
	return cauri.Reasonf(cauri.EInvalid, reason, format, args...)
}

// request is a refund request checked on its face, with its session.
type request struct {
	sess   *cauri.Session
	amount int64 // 0: the rest
	method cauri.RefundMethod
	reason string
}

// fingerprint identifies a request by its normalised fields, so that a
// replay with the same amount written otherwise is the same request.
func (q *request) fingerprint() string {
	b, _ := json.Marshal([]any{q.sess.ID, q.amount, q.method, q.reason})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// parse checks a request in the documented order: the transaction (the
// caller's own, of the key's mode: 404 otherwise), the amount, the
// method, the reason.
func (s *Service) parse(ctx context.Context, ws *cauri.Workspace, keyLive bool, p Params) (*request, error) {
	id := strings.TrimSpace(p.TransactionID)
	if id == "" {
		return nil, invalid("invalid_body", "transaction_id is required: the id of the SUCCESS session to refund")
	}
	sess, err := s.Store.Session(ctx, id)
	if err == nil && (sess.WorkspaceID != ws.ID || sess.Livemode != ws.Livemode(keyLive)) {
		err = store.ErrNotFound // another's, or the other mode's: it does not exist for this key
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || cauri.ErrorCode(err) == cauri.ENotFound {
			return nil, cauri.NotFound("transaction", id)
		}
		return nil, err
	}
	q := &request{sess: sess, method: cauri.RefundByAggregator}
	if a := strings.TrimSpace(p.Amount); a != "" {
		if q.amount, err = cauri.ParseAmount("amount", a, sess.Currency); err != nil {
			return nil, invalid("invalid_amount", "%s", cauri.ErrorMessage(err))
		}
	}
	switch m := cauri.RefundMethod(p.Method); m {
	case "":
	case cauri.RefundByAggregator, cauri.RefundByPayout:
		q.method = m
	default:
		return nil, invalid("invalid_body", "method must be aggregator or payout")
	}
	if q.reason, err = cauri.CleanText("reason", p.Reason, cauri.MaxRefundReason); err != nil {
		return nil, invalid("invalid_body", "%s", cauri.ErrorMessage(err))
	}
	return q, nil
}

// Create makes a refund of one of the workspace's SUCCESS sessions, of the
// key's mode. It returns the refund and whether it is a replay of an
// earlier request with the same Idempotency-Key (answered whatever
// changed since: the session is REFUNDED once the refund succeeded).
//
// The first check that fails answers: the transaction (404
// transaction_not_found), the fields (invalid_amount, invalid_body), a
// replay, the session's state (not_refundable), the way back
// (refunds_unsupported for an aggregator that cannot refund, or not this
// payment, or that refunds only a whole payment and is asked a part; the transfers' checks
// and codes for a payout), then, under the session's lock, what is left to
// refund (refund_exceeds_payment; refunds_unsupported for the rest of a
// payment partly refunded through an aggregator that refunds only a whole
// one). Nothing is written before the last.
func (s *Service) Create(ctx context.Context, ws *cauri.Workspace, keyLive bool, p Params, key string) (*cauri.Refund, bool, error) {
	q, err := s.parse(ctx, ws, keyLive, p)
	if err != nil {
		return nil, false, err
	}
	var idem *store.Idempotency
	if key != "" {
		if err := cauri.CheckIdempotencyKey(key); err != nil {
			return nil, false, invalid("invalid_body", "%s", cauri.ErrorMessage(err))
		}
		idem = &store.Idempotency{Key: key, Fingerprint: q.fingerprint()}
		prev, err := s.Store.RefundByIdempotencyKey(ctx, ws.ID, q.sess.Livemode, idem, s.Now())
		if errors.Is(err, store.ErrIdempotencyMismatch) {
			return nil, false, cauri.KeyReused(key, "refund")
		}
		if err != nil || prev != nil {
			return prev, prev != nil, err
		}
	}
	if q.sess.Status != cauri.SessionSuccess {
		return nil, false, cauri.AdmitRefund(&cauri.Refund{}, q.sess, nil) // not_refundable, worded by the domain
	}
	if ws.Connect {
		return nil, false, cauri.Reasonf(cauri.EForbidden, "connect_non_disponible",
			"Refunds of a Connect workspace's payments are not available yet")
	}
	now := s.Now().UTC()
	r := &cauri.Refund{ID: cauri.NewID("re_"), WorkspaceID: ws.ID, Livemode: q.sess.Livemode, SessionID: q.sess.ID,
		Amount: q.amount, Currency: q.sess.Currency, Status: cauri.RefundPending, Method: q.method, Reason: q.reason,
		Reference: cauri.NewUUID(), Provider: Sandbox, CreatedAt: now, UpdatedAt: now}
	if !q.sess.Livemode {
		return s.commit(ctx, r, idem, func(ctx context.Context, r *cauri.Refund) (*cauri.Refund, error) {
			return s.finish(ctx, r.ID, cauri.RefundSucceeded, "", "", "")
		})
	}
	a, err := s.collected(ctx, q.sess)
	if err != nil {
		return nil, false, err
	}
	r.AttemptID, r.GatewayID, r.Provider = a.ID, a.GatewayID, a.Provider
	if q.method == cauri.RefundByPayout {
		if err := transfer.Allowed(ws, keyLive, true); err != nil {
			return nil, false, err
		}
		// The transfer's checks (country, operator, phone, gateway) before
		// anything is written; its amount is the refund's, known once
		// admitted.
		tr, err := s.Transfers.Validate(ctx, ws, payoutParams(q.sess, a, q.sess.Amount))
		if err != nil {
			return nil, false, err
		}
		r.GatewayID, r.Provider = tr.GatewayID, tr.Provider
		return s.commit(ctx, r, idem, func(ctx context.Context, r *cauri.Refund) (*cauri.Refund, error) {
			return s.payout(ctx, ws, r, a)
		})
	}
	refunder, name, err := s.refunder(ctx, r.GatewayID)
	if err != nil {
		return nil, false, err
	}
	if why := gateway.CollectionUnrefundable(refunder, gateway.Ref{Reference: a.Reference, ProviderRef: a.ProviderRef}); why != "" {
		return nil, false, invalid("refunds_unsupported", "%s cannot refund transaction %s through its API: %s", name, q.sess.ID, strings.TrimSuffix(why, "."))
	}
	admit := cauri.AdmitRefund
	if gateway.WholeRefundsOnly(refunder) {
		if q.amount != 0 && q.amount < q.sess.Amount {
			return nil, false, wholeOnlyRefused(name, q.sess, false)
		}
		admit = wholeOnly(name)
	}
	return s.commitWith(ctx, r, idem, admit, func(ctx context.Context, r *cauri.Refund) (*cauri.Refund, error) {
		return s.send(ctx, r, a, refunder)
	})
}

// wholeOnly admits a refund through an aggregator that refunds only a
// whole payment (gateway.WholeRefundsOnly: Wave): under the session's
// lock, as cauri.AdmitRefund does, and only of the payment's whole amount,
// nothing of it refunded or being refunded (its refund would give back
// the whole payment, more than is left).
func wholeOnly(name string) func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error {
	return func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error {
		if err := cauri.AdmitRefund(r, sess, refunds); err != nil {
			return err
		}
		if r.Amount != sess.Amount {
			return wholeOnlyRefused(name, sess, true)
		}
		return nil
	}
}

// wholeOnlyRefused is the answer to a refund of part of a payment through
// an aggregator that refunds only a whole one: the payout way.
func wholeOnlyRefused(name string, sess *cauri.Session, partlyRefunded bool) error {
	why := ""
	if partlyRefunded {
		why = fmt.Sprintf(" (part of transaction %s is refunded or being refunded already)", sess.ID)
	}
	return invalid("refunds_unsupported", "%s refunds only the whole payment%s; ask for \"method\": \"payout\" to send part of it back", name, why)
}

// commit stores r, pending, if the domain admits it under its session's
// lock, then runs send (which the client leaving does not stop: its
// outcome must be recorded).
func (s *Service) commit(ctx context.Context, r *cauri.Refund, idem *store.Idempotency, send func(context.Context, *cauri.Refund) (*cauri.Refund, error)) (*cauri.Refund, bool, error) {
	return s.commitWith(ctx, r, idem, cauri.AdmitRefund, send)
}

// commitWith is commit with admit deciding under the session's lock.
func (s *Service) commitWith(ctx context.Context, r *cauri.Refund, idem *store.Idempotency,
	admit func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error,
	send func(context.Context, *cauri.Refund) (*cauri.Refund, error)) (*cauri.Refund, bool, error) {
	prev, err := s.Store.CreateRefund(ctx, r, idem, admit)
	if errors.Is(err, store.ErrIdempotencyMismatch) {
		return nil, false, cauri.KeyReused(idem.Key, "refund")
	}
	if err != nil {
		return nil, false, err
	}
	if prev != "" {
		existing, err := s.Store.Refund(ctx, r.WorkspaceID, prev)
		return existing, true, err
	}
	done, err := send(context.WithoutCancel(ctx), r)
	return done, false, err
}

// collected is the attempt that collected a live session: its succeeded
// attempt (the first, should an aggregator have collected twice).
func (s *Service) collected(ctx context.Context, sess *cauri.Session) (*cauri.PaymentAttempt, error) {
	attempts, err := s.Store.Attempts(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	var found *cauri.PaymentAttempt
	for _, a := range attempts { // newest first
		if a.Status == cauri.AttemptSucceeded {
			found = a
		}
	}
	if found == nil {
		return nil, invalid("not_refundable", "Transaction %s was not collected through one of the workspace's gateways: it cannot be refunded here", sess.ID)
	}
	return found, nil
}

// refunder builds the gateway's connector, whose aggregator must refund
// (400 refunds_unsupported otherwise), and answers the gateway's name.
func (s *Service) refunder(ctx context.Context, gatewayID string) (gateway.Refunder, string, error) {
	g, err := s.Store.GatewayByID(ctx, gatewayID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", invalid("refunds_unsupported",
			"The gateway that collected this payment (%s) was removed from the workspace: nothing can be refunded through it any more. Ask for \"method\": \"payout\" to send the money back to the payer's wallet as a transfer",
			gatewayID)
	}
	if err != nil {
		return nil, "", err
	}
	c, err := s.Connectors.For(ctx, movement.Refund, g)
	if err != nil {
		return nil, "", err
	}
	r, ok := gateway.Refunds(c)
	if !ok {
		return nil, "", invalid("refunds_unsupported",
			"%s cannot refund through its API (or Cauri does not use it yet): ask for \"method\": \"payout\" to send the money back to the payer's wallet as a transfer, or refund from %s's dashboard",
			g.Name, g.Name)
	}
	if why := gateway.RefundsUnavailable(r); why != "" {
		return nil, "", invalid("refunds_unsupported", "%s cannot refund with its credentials: %s. Add them to the gateway, or ask for \"method\": \"payout\"",
			g.Name, strings.TrimSuffix(why, "."))
	}
	return r, g.Name, nil
}

// send calls the aggregator with the refund and records its answer: a
// refusal ends it failed (rejected); a request that surely never reached
// the aggregator ends it failed (not_sent: nothing was refunded, a new
// refund may be asked); no answer or an unreadable one leaves it pending,
// for the status to decide.
func (s *Service) send(ctx context.Context, r *cauri.Refund, a *cauri.PaymentAttempt, refunder gateway.Refunder) (*cauri.Refund, error) {
	st, sent, err := movement.Send(func() (gateway.Status, error) {
		return refunder.Refund(ctx, gateway.Refund{Reference: r.Reference, Collection: gateway.Ref{Reference: a.Reference, ProviderRef: a.ProviderRef},
			Amount: r.Amount, Currency: r.Currency, Operator: a.OperatorCode, Reason: r.Reason, NotifyURL: s.CallbackURL + "/" + r.GatewayID})
	}, refunder.IdempotentRefund())
	if sent == movement.NotSent {
		return s.finish(ctx, r.ID, cauri.RefundFailed, "not_sent", "The refund could not be sent to "+r.Provider+": "+messageOf(err), "")
	}
	if merr := s.markInitiated(ctx, r.ID, st.ProviderRef, ""); merr != nil {
		// Sent, and its end not recorded. The aggregator's id must not be
		// lost (Paystack and Flutterwave can only be asked about a refund
		// by it): an answer that ends the refund still ends it, with the
		// id; otherwise the reconciler adopts it, and the log keeps the id
		// for a person to find it.
		s.Failures.Record(ctx, movement.Refund, "mark_initiated", r.ID,
			fmt.Errorf("%w (the aggregator's id of this refund: %q)", merr, st.ProviderRef))
		if err == nil && st.Outcome != gateway.Pending && st.Outcome != gateway.NotFound {
			return s.record(ctx, r, st)
		}
		return r, nil
	}
	if err != nil {
		s.Failures.Record(ctx, movement.Refund, "send", r.ID, err)
		return s.get(ctx, r.WorkspaceID, r.ID) // it may have arrived: the status decides, later
	}
	return s.record(ctx, r, st)
}

// markInitiated records that a refund's call returned, with the
// aggregator's id or the transfer's, trying the store three times: what
// it records is what later checks ask the aggregator with.
func (s *Service) markInitiated(ctx context.Context, id, providerRef, transferID string) (err error) {
	for i, wait := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 0} {
		if err = s.Store.MarkRefundInitiated(ctx, id, s.Now().UTC(), providerRef, transferID); err == nil || i == 2 {
			break
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
	return err
}

// messageOf is a connector's error in words: never a secret (connectors
// word their errors for the merchant).
func messageOf(err error) string {
	if e := gateway.ErrorOf(err); e != nil {
		return e.Message
	}
	return "the connector refused to send it"
}

// record ends a refund as the aggregator's status says: a final one ends
// it; a pending one changes nothing; "not found" ends it failed
// (not_received) only NotFoundIsFinal after its call returned.
func (s *Service) record(ctx context.Context, r *cauri.Refund, st gateway.Status) (*cauri.Refund, error) {
	switch st.Outcome {
	case gateway.Succeeded:
		return s.finish(ctx, r.ID, cauri.RefundSucceeded, "", "", st.ProviderRef)
	case gateway.Failed:
		return s.finish(ctx, r.ID, cauri.RefundFailed, "rejected", st.Reason, st.ProviderRef)
	case gateway.NotFound:
		return s.finish(ctx, r.ID, cauri.RefundFailed, "not_received", "The aggregator never received the refund", "")
	}
	return s.get(ctx, r.WorkspaceID, r.ID)
}

// finish ends a pending refund with its event, and its session's REFUNDED
// status when it is the last part, in one transaction (the domain's
// EndRefund decides). A refund that is no longer pending is left alone. A
// "not received" end waits NotFoundIsFinal after the refund's call.
func (s *Service) finish(ctx context.Context, id string, status cauri.RefundStatus, code, message, providerRef string) (*cauri.Refund, error) {
	r, changed, err := s.Store.FinishRefund(ctx, id, func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) (*cauri.Event, error) {
		now := s.Now().UTC()
		if code == "not_received" && (r.InitiatedAt == nil || now.Sub(*r.InitiatedAt) < movement.NotFoundIsFinal) {
			return nil, nil // too early to conclude: it may still arrive
		}
		if providerRef != "" {
			r.ProviderRef = providerRef
		}
		return cauri.EndRefund(r, sess, refunds, status, code, strings.TrimSpace(message), now, s.PayURL)
	})
	if err == nil && changed && s.Committed != nil {
		s.Committed()
	}
	return r, refundNotFound(err, id)
}

// repay makes (or, under the refund's key, finds) the transfer of a
// refund by payout whose first try ended unrecorded or in an error.
func (s *Service) repay(ctx context.Context, r *cauri.Refund) error {
	ws, err := s.Store.Workspace(ctx, r.WorkspaceID)
	if err != nil {
		return err
	}
	a, err := s.attempt(ctx, r)
	if err != nil {
		return err
	}
	_, err = s.payout(ctx, ws, r, a)
	return err
}

// surelyNoTransfer reports whether a transfer's refusal leaves no transfer
// behind: a check that refused it (invalid, forbidden, the daily cap, a
// gateway gone), never an internal error or a key still in use.
func surelyNoTransfer(err error) bool {
	switch cauri.ErrorCode(err) {
	case cauri.EInvalid, cauri.EForbidden, cauri.ERateLimited, cauri.ENotFound, cauri.EUnprocessable:
		return true
	}
	return false
}

// payoutParams is the transfer that pays a refund back: to the number
// and operator that paid, in the payment's country, named as the customer.
func payoutParams(sess *cauri.Session, a *cauri.PaymentAttempt, amount int64) transfer.Params {
	return transfer.Params{Amount: cauri.FormatAmount(amount, sess.Currency), Country: a.Country, Operator: a.Operator,
		Phone: a.Phone, Currency: string(sess.Currency), RecipientName: sess.CustomerName, Description: "Refund of " + sess.ID}
}

// payout sends a refund back as a transfer, with the transfers' rules
// (daily cap, funds), idempotent on the refund ("refund:" and its id): a
// re-drive after a crash finds the transfer it made. A transfer that could
// not be made (the cap, an aggregator that never received it) ends the
// refund failed with the transfer's code, and its error answers; one that
// was made links the refund, which ends when the transfer ends.
func (s *Service) payout(ctx context.Context, ws *cauri.Workspace, r *cauri.Refund, a *cauri.PaymentAttempt) (*cauri.Refund, error) {
	sess, err := s.Store.Session(ctx, r.SessionID)
	if err != nil {
		return nil, err
	}
	// The transfer the refund's key already made (before a crash, or
	// before an error that followed its commit) is followed, whatever the
	// routes say now; only then is one validated and made.
	key, p := "refund:"+r.ID, payoutParams(sess, a, r.Amount)
	made, err := s.Transfers.ReplayRequest(ctx, ws, key, p)
	if err == nil && made == nil {
		var tr *cauri.Transfer
		if tr, err = s.Transfers.Validate(ctx, ws, p); err == nil {
			made, _, err = s.Transfers.Create(ctx, ws, tr, key)
		}
		if err != nil && cauri.ErrorReason(err) == "solde_insuffisant" {
			made, _ = s.Transfers.Get(ctx, ws.ID, tr.ID) // kept, failed
		}
	}
	if made == nil && !surelyNoTransfer(err) {
		// An internal error may follow a transfer's commit, or its payout:
		// the refund stays pending, holding its amount, and the
		// reconciler re-drives it under the same key (which finds that
		// transfer, or makes it once).
		s.Failures.Record(ctx, movement.Refund, "payout", r.ID, err)
		return nil, err
	}
	// The transfer's error answers, worded for the refund: it is kept
	// failed, and a new refund may be asked.
	answer := func(err error) error {
		code := cauri.ErrorReason(err)
		if code == "" {
			code = "internal"
		}
		return &cauri.Error{Code: cauri.ErrorCode(err), Reason: code, Cause: err, Message: fmt.Sprintf(
			"The refund's transfer failed: %s; refund %s is failed (failure_code %s): ask for a new refund once it can be paid",
			strings.TrimSuffix(cauri.ErrorMessage(err), "."), r.ID, code)}
	}
	if made == nil {
		code := cauri.ErrorReason(err)
		if code == "" {
			code = "internal"
		}
		if _, ferr := s.finish(ctx, r.ID, cauri.RefundFailed, code, cauri.ErrorMessage(err), ""); ferr != nil {
			s.Failures.Record(ctx, movement.Refund, "finish", r.ID, ferr)
		}
		return nil, answer(err)
	}
	if merr := s.markInitiated(ctx, r.ID, "", made.ID); merr != nil {
		s.Failures.Record(ctx, movement.Refund, "mark_initiated", r.ID, merr)
		return r, nil
	}
	r.TransferID = made.ID
	done, ferr := s.followTransfer(ctx, r, made)
	if err != nil && ferr == nil {
		return nil, answer(err)
	}
	return done, ferr
}

// followTransfer ends a refund by payout as its transfer ended (a
// transfer still processing changes nothing).
func (s *Service) followTransfer(ctx context.Context, r *cauri.Refund, tr *cauri.Transfer) (*cauri.Refund, error) {
	switch tr.Status {
	case cauri.TransferSucceeded:
		return s.finish(ctx, r.ID, cauri.RefundSucceeded, "", "", "")
	case cauri.TransferFailed:
		return s.finish(ctx, r.ID, cauri.RefundFailed, tr.FailureCode, tr.FailureMessage, "")
	}
	return s.get(ctx, r.WorkspaceID, r.ID)
}

// TransferEnded ends the refund a transfer paid back, if any: the
// transfer service tells it each transfer it ends.
func (s *Service) TransferEnded(ctx context.Context, tr *cauri.Transfer) {
	r, err := s.Store.RefundByTransfer(ctx, tr.ID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err == nil {
		_, err = s.followTransfer(ctx, r, tr)
	}
	s.Failures.Record(ctx, movement.Refund, "transfer_ended", tr.ID, err)
}

// Callback handles an aggregator's callback about one of the gateway's
// refunds, named by our reference: a signal, confirmed with the aggregator
// at once (at most every 2 seconds per refund) before anything changes.
// ENotFound when no refund has this reference.
//
// A callback that names only the refunded collection
// (gateway.RefundsOf: Paystack's refund webhooks carry the transaction's
// reference, no id of the refund's that Cauri chose) checks each pending
// refund of that collection; ENotFound when no payment of the gateway has
// this reference.
func (s *Service) Callback(ctx context.Context, gatewayID, reference string) error {
	if collection, ok := gateway.RefundedCollection(reference); ok {
		return s.collectionCallback(ctx, gatewayID, collection)
	}
	r, err := s.Store.RefundByReference(ctx, gatewayID, reference)
	if err != nil {
		return refundNotFound(err, reference)
	}
	return s.callback(ctx, r)
}

// callback checks a refund a callback is about, if it is pending at its
// aggregator, at most every CallbackCheck.
func (s *Service) callback(ctx context.Context, r *cauri.Refund) error {
	if r.Status != cauri.RefundPending || r.Method != cauri.RefundByAggregator {
		return nil
	}
	if turn, err := s.Store.ClaimRefundCallbackCheck(ctx, r.ID, s.Now(), movement.CallbackCheck); err != nil || !turn {
		return err
	}
	return s.check(ctx, r)
}

// collectionCallback checks every pending refund of the gateway's
// collection with our reference collection, as a callback of each. A
// refund that cannot be checked now is logged and left to the reconciler
// (which reads every pending refund anyway): one refund the aggregator
// cannot be asked about (its id unknown) must not make the aggregator
// resend, for ever, a webhook about the others.
func (s *Service) collectionCallback(ctx context.Context, gatewayID, collection string) error {
	a, err := s.Store.AttemptByReference(ctx, gatewayID, collection)
	if err != nil {
		return err
	}
	refunds, err := s.Store.SessionRefunds(ctx, a.SessionID)
	if err != nil {
		return err
	}
	for _, r := range refunds {
		if r.AttemptID == a.ID && r.GatewayID == gatewayID {
			s.Failures.Record(ctx, movement.Refund, "callback", r.ID, s.callback(ctx, r))
		}
	}
	return nil
}

// check learns a pending refund's outcome: from the aggregator, from its
// transfer, or at once for a test session's.
func (s *Service) check(ctx context.Context, r *cauri.Refund) error {
	switch {
	case r.Provider == Sandbox:
		_, err := s.finish(ctx, r.ID, cauri.RefundSucceeded, "", "", "")
		return err
	case r.Method == cauri.RefundByPayout:
		if r.TransferID == "" {
			if r.InitiatedAt == nil {
				return nil // its transfer is being made; an orphan is re-driven
			}
			return s.repay(ctx, r) // adopted, then its payout ended in an error
		}
		tr, err := s.Transfers.Get(ctx, r.WorkspaceID, r.TransferID)
		if err == nil {
			_, err = s.followTransfer(ctx, r, tr)
		}
		return err
	}
	refunder, _, err := s.refunder(ctx, r.GatewayID)
	if err != nil {
		return err
	}
	st, err := refunder.RefundStatus(ctx, s.statusRef(ctx, r))
	if err != nil {
		return err
	}
	_, err = s.record(ctx, r, st)
	return err
}

// statusRef names a refund for its aggregator's RefundStatus: our
// reference, the aggregator's id once known, the gateway's callback
// address (M-Pesa's status query answers there), and the payment it gives
// back (gateway.Ref.Collection: Wave knows a refund only by its payment's
// checkout session; M-Pesa asks about a payment by its receipt).
// Without the attempt (unreadable now), the aggregators that need no more
// than the refund's own ids are still asked; the others say what they lack.
func (s *Service) statusRef(ctx context.Context, r *cauri.Refund) gateway.Ref {
	ref := gateway.Ref{Reference: r.Reference, ProviderRef: r.ProviderRef, NotifyURL: s.CallbackURL + "/" + r.GatewayID}
	a, err := s.attempt(ctx, r)
	if err != nil {
		s.Failures.Record(ctx, movement.Refund, "attempt", r.ID, err)
		return ref
	}
	ref.Collection = &gateway.Ref{Reference: a.Reference, ProviderRef: a.ProviderRef}
	return ref
}

// Reconcile is the background pass no lost callback or crash escapes. A
// refund whose call never recorded its end (the process stopped between
// its commit and the aggregator's answer) is adopted by one node and, if
// the aggregator never received it, sent again with the same reference
// (refunded once); a refund by payout is re-driven with its transfer's
// idempotency key (paid once). Pending refunds are then asked about with
// backoff. It returns how many refunds it checked.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	now := s.Now().UTC()
	orphans, err := s.Store.OrphanRefunds(ctx, now.Add(-movement.InitiationDeadline), movement.ReconcileBatch)
	if err != nil {
		return 0, err
	}
	checked := 0
	for _, r := range orphans {
		checked++
		s.Failures.Record(ctx, movement.Refund, "redrive", r.ID, s.redrive(ctx, r, now))
	}
	due, err := s.Store.DueRefunds(ctx, now, movement.StatusCheck, movement.CheckBackoffMax, movement.ReconcileBatch)
	if err != nil {
		return checked, err
	}
	for _, r := range due {
		if turn, err := s.Store.ClaimRefundCheck(ctx, r.ID, now, time.Second); err != nil || !turn {
			continue // another node has it
		}
		checked++
		s.Failures.Record(ctx, movement.Refund, "check", r.ID, s.check(ctx, r))
	}
	return checked, nil
}

// redrive takes over an orphan refund, on one node only.
func (s *Service) redrive(ctx context.Context, r *cauri.Refund, now time.Time) error {
	if r.Provider == Sandbox || r.Method == cauri.RefundByPayout {
		won, err := s.Store.AdoptOrphanRefund(ctx, r.ID, now)
		if err != nil || !won {
			return err
		}
		if r.Provider == Sandbox {
			return s.check(ctx, r)
		}
		return s.repay(ctx, r)
	}
	refunder, _, err := s.refunder(ctx, r.GatewayID)
	if err != nil {
		return err
	}
	if !refunder.IdempotentRefund() && r.ProviderRef == "" {
		// The aggregator takes no key of ours (Paystack, Flutterwave): it
		// cannot be asked about this refund without its own id, nor be sent
		// it again without risking a second refund. Adopted, it stays
		// pending (its checks say why, with backoff) until a person finds
		// it in the aggregator's dashboard.
		won, err := s.Store.AdoptOrphanRefund(ctx, r.ID, now)
		if err != nil || !won {
			return err
		}
		return fmt.Errorf("refund %s: its call to %s ended unrecorded and %s takes no idempotency key: it is not sent again and stays pending; look for a refund of %s %s in %s's dashboard",
			r.ID, r.Provider, r.Provider, cauri.FormatAmount(r.Amount, r.Currency), r.Currency, r.Provider)
	}
	st, err := refunder.RefundStatus(ctx, s.statusRef(ctx, r))
	if err != nil {
		return err // the aggregator is not answering: the next pass asks again
	}
	won, err := s.Store.AdoptOrphanRefund(ctx, r.ID, now)
	if err != nil || !won {
		return err
	}
	switch {
	case st.Outcome == gateway.NotFound && r.ProviderRef == "" && refunder.IdempotentRefund():
		a, err := s.attempt(ctx, r)
		if err != nil {
			return err
		}
		_, err = s.send(ctx, r, a, refunder) // never received: send it now, once
		return err
	case st.Outcome != gateway.Pending:
		_, err = s.record(ctx, r, st)
		return err
	}
	return nil
}

// attempt reads the attempt a refund gives back.
func (s *Service) attempt(ctx context.Context, r *cauri.Refund) (*cauri.PaymentAttempt, error) {
	attempts, err := s.Store.Attempts(ctx, r.SessionID)
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		if a.ID == r.AttemptID {
			return a, nil
		}
	}
	return nil, fmt.Errorf("refund %s: attempt %s not found", r.ID, r.AttemptID)
}

// Get reads one of the workspace's refunds of the key's mode; another
// workspace's, or the other mode's, is not found.
func (s *Service) Get(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (*cauri.Refund, error) {
	r, err := s.get(ctx, ws.ID, id)
	if err == nil && r.Livemode != ws.Livemode(keyLive) {
		return nil, cauri.NotFound("refund", id)
	}
	return r, err
}

func (s *Service) get(ctx context.Context, workspaceID, id string) (*cauri.Refund, error) {
	r, err := s.Store.Refund(ctx, workspaceID, id)
	return r, refundNotFound(err, id)
}

// refundNotFound words the store's ErrNotFound about refund id.
func refundNotFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		e := cauri.NotFound("refund", id)
		e.Cause = err
		return e
	}
	return err
}

// Filter is a list request: refunds of a transaction, of a status, after
// a refund (the last of the previous page), at most Limit (1 to 200).
type Filter struct {
	TransactionID string
	Status        string
	StartingAfter string
	Limit         int
}

// List lists the workspace's refunds of the key's mode, newest first.
func (s *Service) List(ctx context.Context, ws *cauri.Workspace, keyLive bool, f Filter) ([]*cauri.Refund, error) {
	switch cauri.RefundStatus(f.Status) {
	case "", cauri.RefundPending, cauri.RefundSucceeded, cauri.RefundFailed:
	default:
		return nil, invalid("invalid_body", "status must be pending, succeeded or failed")
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, invalid("invalid_body", "limit must be a whole number from 1 to 200")
	}
	list, err := s.Store.Refunds(ctx, ws.ID, ws.Livemode(keyLive), store.RefundFilter{SessionID: f.TransactionID,
		Status: cauri.RefundStatus(f.Status), After: f.StartingAfter, Limit: f.Limit})
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalid("invalid_body", "starting_after names no refund of this workspace and mode: %s", cauri.Printable(f.StartingAfter))
	}
	return list, err
}

// OfSession lists a session's refunds, oldest first, and how much is left
// to refund (the dashboard's transaction page).
func (s *Service) OfSession(ctx context.Context, sess *cauri.Session) ([]*cauri.Refund, int64, error) {
	list, err := s.Store.SessionRefunds(ctx, sess.ID)
	return list, cauri.Refundable(sess, list), err
}
