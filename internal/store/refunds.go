package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cauri-pay/cauri"
)

const refundColumns = `id, workspace_id, livemode, session_id, attempt_id, gateway_id, provider, reference, status, amount, currency,
	method, reason, provider_ref, transfer_id, failure_code, failure_message, created_at, updated_at, completed_at, initiated_at`

func scanRefund(row interface{ Scan(...any) error }) (*cauri.Refund, error) {
	var r cauri.Refund
	var status, cur, method string
	var created, updated int64
	var completed, initiated sql.NullInt64
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.Livemode, &r.SessionID, &r.AttemptID, &r.GatewayID, &r.Provider, &r.Reference,
		&status, &r.Amount, &cur, &method, &r.Reason, &r.ProviderRef, &r.TransferID, &r.FailureCode, &r.FailureMessage,
		&created, &updated, &completed, &initiated); err != nil {
		return nil, err
	}
	r.Status, r.Currency, r.Method = cauri.RefundStatus(status), cauri.Currency(cur), cauri.RefundMethod(method)
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	r.CompletedAt, r.InitiatedAt = fromNullMicros(completed), fromNullMicros(initiated)
	return &r, nil
}

// sessionRefunds reads a session's refunds in the caller's transaction.
func (t *tx) sessionRefunds(ctx context.Context, sessionID string) ([]*cauri.Refund, error) {
	return queryAll(ctx, t, scanRefund, `SELECT `+refundColumns+` FROM refunds WHERE session_id = ? ORDER BY created_at, id`, sessionID)
}

// CreateRefund stores a new refund, pending, before its aggregator is
// called. In one transaction, under the lock of the refunded session: the
// idempotency key is claimed (a replay returns the id of the refund the
// key created, and nothing is written), then admit is asked, with the
// session and its refunds as they are under the lock, whether the refund
// may be made (it may set the refund's amount), then the refund is
// written unless admit refused it. So concurrent refunds of one session,
// on one node or several, are admitted one at a time, each seeing the
// others: never more refunded than was paid.
func (s *Store) CreateRefund(ctx context.Context, r *cauri.Refund, idem *Idempotency, admit func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error) (replayOf string, err error) {
	err = s.tx(ctx, func(t *tx) error {
		sess, err := scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = ?`+s.forUpdate(), r.SessionID))
		if err != nil {
			return notFound(err, "Session %s not found", printable(r.SessionID))
		}
		if idem != nil {
			prev, err := t.claimIdempotencyKey(ctx, r.WorkspaceID, r.Livemode, idem, "refund", r.ID, r.CreatedAt)
			if err != nil || prev != "" {
				replayOf = prev
				return err
			}
		}
		refunds, err := t.sessionRefunds(ctx, sess.ID)
		if err != nil {
			return err
		}
		if err := admit(r, sess, refunds); err != nil {
			return err
		}
		_, err = t.exec(ctx, `INSERT INTO refunds (`+refundColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.WorkspaceID, r.Livemode, r.SessionID, r.AttemptID, r.GatewayID, r.Provider, r.Reference, string(r.Status), r.Amount,
			string(r.Currency), string(r.Method), r.Reason, r.ProviderRef, r.TransferID, r.FailureCode, r.FailureMessage,
			micros(r.CreatedAt), micros(r.UpdatedAt), nullMicros(r.CompletedAt), nullMicros(r.InitiatedAt))
		return err
	})
	return replayOf, err
}

// RefundByIdempotencyKey finds the refund an idempotency key created,
// checking that the request is the same (ErrIdempotencyMismatch
// otherwise); nil when the key is unknown or forgotten.
func (s *Store) RefundByIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *Idempotency, now time.Time) (*cauri.Refund, error) {
	id, err := s.keyedResource(ctx, workspaceID, livemode, idem, now, "refund")
	if err != nil || id == "" {
		return nil, err
	}
	return s.Refund(ctx, workspaceID, id)
}

// Refund reads one refund of a workspace; another workspace's is
// ErrNotFound, as one that does not exist.
func (s *Store) Refund(ctx context.Context, workspaceID, id string) (*cauri.Refund, error) {
	if !cauri.IsID("re_", id) {
		return nil, fmt.Errorf("refund %s: %w", printable(id), ErrNotFound)
	}
	var r *cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		r, err = scanRefund(t.queryRow(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = ? AND workspace_id = ?`, id, workspaceID))
		return err
	})
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("refund %s: %w", id, ErrNotFound)
	}
	return r, err
}

