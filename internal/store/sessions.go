package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/search"
)

const sessionColumns = `id, workspace_id, livemode, status, amount, currency, customer_name, customer_email,
	customer_phone, description, success_url, cancel_url, merchant_name, merchant_logo, metadata, provider,
	created_at, updated_at, completed_at, link_id, expires_at`

// qualifiedSessionColumns are sessionColumns of the table named s.
var qualifiedSessionColumns = qualify("s", sessionColumns)

func scanSession(row interface{ Scan(...any) error }) (*cauri.Session, error) {
	var s cauri.Session
	var status, cur, md string
	var created, updated, expires int64
	var completed sql.NullInt64
	if err := row.Scan(&s.ID, &s.WorkspaceID, &s.Livemode, &status, &s.Amount, &cur, &s.CustomerName, &s.CustomerEmail,
		&s.CustomerPhone, &s.Description, &s.SuccessURL, &s.CancelURL, &s.MerchantName, &s.MerchantLogo, &md, &s.Provider,
		&created, &updated, &completed, &s.LinkID, &expires); err != nil {
		return nil, err
	}
	s.Status, s.Currency = cauri.SessionStatus(status), cauri.Currency(cur)
	if err := json.Unmarshal([]byte(md), &s.Metadata); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt, s.CompletedAt = fromMicros(created), fromMicros(updated), fromNullMicros(completed)
	s.ExpiresAt = fromMicros(expires)
	if expires == 0 { // written by a node older than expires_at (a rolling deploy): the rule it followed
		s.ExpiresAt = s.CreatedAt.Add(cauri.SessionLifetime)
	}
	return &s, nil
}

// Idempotency names the key of a create request and the fingerprint of its
// normalised parameters.
type Idempotency struct {
	Key         string
	Fingerprint string
}

// CreateSession stores a new session. With an idempotency key, the key and
// the session are written in one transaction: a replay (same key, same
// fingerprint) returns the session the key first created and replayed=true;
// concurrent requests with one key create exactly one session.
func (s *Store) CreateSession(ctx context.Context, sess *cauri.Session, idem *Idempotency) (_ *cauri.Session, replayed bool, err error) {
	md, err := json.Marshal(sess.Metadata)
	if err != nil {
		return nil, false, err
	}
	var existing string
	err = s.tx(ctx, func(t *tx) error {
		if idem != nil {
			existing, err = t.claimIdempotencyKey(ctx, sess.WorkspaceID, sess.Livemode, idem, "checkout.session", sess.ID, sess.CreatedAt)
			if err != nil || existing != "" {
				return err
			}
		}
		_, err := t.exec(ctx, `INSERT INTO checkout_sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sess.ID, sess.WorkspaceID, sess.Livemode, string(sess.Status), sess.Amount, string(sess.Currency), sess.CustomerName,
			sess.CustomerEmail, sess.CustomerPhone, sess.Description, sess.SuccessURL, sess.CancelURL, sess.MerchantName,
			sess.MerchantLogo, string(md), sess.Provider, micros(sess.CreatedAt), micros(sess.UpdatedAt), nullMicros(sess.CompletedAt),
			sess.LinkID, micros(sess.ExpiresAt))
		if err != nil {
			return err
		}
		t.countSession(sess, sess.Status, 1)
		return t.addSearchTerms(ctx, sess, search.SessionTerms(sess))
	})
	if err != nil {
		return nil, false, err
	}
	if existing != "" {
		prev, err := s.Session(ctx, existing)
		return prev, true, err
	}
	return sess, false, nil
}

// SessionByIdempotencyKey finds the session an idempotency key created,
// checking that the request is the same (ErrIdempotencyMismatch
// otherwise); nil when the key is unknown or forgotten.
func (s *Store) SessionByIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *Idempotency, now time.Time) (*cauri.Session, error) {
	id, err := s.keyedResource(ctx, workspaceID, livemode, idem, now, "checkout.session")
	if err != nil || id == "" {
		return nil, err
	}
	return s.Session(ctx, id)
}

// Session reads a session by id alone: the hosted page and the sandbox
// route know only the id. Callers with a key check the owner themselves.
func (s *Store) Session(ctx context.Context, id string) (*cauri.Session, error) {
	if !cauri.IsID("cs_", id) {
		return nil, errNotFound("Session %s not found", printable(id))
	}
	sess, ok, gen := s.cachedSession(id)
	if ok {
		return sess, nil
	}
	err := s.read(ctx, func(t *tx) (err error) {
		sess, err = scanSession(t.queryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = ?`, id))
		return notFound(err, "Session %s not found", id)
	})
	if err != nil {
		return nil, err
	}
	s.cacheSession(sess, gen)
	return sess, nil
}

