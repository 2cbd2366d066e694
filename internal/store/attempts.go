package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/search"
)

const attemptColumns = `id, session_id, gateway_id, provider, reference, country, operator, operator_code, phone, status,
	reason, provider_ref, created_at, updated_at, checked_at, initiated_at, redirect_url, route_reason, needs_code, instructions, final_ref`

func scanAttempt(row interface{ Scan(...any) error }) (*cauri.PaymentAttempt, error) {
	var a cauri.PaymentAttempt
	var status string
	var created, updated int64
	var checked, initiated sql.NullInt64
	if err := row.Scan(&a.ID, &a.SessionID, &a.GatewayID, &a.Provider, &a.Reference, &a.Country, &a.Operator, &a.OperatorCode,
		&a.Phone, &status, &a.Reason, &a.ProviderRef, &created, &updated, &checked, &initiated, &a.RedirectURL, &a.RouteReason, &a.NeedsCode, &a.Instructions,
		&a.FinalRef); err != nil {
		return nil, err
	}
	a.Status = cauri.AttemptStatus(status)
	a.CreatedAt, a.UpdatedAt, a.CheckedAt = fromMicros(created), fromMicros(updated), fromNullMicros(checked)
	a.InitiatedAt = fromNullMicros(initiated)
	return &a, nil
}

// Prior is what a session's earlier attempts tell the admission of a new
// one, read under the session's lock.
type Prior struct {
	Waiting bool                  // one of them is pending
	Count   int                   // how many there are
	Latest  *cauri.PaymentAttempt // the newest; nil when there is none
}