// RefundByReference finds a gateway's refund by our reference.
func (s *Store) RefundByReference(ctx context.Context, gatewayID, reference string) (*cauri.Refund, error) {
	if !storable(reference) {
		return nil, fmt.Errorf("refund %s: %w", printable(reference), ErrNotFound)
	}
	var r *cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		r, err = scanRefund(t.queryRow(ctx, `SELECT `+refundColumns+` FROM refunds WHERE reference = ? AND gateway_id = ?`,
			reference, gatewayID))
		return err
	})
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("refund %s: %w", printable(reference), ErrNotFound)
	}
	return r, err
}

// RefundByTransfer finds the refund a transfer pays back, ErrNotFound for
// a transfer of no refund.
func (s *Store) RefundByTransfer(ctx context.Context, transferID string) (*cauri.Refund, error) {
	var r *cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		r, err = scanRefund(t.queryRow(ctx, `SELECT `+refundColumns+` FROM refunds WHERE transfer_id = ?`, transferID))
		return err
	})
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("refund of transfer %s: %w", printable(transferID), ErrNotFound)
	}
	return r, err
}

// SessionRefunds lists a session's refunds, oldest first.
func (s *Store) SessionRefunds(ctx context.Context, sessionID string) ([]*cauri.Refund, error) {
	var out []*cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = t.sessionRefunds(ctx, sessionID)
		return err
	})
	return out, err
}

// RefundFilter selects a page of a workspace's refunds: of one session
// and of one status when set, after the refund After (the last of the
// previous page) when set, at most Limit.
type RefundFilter struct {
	SessionID string
	Status    cauri.RefundStatus
	After     string
	Limit     int
}

// Refunds lists a workspace's refunds of one mode, newest first, a page
// at a time: the page after f.After is read from where that refund sits in
// the order (created_at, id), so no page costs more than its rows. An
// After that is not one of the workspace's refunds of this mode is
// ErrNotFound.
func (s *Store) Refunds(ctx context.Context, workspaceID string, livemode bool, f RefundFilter) ([]*cauri.Refund, error) {
	q := `SELECT ` + refundColumns + ` FROM refunds WHERE workspace_id = ? AND livemode = ?`
	args := []any{workspaceID, livemode}
	if f.SessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, f.SessionID)
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	var out []*cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		if f.After != "" {
			var created int64
			err := t.queryRow(ctx, `SELECT created_at FROM refunds WHERE id = ? AND workspace_id = ? AND livemode = ?`,
				f.After, workspaceID, livemode).Scan(&created)
			if err == sql.ErrNoRows {
				return fmt.Errorf("refund %s: %w", printable(f.After), ErrNotFound)
			}
			if err != nil {
				return err
			}
			q += ` AND (created_at < ? OR created_at = ? AND id < ?)`
			args = append(args, created, created, f.After)
		}
		q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
		out, err = queryAll(ctx, t, scanRefund, q, append(args, f.Limit)...)
		return err
	})
	return out, err
}

// MarkRefundInitiated records that a refund's call has returned (or its
// transfer was created), with the aggregator's own id when it gave one and
// the transfer's id for a refund by payout.
func (s *Store) MarkRefundInitiated(ctx context.Context, id string, now time.Time, providerRef, transferID string) error {
	_, err := s.update(ctx, `UPDATE refunds SET initiated_at = ?, provider_ref = CASE WHEN ? = '' THEN provider_ref ELSE ? END,
		transfer_id = CASE WHEN ? = '' THEN transfer_id ELSE ? END WHERE id = ?`,
		micros(now), providerRef, providerRef, transferID, transferID, id)
	return err
}

// AdoptOrphanRefund marks initiated, at now, a pending refund whose call
// never recorded its end, if nobody has: it reports whether this caller
// won it (and so may send it again).
func (s *Store) AdoptOrphanRefund(ctx context.Context, id string, now time.Time) (bool, error) {
	n, err := s.update(ctx, `UPDATE refunds SET initiated_at = ?, checked_at = ? WHERE id = ? AND status = ? AND initiated_at IS NULL`,
		micros(now), micros(now), id, string(cauri.RefundPending))
	return n == 1, err
}