// UpdateSession changes a session under a row lock: fn sees the current
// session and its workspace, changes the session in place and returns the
// event the change emits (or nil). The update and the event are committed
// together, or neither is when fn returns an error.
func (s *Store) UpdateSession(ctx context.Context, id string, fn func(*cauri.Session, *cauri.Workspace) (*cauri.Event, error)) (*cauri.Session, error) {
	if !cauri.IsID("cs_", id) {
		return nil, errNotFound("Session %s not found", printable(id))
	}
	var sess *cauri.Session
	err := s.tx(ctx, func(t *tx) error {
		var ws *cauri.Workspace
		var err error
		if sess, ws, err = t.sessionForUpdate(ctx, id); err != nil {
			return notFound(err, "Session %s not found", id)
		}
		was := sess.Status
		ev, err := fn(sess, ws)
		if err != nil {
			return err
		}
		return t.saveSessionStatus(ctx, sess, was, ev)
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// PurgeTestData deletes the test-mode sessions (those of payment links
// too) with their attempts, refunds and search terms, the test events, deliveries, notifications,
// transfers and idempotency keys created before cutoff (SPEC 1: test data
// is purged after 90 days), and returns how many rows went. Live data is
// never touched. It deletes a batch at a time, each batch its own short
// transaction, so that writers wait for a batch at most, never for the
// whole purge; a purge cut short leaves whole rows and is finished by the
// next.
func (s *Store) PurgeTestData(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	// The deliveries before their events; the attempts go with their
	// sessions (they name them).
	for _, table := range []string{"notifications", "webhook_deliveries", "events", "checkout_sessions", "transfers"} {
		for {
			var m int64
			err := s.tx(ctx, func(t *tx) error {
				ids, err := t.oldTestRows(ctx, table, cutoff)
				if err != nil || len(ids) == 0 {
					return err
				}
				in := placeholders(len(ids))
				if table == "checkout_sessions" { // with their refunds and attempts
					t.sessionsDeleted()
					for _, children := range []string{"refunds", "payment_attempts", "search_terms"} {
						res, err := t.exec(ctx, `DELETE FROM `+children+` WHERE session_id IN (`+in+`)`, anys(ids)...)
						if err != nil {
							return err
						}
						if children != "search_terms" { // an index's rows, not data
							rows, _ := res.RowsAffected()
							m += rows
						}
					}
				}
				res, err := t.exec(ctx, `DELETE FROM `+table+` WHERE id IN (`+in+`)`, anys(ids)...)
				if err != nil {
					return err
				}
				rows, _ := res.RowsAffected()
				m += rows
				return nil
			})
			if err != nil {
				return n, err
			}
			n += m
			if m == 0 {
				break
			}
		}
	}
	// The test idempotency keys (the hourly purge takes every key after 24
	// hours: none is left this old but after a long stop), and the
	// overview's test counts of the days before the cutoff's (the overview
	// shows 30 days at most: the cutoff's own day is never shown).
	m, err := s.update(ctx, `DELETE FROM idempotency_keys WHERE livemode = false AND created_at < ?`, micros(cutoff))
	if err != nil {
		return n, err
	}
	_, err = s.update(ctx, `DELETE FROM payment_rollups WHERE livemode = false AND day < ?`, dayOf(cutoff))
	return n + m, err
}

// oldTestRows reads the keys of a batch of table's test rows created
// before cutoff, through the table's partial index of test rows (the mode
// is a literal, as such an index needs).
func (t *tx) oldTestRows(ctx context.Context, table string, cutoff time.Time) ([]string, error) {
	return queryAll(ctx, t, func(row interface{ Scan(...any) error }) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT id FROM `+table+` WHERE livemode = false AND created_at < ? LIMIT ?`, micros(cutoff), purgeBatch)
}

// purgeBatch is how many rows of a table one transaction of a purge
// deletes (a variable for the tests of the batches).
var purgeBatch = 1000

// PurgeIdempotencyKeys deletes the keys created before cutoff and returns
// how many went.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.update(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, micros(cutoff))
}

// saveSessionStatus writes a session's new status (it was was) with the
// event the change emits (nil: none) and the change of the overview's
// counts, in the caller's transaction; when the domain says the
// new state credits the workspace's balance (cauri.CreditsBalance), the
// credit is written then too.
func (t *tx) saveSessionStatus(ctx context.Context, sess *cauri.Session, was cauri.SessionStatus, ev *cauri.Event) error {
	t.sessionChanged(sess.ID)
	const update = `UPDATE checkout_sessions SET status = ?, provider = ?, updated_at = ?, completed_at = ? WHERE id = ?`
	args := []any{string(sess.Status), sess.Provider, micros(sess.UpdatedAt), nullMicros(sess.CompletedAt), sess.ID}
	// The workspace's Connect flag: read in this transaction already (the
	// update then waits to go with the next statement), or read with the
	// update (no extra round trip).
	var connect bool
	if ws := t.workspaces[sess.WorkspaceID]; ws != nil {
		connect = ws.Connect
		if err := t.execLater(ctx, "checkout_sessions:"+sess.ID, update, args...); err != nil {
			return err
		}
	} else if err := t.queryRow(ctx, update+`
		RETURNING (SELECT w.connect FROM workspaces w WHERE w.id = checkout_sessions.workspace_id)`, args...).Scan(&connect); err != nil {
		return err
	}
	t.moveSession(sess, was)
	if cauri.CreditsBalance(sess, connect) {
		if err := t.creditConnect(ctx, sess); err != nil {
			return err
		}
	}
	if ev != nil {
		return t.insertEvent(ctx, ev)
	}
	return nil
}