// StartAttempt records a new attempt, pending, under the session's lock,
// if admit (the caller's rule, nil: any) admits it, given the session,
// what its earlier attempts tell (read under the same lock, so that
// concurrent requests are judged one after the other, across nodes) and,
// for a session created through a payment link, the link's use read under
// the link's lock (nil otherwise): concurrent payments of one link are
// admitted one at a time, across nodes.
//
// When the session had FAILED, it becomes PENDING again and the event
// reopen returns is written with it.
func (s *Store) StartAttempt(ctx context.Context, a *cauri.PaymentAttempt, admit func(sess *cauri.Session, prior Prior, link *LinkUse) error, reopen func(*cauri.Session) *cauri.Event) error {
	return s.tx(ctx, func(t *tx) error {
		sess, err := scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = ?`+s.forUpdate(), a.SessionID))
		if err != nil {
			return notFound(err, "Session %s not found", printable(a.SessionID))
		}
		earlier, err := queryAll(ctx, t, scanAttempt, `SELECT `+attemptColumns+` FROM payment_attempts WHERE session_id = ?
			ORDER BY created_at DESC, id DESC`, a.SessionID)
		if err != nil {
			return err
		}
		prior := Prior{Count: len(earlier)}
		for i, e := range earlier {
			if i == 0 {
				prior.Latest = e
			}
			prior.Waiting = prior.Waiting || e.Status == cauri.AttemptPending
		}
		link, err := s.linkForAttempt(ctx, t, sess)
		if err != nil {
			return err
		}
		if admit != nil {
			if err := admit(sess, prior, link); err != nil {
				return err
			}
		}
		_, err = t.exec(ctx, `INSERT INTO payment_attempts (`+attemptColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.SessionID, a.GatewayID, a.Provider, a.Reference, a.Country, a.Operator, a.OperatorCode, a.Phone, string(a.Status),
			a.Reason, a.ProviderRef, micros(a.CreatedAt), micros(a.UpdatedAt), nullMicros(a.CheckedAt), nullMicros(a.InitiatedAt), a.RedirectURL, a.RouteReason,
			a.NeedsCode, a.Instructions, a.FinalRef)
		if err != nil {
			return err
		}
		t.countAttempt(sess, a, a.Status, 1)
		if err := t.addSearchTerms(ctx, sess, search.PhoneTerms(a.Phone)); err != nil {
			return err
		}
		// A new try of a failed session makes it pending again (payment.updated).
		if sess.Status == cauri.SessionFailed && reopen != nil {
			sess.Status, sess.UpdatedAt, sess.CompletedAt = cauri.SessionPending, a.CreatedAt, nil
			return t.saveSessionStatus(ctx, sess, cauri.SessionFailed, reopen(sess))
		}
		return nil
	})
}

// Attempts lists a session's attempts, newest first.
func (s *Store) Attempts(ctx context.Context, sessionID string) ([]*cauri.PaymentAttempt, error) {
	var out []*cauri.PaymentAttempt
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanAttempt, `SELECT `+attemptColumns+` FROM payment_attempts WHERE session_id = ?
			ORDER BY created_at DESC, id DESC`, sessionID)
		return err
	})
	return out, err
}

// FailedAttemptsForPhone lists the attempts to collect from a phone
// number (E.164) that failed between since and until (their updated_at:
// a failed attempt is not updated again), in a workspace's sessions of
// one mode created in the day before since and no later than until (in no
// order): the customer's earlier tries in another session (a payment
// link's next visit, a new checkout), whose providers the routing engine
// ranks last and after which a payment is a retry. Asked about an attempt
// of the past (until: when it started), the sessions created since then
// do not push out those it may be a retry of. It reads the sessions by
// the number's search term (the terms' index) and their attempts (theirs).
func (s *Store) FailedAttemptsForPhone(ctx context.Context, workspaceID string, livemode bool, e164 string, since, until time.Time) ([]*cauri.PaymentAttempt, error) {
	terms := search.PhoneTerms(e164)
	if len(terms) == 0 || terms[0] == "" {
		return nil, nil
	}
	var out []*cauri.PaymentAttempt
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanAttempt, `SELECT `+attemptColumns+` FROM payment_attempts a
			WHERE a.session_id IN (SELECT t.session_id FROM search_terms t WHERE t.workspace_id = ? AND t.livemode = ? AND t.term = ?
				AND t.created_at >= ? AND t.created_at <= ? ORDER BY t.created_at DESC LIMIT 20)
			AND a.phone = ? AND a.status = ? AND a.updated_at >= ? AND a.updated_at <= ?`,
			workspaceID, livemode, terms[0], micros(since.Add(-24*time.Hour)), micros(until), e164, string(cauri.AttemptFailed), micros(since), micros(until))
		return err
	})
	return out, err
}

// ClaimCallbackCheck is ClaimAttemptCheck for the aggregator's callbacks:
// a callback gets its turn however recently a status read checked (it is
// news), at most once every every per attempt however many arrive, and its
// check counts as the latest for the status reads.
func (s *Store) ClaimCallbackCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error) {
	return s.claimCallbackCheck(ctx, "payment_attempts", string(cauri.AttemptPending), id, now, every)
}

// claimCallbackCheck is ClaimCallbackCheck on a table of waiting money
// movements (payment_attempts, transfers) whose waiting status is waiting.
func (s *Store) claimCallbackCheck(ctx context.Context, table, waiting, id string, now time.Time, every time.Duration) (bool, error) {
	n, err := s.update(ctx, `UPDATE `+table+` SET checked_at = ?, callback_checked_at = ? WHERE id = ? AND status = ?
		AND initiated_at IS NOT NULL AND (callback_checked_at IS NULL OR callback_checked_at <= ?)`,
		micros(now), micros(now), id, waiting, micros(now.Add(-every)))
	return n == 1, err
}

// ClaimAttemptCheck lets one caller, of any node, ask the aggregator about
// a pending attempt whose initiation call has returned, at most once every
// every: it reports whether this caller got the turn, and records it.
func (s *Store) ClaimAttemptCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error) {
	return s.claimCheck(ctx, "payment_attempts", string(cauri.AttemptPending), id, now, every)
}

// claimCheck is ClaimAttemptCheck on a table of waiting money movements.
func (s *Store) claimCheck(ctx context.Context, table, waiting, id string, now time.Time, every time.Duration) (bool, error) {
	n, err := s.update(ctx, `UPDATE `+table+` SET checked_at = ? WHERE id = ? AND status = ? AND initiated_at IS NOT NULL
		AND (checked_at IS NULL OR checked_at <= ?)`,
		micros(now), id, waiting, micros(now.Add(-every)))
	return n == 1, err
}

// update runs one statement in its own transaction and returns how many
// rows it changed.
func (s *Store) update(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.tx(ctx, func(t *tx) error {
		res, err := t.exec(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// UpdateAttempt changes a pending attempt and its session together, under
// the session's lock: fn sees both, changes them in place and returns the
// event the change emits (or nil). An attempt that is no longer pending is
// left alone (fn is not called): a duplicated or late answer changes
// nothing.
func (s *Store) UpdateAttempt(ctx context.Context, id string, fn func(*cauri.Session, *cauri.PaymentAttempt) (*cauri.Event, error)) (*cauri.Session, error) {
	var sess *cauri.Session
	err := s.tx(ctx, func(t *tx) error {
		a, err := scanAttempt(t.queryRow(ctx, `SELECT `+attemptColumns+` FROM payment_attempts WHERE id = ?`, id))
		if err != nil {
			return notFound(err, "Attempt %s not found", printable(id))
		}
		sess, err = scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = ?`+s.forUpdate(), a.SessionID))
		if err != nil {
			return err
		}
		// Read again under the session's lock, the attempt's row locked too
		// (PostgreSQL): a final id kept by a callback meanwhile
		// (KeepFinalRef) is either seen here or refused there.
		if err := t.queryRow(ctx, `SELECT status, provider_ref, final_ref FROM payment_attempts WHERE id = ?`+s.forUpdate(), id).Scan(&a.Status, &a.ProviderRef, &a.FinalRef); err != nil {
			return err
		}
		if a.Status != cauri.AttemptPending {
			return nil
		}
		was := sess.Status
		ev, err := fn(sess, a)
		if err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE payment_attempts SET status = ?, reason = ?, provider_ref = ?, updated_at = ? WHERE id = ?`,
			string(a.Status), a.Reason, a.ProviderRef, micros(a.UpdatedAt), a.ID); err != nil {
			return err
		}
		if a.Status != cauri.AttemptPending {
			t.countAttempt(sess, a, cauri.AttemptPending, -1)
			t.countAttempt(sess, a, a.Status, 1)
		}
		return t.saveSessionStatus(ctx, sess, was, ev)
	})
	return sess, err
}

// AttemptByReference finds a gateway's attempt by our reference.
func (s *Store) AttemptByReference(ctx context.Context, gatewayID, reference string) (*cauri.PaymentAttempt, error) {
	if !storable(reference) {
		return nil, errNotFound("No payment %s at this gateway", printable(reference))
	}

	var a *cauri.PaymentAttempt
	err := s.read(ctx, func(t *tx) (err error) {
		a, err = scanAttempt(t.queryRow(ctx, `SELECT `+attemptColumns+` FROM payment_attempts WHERE gateway_id = ? AND reference = ?`,
			gatewayID, reference))
		return notFound(err, "No payment %s at this gateway", printable(reference))
	})
	return a, err
}

// AttemptByProviderRef finds a gateway's attempt by the aggregator's own
// id (recorded through Collection.Created), for callbacks that carry only
// that id (M-Pesa's CheckoutRequestID).
func (s *Store) AttemptByProviderRef(ctx context.Context, gatewayID, providerRef string) (*cauri.PaymentAttempt, error) {
	if !storable(providerRef) {
		return nil, errNotFound("No payment %s at this gateway", printable(providerRef))
	}

	var a *cauri.PaymentAttempt
	err := s.read(ctx, func(t *tx) (err error) {
		a, err = scanAttempt(t.queryRow(ctx, `SELECT `+attemptColumns+` FROM payment_attempts
			WHERE gateway_id = ? AND provider_ref = ? AND provider_ref <> '' ORDER BY created_at DESC LIMIT 1`, gatewayID, providerRef))
		return notFound(err, "No payment %s at this gateway", printable(providerRef))
	})
	return a, err
}

// DueAttempts lists up to limit pending attempts whose initiation call has
// returned and whose next check is due at now: a quarter of the attempt's
// age after its last check (or its initiation), at least minWait and at
// most maxWait. The longest overdue come first.
func (s *Store) DueAttempts(ctx context.Context, now time.Time, minWait, maxWait time.Duration, limit int) ([]*cauri.PaymentAttempt, error) {
	var out []*cauri.PaymentAttempt
	err := s.read(ctx, func(t *tx) (err error) {
		q, args := dueQuery(attemptColumns, "payment_attempts", string(cauri.AttemptPending), now, minWait, maxWait, limit)
		out, err = queryAll(ctx, t, scanAttempt, q, args...)
		return err
	})
	return out, err
}

// dueQuery selects the rows of a table of waiting money movements whose next
// check is due at now (see DueAttempts).
func dueQuery(columns, table, waiting string, now time.Time, minWait, maxWait time.Duration, limit int) (string, []any) {
	n, lo, hi := micros(now), minWait.Microseconds(), maxWait.Microseconds()
	return `SELECT ` + columns + ` FROM (
			SELECT *, COALESCE(checked_at, initiated_at) + CASE
				WHEN (? - created_at) / 4 < ? THEN ?
				WHEN (? - created_at) / 4 > ? THEN ?
				ELSE (? - created_at) / 4 END AS due_at
			FROM ` + table + ` WHERE status = ? AND initiated_at IS NOT NULL) a
			WHERE due_at <= ? ORDER BY due_at, id LIMIT ?`,
		[]any{n, lo, lo, n, hi, hi, n, waiting, n, limit}
}

// AdoptOrphanAttempts marks initiated, at now, the pending attempts created
// before cutoff whose initiation call never recorded its end (the process
// stopped during it), so that they are checked like any other. It returns
// how many it adopted.
func (s *Store) AdoptOrphanAttempts(ctx context.Context, cutoff, now time.Time) (int64, error) {
	return s.update(ctx, `UPDATE payment_attempts SET initiated_at = ? WHERE status = ? AND initiated_at IS NULL AND created_at < ?`,
		micros(now), string(cauri.AttemptPending), micros(cutoff))
}

// ExpiredSessions lists up to limit sessions still PENDING whose expiry
// is at or before now, with no payment waiting, the longest expired first.
// A session a node older than expires_at wrote during a rolling deploy has
// 0 there: its expiry is its creation plus cauri.SessionLifetime, as that
// node's rule was (scanSession reads it so too).
func (s *Store) ExpiredSessions(ctx context.Context, now time.Time, limit int) ([]string, error) {
	var out []string
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (string, error) {
			var id string
			return id, row.Scan(&id)
		}, `SELECT id FROM checkout_sessions s WHERE status = '`+string(cauri.SessionPending)+`' AND expires_at <= ?
			AND (expires_at > 0 OR created_at <= ?)
			AND NOT EXISTS (SELECT 1 FROM payment_attempts a WHERE a.session_id = s.id AND a.status = ?)
			ORDER BY expires_at LIMIT ?`, micros(now), micros(now.Add(-cauri.SessionLifetime)), string(cauri.AttemptPending), limit)
		return err
	})
	return out, err
}

// MarkInitiated records that an attempt's initiation call has returned,
// with the aggregator's page where the customer goes on paying, if any.
func (s *Store) MarkInitiated(ctx context.Context, id string, now time.Time, next cauri.NextAction) error {
	_, err := s.update(ctx, `UPDATE payment_attempts SET initiated_at = ?, redirect_url = ?, needs_code = ?, instructions = ? WHERE id = ?`,
		micros(now), nextURL(next), next.Type == cauri.ActionEnterCode, next.Instructions, id)
	return err
}

// SetNextAction records the step a pending attempt now waits for, as a
// later answer of the aggregator gives it (a page address that comes with
// a status read, a code the customer entered and accepted). A settled
// attempt keeps what it had.
func (s *Store) SetNextAction(ctx context.Context, id string, next cauri.NextAction) error {
	_, err := s.update(ctx, `UPDATE payment_attempts SET redirect_url = ?, needs_code = ?, instructions = ? WHERE id = ? AND status = ?`,
		nextURL(next), next.Type == cauri.ActionEnterCode, next.Instructions, id, string(cauri.AttemptPending))
	return err
}

func nextURL(next cauri.NextAction) string {
	if next.Type == cauri.ActionRedirect {
		return next.URL
	}
	return ""
}

// SetProviderRef records the aggregator's own id of a pending attempt as
// soon as the aggregator gives it, before the payment can move money (a
// settled attempt's is ReplaceProviderRef's).
func (s *Store) SetProviderRef(ctx context.Context, id, providerRef string) error {
	_, err := s.update(ctx, `UPDATE payment_attempts SET provider_ref = ? WHERE id = ? AND status = ?`, providerRef, id, string(cauri.AttemptPending))
	return err
}

// ReplaceProviderRef gives a succeeded attempt its aggregator's final id
// in place of the provisional one it was settled under (was), once: false
// when the attempt is not succeeded or its id is no longer was.
func (s *Store) ReplaceProviderRef(ctx context.Context, id, was, providerRef string) (bool, error) {
	n, err := s.update(ctx, `UPDATE payment_attempts SET provider_ref = ? WHERE id = ? AND provider_ref = ? AND status = ?`,
		providerRef, id, was, string(cauri.AttemptSucceeded))
	return n > 0, err
}

// KeepFinalRef keeps with a pending attempt the final id a callback proved
// (finalRef) while its provider ref is still the provisional one (was),
// until its payment succeeds (the first one kept wins): false when the
// attempt is not pending, has another provider ref, or keeps one already.
func (s *Store) KeepFinalRef(ctx context.Context, id, was, finalRef string) (bool, error) {
	n, err := s.update(ctx, `UPDATE payment_attempts SET final_ref = ? WHERE id = ? AND provider_ref = ? AND status = ? AND final_ref = ''`,
		finalRef, id, was, string(cauri.AttemptPending))
	return n > 0, err
}

// CancelSession changes a session under its lock as cancel says: given
// the session and whether a payment of it is waiting, cancel returns nil
// to leave it, or the event of the change it made to the session (its
// status and time), stored with it in the same transaction. It reports
// whether the session changed.
func (s *Store) CancelSession(ctx context.Context, id string, cancel func(sess *cauri.Session, waiting bool) *cauri.Event) (bool, error) {
	var done bool
	err := s.tx(ctx, func(t *tx) error {
		sess, err := scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = ?`+s.forUpdate(), id))
		if err != nil {
			return notFound(err, "Session %s not found", printable(id))
		}
		var waiting int
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM payment_attempts WHERE session_id = ? AND status = ?`, id, string(cauri.AttemptPending)).Scan(&waiting); err != nil {
			return err
		}
		was := sess.Status
		ev := cancel(sess, waiting > 0)
		if ev == nil {
			return nil
		}
		done = true
		return t.saveSessionStatus(ctx, sess, was, ev)
	})
	return done, err
}