// OrphanRefunds lists up to limit pending refunds created before cutoff
// whose call never recorded its end (a crash between the commit and the
// aggregator's answer).
func (s *Store) OrphanRefunds(ctx context.Context, cutoff time.Time, limit int) ([]*cauri.Refund, error) {
	var out []*cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanRefund, `SELECT `+refundColumns+` FROM refunds
			WHERE status = ? AND initiated_at IS NULL AND created_at < ? ORDER BY created_at LIMIT ?`,
			string(cauri.RefundPending), micros(cutoff), limit)
		return err
	})
	return out, err
}

// DueRefunds is DueAttempts for refunds.
func (s *Store) DueRefunds(ctx context.Context, now time.Time, minWait, maxWait time.Duration, limit int) ([]*cauri.Refund, error) {
	var out []*cauri.Refund
	err := s.read(ctx, func(t *tx) (err error) {
		q, args := dueQuery(refundColumns, "refunds", string(cauri.RefundPending), now, minWait, maxWait, limit)
		out, err = queryAll(ctx, t, scanRefund, q, args...)
		return err
	})
	return out, err
}

// ClaimRefundCheck is ClaimAttemptCheck for refunds.
func (s *Store) ClaimRefundCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error) {
	return s.claimCheck(ctx, "refunds", string(cauri.RefundPending), id, now, every)
}

// ClaimRefundCallbackCheck is ClaimCallbackCheck for refunds.
func (s *Store) ClaimRefundCallbackCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error) {
	return s.claimCallbackCheck(ctx, "refunds", string(cauri.RefundPending), id, now, every)
}

// FinishRefund ends a pending refund under its session's lock: fn sees
// the refund, its session and the session's refunds (the refund among
// them) as they are under the lock, sets the refund's outcome in place
// (and the session's REFUNDED status when the domain says so) and returns
// the event of the end. The refund, the session's change through the path
// every session change takes (its counts), and the event are written in
// one transaction. A refund no longer pending is left alone (fn is not
// called), and so is one fn leaves pending: a late or repeated outcome
// changes nothing. It returns the refund as it is after, and whether this
// call ended it.
func (s *Store) FinishRefund(ctx context.Context, id string, fn func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) (*cauri.Event, error)) (*cauri.Refund, bool, error) {
	var r *cauri.Refund
	changed := false
	err := s.tx(ctx, func(t *tx) error {
		var sessionID string
		if err := t.queryRow(ctx, `SELECT session_id FROM refunds WHERE id = ?`, id).Scan(&sessionID); err == sql.ErrNoRows {
			return fmt.Errorf("refund %s: %w", printable(id), ErrNotFound)
		} else if err != nil {
			return err
		}
		// The session first, as CreateRefund locks it: one lock order.
		sess, err := scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = ?`+s.forUpdate(), sessionID))
		if err != nil {
			return err
		}
		refunds, err := t.sessionRefunds(ctx, sessionID)
		if err != nil {
			return err
		}
		for _, o := range refunds {
			if o.ID == id {
				r = o
			}
		}
		if r == nil {
			return fmt.Errorf("refund %s: %w", printable(id), ErrNotFound)
		}
		if r.Status != cauri.RefundPending {
			return nil
		}
		was := sess.Status
		ev, err := fn(r, sess, refunds)
		if err != nil || r.Status == cauri.RefundPending {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE refunds SET status = ?, provider_ref = ?, failure_code = ?, failure_message = ?,
			updated_at = ?, completed_at = ? WHERE id = ?`, string(r.Status), r.ProviderRef, r.FailureCode, r.FailureMessage,
			micros(r.UpdatedAt), nullMicros(r.CompletedAt), r.ID); err != nil {
			return err
		}
		changed = true
		if sess.Status != was {
			return t.saveSessionStatus(ctx, sess, was, ev)
		}
		if ev != nil {
			return t.insertEvent(ctx, ev)
		}
		return nil
	})
	return r, changed, err
}
