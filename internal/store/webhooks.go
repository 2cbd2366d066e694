package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
)

func (t *tx) webhookConfig(ctx context.Context, workspaceID string, lock bool) (*cauri.WebhookConfig, error) {
	lockClause := ""
	if lock {
		lockClause = t.s.forUpdate()
	}
	var h hookFields
	err := t.queryRow(ctx, `SELECT `+hookColumns+` FROM workspaces w WHERE w.id = ?`+lockClause, workspaceID).Scan(h.targets()...)
	if err != nil {
		return nil, notFound(err, "Workspace %s not found", printable(workspaceID))
	}
	return h.config(), nil
}

// hookColumns are a workspace's webhook settings, read into hookFields.
const hookColumns = `w.webhook_url, w.test_webhook_url, w.webhook_events, w.test_webhook_events`

type hookFields struct{ url, testURL, events, testEvents string }

func (h *hookFields) targets() []any { return []any{&h.url, &h.testURL, &h.events, &h.testEvents} }

func (h *hookFields) config() *cauri.WebhookConfig {
	c := &cauri.WebhookConfig{URL: h.url, TestURL: h.testURL}
	if h.events != "" {
		c.Events = strings.Split(h.events, ",")
	}
	if h.testEvents != "" {
		c.TestEvents = strings.Split(h.testEvents, ",")
	}
	return c
}

// sessionForUpdate reads a session, locked for the transaction's update,
// with its workspace and the workspace's webhook settings, in one
// statement: the settings serve the deliveries of the events the
// transaction then writes, without a read of their own.
func (t *tx) sessionForUpdate(ctx context.Context, id string) (*cauri.Session, *cauri.Workspace, error) {
	lock := "" // SQLite: the transaction holds the write lock already
	if t.s.kind == config.Postgres {
		lock = " FOR UPDATE OF s" // the session's row, not the workspace's
	}
	row := t.queryRow(ctx, `SELECT `+qualifiedSessionColumns+`, `+workspaceColumns+`, `+hookColumns+`
		FROM checkout_sessions s JOIN workspaces w ON w.id = s.workspace_id WHERE s.id = ?`+lock, id)
	// One Scan fills the three: the workspace's scan asks for its columns
	// and the settings', the session's for its own before them.
	var h hookFields
	var sess *cauri.Session
	ws, err := scanWorkspace(scanFunc(func(wsDests ...any) (err error) {
		sess, err = scanSession(scanFunc(func(sessDests ...any) error {
			return row.Scan(append(sessDests, wsDests...)...)
		}))
		return err
	}), h.targets()...)
	if err != nil {
		return nil, nil, err
	}
	t.hooks = map[string]*cauri.WebhookConfig{ws.ID: h.config()}
	t.workspaces = map[string]*cauri.Workspace{ws.ID: ws}
	return sess, ws, nil
}

// scanFunc is a Scan method of a function, to fill several scans' values
// from one row.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// WebhookConfig reads a workspace's webhook settings.
func (s *Store) WebhookConfig(ctx context.Context, workspaceID string) (*cauri.WebhookConfig, error) {
	var c *cauri.WebhookConfig
	err := s.read(ctx, func(t *tx) (err error) {
		c, err = t.webhookConfig(ctx, workspaceID, false)
		return err
	})
	return c, err
}

// UpdateWebhookConfig changes a workspace's webhook settings: fn edits the
// current ones in place, under the workspace's row lock.
func (s *Store) UpdateWebhookConfig(ctx context.Context, workspaceID string, fn func(*cauri.WebhookConfig) error) (*cauri.WebhookConfig, error) {
	var c *cauri.WebhookConfig
	err := s.tx(ctx, func(t *tx) (err error) {
		if c, err = t.webhookConfig(ctx, workspaceID, true); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		return t.saveWebhookConfig(ctx, workspaceID, c)
	})
	return c, err
}

// saveWebhookConfig writes a workspace's webhook settings in the caller's
// transaction.
func (t *tx) saveWebhookConfig(ctx context.Context, workspaceID string, c *cauri.WebhookConfig) error {
	_, err := t.exec(ctx, `UPDATE workspaces SET webhook_url = ?, test_webhook_url = ?, webhook_events = ?, test_webhook_events = ? WHERE id = ?`,
		c.URL, c.TestURL, strings.Join(c.Events, ","), strings.Join(c.TestEvents, ","), workspaceID)
	return err
}

// maxAttempts is the number of automatic attempts a new delivery gets.
func (s *Store) maxAttempts() int {
	if s.DeliveryAttempts > 0 {
		return s.DeliveryAttempts
	}
	return len(cauri.DefaultRetrySchedule)
}

// enqueueDelivery creates the delivery of an event that was just written,
// in the same transaction, when the workspace has an address for the
// event's mode and selects the event. It is due at once.
func (t *tx) enqueueDelivery(ctx context.Context, ev *cauri.Event) error {
	cfg := t.hooks[ev.WorkspaceID]
	if cfg == nil {
		var err error
		if cfg, err = t.webhookConfig(ctx, ev.WorkspaceID, false); err != nil {
			return err
		}
	}
	url := cfg.URLFor(ev.Livemode)
	if url == "" || !cfg.Selects(ev.Type, ev.Livemode) {
		return nil
	}
	return t.execLater(ctx, "", `INSERT INTO webhook_deliveries (id, workspace_id, event_id, event, livemode, url, status, max_attempts,
		next_attempt_at, transaction_id, transfer_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		cauri.NewLogID("whd_", ev.CreatedAt), ev.WorkspaceID, ev.ID, ev.Type, ev.Livemode, url, string(cauri.DeliveryPending), t.s.maxAttempts(),
		micros(ev.CreatedAt), nullString(ev.SessionID), nullString(ev.TransferID), micros(ev.CreatedAt))
}

const deliveryColumns = `id, workspace_id, event_id, event, livemode, url, status, attempts, auto_attempts, max_attempts,
	next_attempt_at, last_status_code, last_error, response_ms, COALESCE(transaction_id, ''), COALESCE(transfer_id, ''),
	created_at, delivered_at`

func scanDelivery(row interface{ Scan(...any) error }) (*cauri.Delivery, error) {
	var d cauri.Delivery
	var status string
	var next, delivered sql.NullInt64
	var code sql.NullInt64
	var lastErr sql.NullString
	var created int64
	if err := row.Scan(&d.ID, &d.WorkspaceID, &d.EventID, &d.Event, &d.Livemode, &d.URL, &status, &d.Attempts, &d.AutoAttempts,
		&d.MaxAttempts, &next, &code, &lastErr, &d.ResponseMS, &d.TransactionID, &d.TransferID, &created, &delivered); err != nil {
		return nil, err
	}
	d.Status = cauri.DeliveryStatus(status)
	d.NextAttemptAt, d.DeliveredAt, d.CreatedAt = fromNullMicros(next), fromNullMicros(delivered), fromMicros(created)
	if code.Valid {
		c := int(code.Int64)
		d.LastStatusCode = &c
	}
	if lastErr.Valid {
		d.LastError = &lastErr.String
	}
	return &d, nil
}

// Endpoint is a workspace's webhook address of one mode: the unit the
// worker shares its slots by.
type Endpoint struct {
	WorkspaceID string
	Livemode    bool
}

// DueEndpoints lists the endpoints with deliveries pending, not leased,
// whose time came in (since, now] (since zero: any time up to now), at
// most limit. Asked for the window since its last look, the worker's cost
// follows the new deliveries, not the backlog; asked from the start now
// and then, it finds what a window missed (a lease that expired on a node
// that died). Deliveries in flight (leased) do not make their endpoint
// due again. The status is a literal, so that the pending rows' partial
// index (webhook_deliveries_due) can serve the query.
func (s *Store) DueEndpoints(ctx context.Context, since, now time.Time, limit int) ([]Endpoint, error) {
	args := []any{micros(since), micros(now), micros(now), limit}
	if s.kind == config.Postgres {
		// Planned at each call, for the table as it is: a connection's
		// cached plan of this poll, made while the table was empty, was
		// a scan of the whole table (free then), and stayed one after a
		// million deliveries came in until statistics invalidated it
		// (200 ms a pass with autovacuum off). A plan costs tens of µs.
		args = append([]any{pgx.QueryExecModeExec}, args...)
	}
	var out []Endpoint
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (Endpoint, error) {
			var e Endpoint
			return e, row.Scan(&e.WorkspaceID, &e.Livemode)
		}, `SELECT DISTINCT workspace_id, livemode FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ? AND next_attempt_at <= ?
			AND (locked_until IS NULL OR locked_until < ?) LIMIT ?`, args...)
		return err
	})
	return out, err
}

// maxEndpointsPerQuery bounds the endpoints of one DueDeliveries statement
// (SQLite takes at most 500 terms in a compound SELECT).
const maxEndpointsPerQuery = 100

// DueDeliveries lists, for each endpoint of want, up to its count of the
// deliveries due at now and not leased, oldest first: one indexed look-up
// per endpoint in the pending rows' partial index
// (webhook_deliveries_endpoint_due), whatever the backlog or history.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, want map[Endpoint]int) ([]*cauri.Delivery, error) {
	eps := make([]Endpoint, 0, len(want))
	for ep, n := range want {
		if n > 0 {
			eps = append(eps, ep)
		}
	}
	var out []*cauri.Delivery
	err := s.read(ctx, func(t *tx) error {
		for len(eps) > 0 {
			part := eps[:min(len(eps), maxEndpointsPerQuery)]
			eps = eps[len(part):]
			var q strings.Builder
			var args []any
			for i, ep := range part {
				if i > 0 {
					q.WriteString(" UNION ALL ")
				}
				fmt.Fprintf(&q, `SELECT * FROM (SELECT %s FROM webhook_deliveries WHERE workspace_id = ? AND livemode = ? AND status = 'pending'
					AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?) ORDER BY next_attempt_at, id LIMIT ?) AS d%d`, deliveryColumns, i)
				args = append(args, ep.WorkspaceID, ep.Livemode, micros(now), micros(now), want[ep])
			}
			due, err := queryAll(ctx, t, scanDelivery, q.String(), args...)
			if err != nil {
				return err
			}
			out = append(out, due...)
		}
		return nil
	})
	return out, err
}

// ClaimDeliveries leases the given deliveries, those still due and not
// leased, to the caller until until, in one statement found by primary key
// (the conditions are written so that no index on them can be chosen: the
// status index made the planners read the whole backlog, under SQLite's
// write lock), and returns the
// lease's token with the ids it got (none when other workers, of any node,
// hold them all). A worker that dies holding a lease loses it when the
// lease expires, and the delivery is attempted again: none is lost. Only
// the holder of the current token settles a delivery (see DeliveryAttempt.Lease).
func (s *Store) ClaimDeliveries(ctx context.Context, ids []string, now, until time.Time) (string, []string, error) {
	if len(ids) == 0 {
		return "", nil, nil
	}
	token := cauri.NewID("lease_")
	args := append([]any{micros(until), token}, anys(ids)...)
	args = append(args, string(cauri.DeliveryPending), micros(now), micros(now))
	var claimed []string
	err := s.tx(ctx, func(t *tx) (err error) {
		claimed, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (string, error) {
			var id string
			return id, row.Scan(&id)
		}, `UPDATE webhook_deliveries SET locked_until = ?, lease_token = ?
			WHERE id IN (`+placeholders(len(ids))+`) AND status || '' = ? AND next_attempt_at + 0 <= ?
			AND (locked_until IS NULL OR locked_until < ?) RETURNING id`, args...)
		return err
	})
	if err != nil || len(claimed) == 0 {
		return "", nil, err
	}
	return token, claimed, nil
}

// DeliveryTarget is what one attempt needs, read afresh at every attempt:
// the delivery, the workspace's current address for its mode, the secret
// keys of its mode that work now (to sign), and the event.
type DeliveryTarget struct {
	Delivery *cauri.Delivery
	URL      string
	Secrets  []string // newest first: a rolled key signs too until it expires
	Event    *cauri.Event
	// Problem says why the delivery cannot be sent at all (no secret key
	// of its mode, its event gone); the attempt records it as its error.
	Problem string
}

// DeliveryTarget reads what an attempt of delivery id needs.
func (s *Store) DeliveryTarget(ctx context.Context, id string, now time.Time) (*DeliveryTarget, error) {
	tgs, err := s.DeliveryTargets(ctx, []string{id}, now)
	if err != nil {
		return nil, err
	}
	if len(tgs) == 0 {
		return nil, errNotFound("Delivery %s not found", printable(id))
	}
	return tgs[0], nil
}

// DeliveryTargets reads what the attempts of several deliveries need, in
// four statements whatever their number: the deliveries, their events, the
// workspaces' addresses and their secret keys (each opened once). A delivery
// that no longer exists is left out; the others keep the order of ids.
func (s *Store) DeliveryTargets(ctx context.Context, ids []string, now time.Time) ([]*DeliveryTarget, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []*DeliveryTarget
	err := s.read(ctx, func(t *tx) error {
		deliveries, err := queryAll(ctx, t, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id IN (`+placeholders(len(ids))+`)`, anys(ids)...)
		if err != nil {
			return err
		}
		byID := map[string]*cauri.Delivery{}
		var eventIDs []string
		for _, d := range deliveries {
			byID[d.ID] = d
			eventIDs = append(eventIDs, d.EventID)
		}
		events := map[string]*cauri.Event{}
		if len(eventIDs) > 0 {
			list, err := queryAll(ctx, t, scanEvent, `SELECT `+eventColumns+` FROM events WHERE id IN (`+placeholders(len(eventIDs))+`)`, anys(eventIDs)...)
			if err != nil {
				return err
			}
			for _, ev := range list {
				events[ev.ID] = ev
			}
		}
		signing, err := t.signing(ctx, deliveries, now)
		if err != nil {
			return err
		}
		for _, id := range ids {
			d := byID[id]
			if d == nil {
				continue
			}
			sg := signing[Endpoint{d.WorkspaceID, d.Livemode}]
			tg := &DeliveryTarget{Delivery: d, URL: sg.url, Secrets: sg.secrets, Problem: sg.problem, Event: events[d.EventID]}
			if tg.Event == nil {
				tg.Problem = "Event " + d.EventID + " not found"
			}
			out = append(out, tg)
		}
		return nil
	})
	return out, err
}

// signing is an endpoint's address and the secret keys of its mode that
// work now, newest first (webhooks are signed with each: SPEC section 5,
// item 8); problem says why there are none.
type signing struct {
	url     string
	secrets []string
	problem string
}

// signing reads the signing of the deliveries' endpoints in two
// statements, whatever their number: the workspaces' addresses, and their
// secret keys (opened with the vault).
func (t *tx) signing(ctx context.Context, deliveries []*cauri.Delivery, now time.Time) (map[Endpoint]*signing, error) {
	var wsIDs []string
	out := map[Endpoint]*signing{}
	for _, d := range deliveries {
		ep := Endpoint{d.WorkspaceID, d.Livemode}
		if out[ep] == nil {
			out[ep] = &signing{}
			wsIDs = append(wsIDs, d.WorkspaceID)
		}
	}
	if len(wsIDs) == 0 {
		return out, nil
	}
	slices.Sort(wsIDs)
	wsIDs = slices.Compact(wsIDs)
	type address struct{ id, live, test string }
	addrs, err := queryAll(ctx, t, func(row interface{ Scan(...any) error }) (address, error) {
		var a address
		return a, row.Scan(&a.id, &a.live, &a.test)
	}, `SELECT id, webhook_url, test_webhook_url FROM workspaces WHERE id IN (`+placeholders(len(wsIDs))+`)`, anys(wsIDs)...)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if sg := out[Endpoint{a.id, true}]; sg != nil {
			sg.url = (&cauri.WebhookConfig{URL: a.live, TestURL: a.test}).URLFor(true)
		}
		if sg := out[Endpoint{a.id, false}]; sg != nil {
			sg.url = (&cauri.WebhookConfig{URL: a.live, TestURL: a.test}).URLFor(false)
		}
	}
	type sealedKey struct {
		ep         Endpoint
		id, sealed string
	}
	keys, err := queryAll(ctx, t, func(row interface{ Scan(...any) error }) (sealedKey, error) {
		var k sealedKey
		return k, row.Scan(&k.ep.WorkspaceID, &k.ep.Livemode, &k.id, &k.sealed)
	}, `SELECT workspace_id, live, id, sealed FROM api_keys WHERE workspace_id IN (`+placeholders(len(wsIDs))+`) AND kind = ?
		AND (revoked_at IS NULL OR revoked_at > ?) ORDER BY created_at DESC, id`, append(anys(wsIDs), string(cauri.KeySecret), micros(now))...)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		sg := out[k.ep]
		if sg == nil {
			continue // a mode none of the deliveries has
		}
		secret, err := t.s.vault.Open(k.sealed, k.id)
		if err != nil {
			return nil, err
		}
		sg.secrets = append(sg.secrets, secret)
	}
	for ep, sg := range out {
		if len(sg.secrets) == 0 {
			sg.problem = fmt.Sprintf("Workspace %s has no secret key for this mode", printable(ep.WorkspaceID))
		}
	}
	return out, nil
}

// placeholders is n comma-separated placeholders; anys, a list as a
// query's arguments.
func placeholders(n int) string { return "?" + strings.Repeat(", ?", n-1) }

func anys[T any](list []T) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}

// DeliveryAttempt is the outcome of one attempt to deliver.
type DeliveryAttempt struct {
	At         time.Time
	URL        string
	StatusCode int    // 0 when no answer came
	Error      string // timeout, network error, or why the answer is not an acknowledgement
	ResponseMS int
	Delivered  bool // a 2xx came back
	// Manual marks a resend: it neither moves the automatic schedule nor
	// fails the delivery.
	Manual bool
	// Lease is the token of the automatic attempt's claim. If the lease
	// has meanwhile passed to another worker, or a resend has delivered,
	// the attempt is recorded like a resend: it changes no state.
	Lease string
	// NextAt is when to try again after a failed automatic attempt; nil when
	// it was the last one, which fails the delivery.
	NextAt *time.Time
}

// RecordDeliveryAttempt writes an attempt's outcome. An automatic attempt that
// still holds its lease settles the delivery and releases the lease: a 2xx
// delivers; a failure schedules the next attempt, or fails the delivery and
// raises a dashboard notification after the last. A resend's 2xx delivers
// too; any other outcome (a failed resend, or an automatic attempt whose
// lease has passed to another worker or whose delivery a resend has
// delivered meanwhile) is recorded in the counters without changing the
// state.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, id string, a DeliveryAttempt) (*cauri.Delivery, error) {
	batch := []Recorded{{ID: id, Attempt: a}}
	if err := s.RecordDeliveryAttempts(ctx, batch); err != nil {
		return nil, err
	}
	return batch[0].Delivery, batch[0].Err
}

// Recorded is one attempt's outcome in a batch: the delivery and what
// became of it (Err: it was not recorded).
type Recorded struct {
	ID       string
	Attempt  DeliveryAttempt
	Delivery *cauri.Delivery
	Err      error
}

// RecordDeliveryAttempts writes several attempts' outcomes as
// RecordDeliveryAttempt does, in one transaction of a few statements
// however many: the deliveries are read (and locked, on PostgreSQL) in one,
// in one order so that two nodes' batches never wait on each other in a
// cycle; their new states are written in one. A delivery that no longer
// exists is left out (its Err set); any other error records none.
func (s *Store) RecordDeliveryAttempts(ctx context.Context, batch []Recorded) error {
	if len(batch) == 0 {
		return nil
	}
	ids := make([]string, 0, len(batch))
	for _, r := range batch {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	return s.tx(ctx, func(t *tx) error {
		type leased struct {
			d       *cauri.Delivery
			token   sql.NullString
			release bool
		}
		rows, err := queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*leased, error) {
			var l leased
			var err error
			l.d, err = scanDelivery(withLeaseToken{row, &l.token})
			return &l, err
		}, `SELECT `+deliveryColumns+`, lease_token FROM webhook_deliveries WHERE id IN (`+placeholders(len(ids))+`) ORDER BY id`+t.s.forUpdate(), anys(ids)...)
		if err != nil {
			return err
		}
		byID := make(map[string]*leased, len(rows))
		for _, l := range rows {
			byID[l.d.ID] = l
		}
		for i := range batch {
			r := &batch[i]
			l := byID[r.ID]
			if l == nil {
				r.Err = errNotFound("Delivery %s not found", printable(r.ID))
				continue
			}
			// In turn, as if each had its own transaction: the same
			// delivery twice in a batch sees the first outcome.
			held, failed := settleAttempt(l.d, &l.token, r.Attempt)
			l.release = l.release || held
			if failed {
				d := l.d
				if _, err := t.exec(ctx, `INSERT INTO notifications (id, workspace_id, livemode, kind, delivery_id, message, created_at)
					VALUES (?, ?, ?, ?, ?, ?, ?)`, cauri.NewID("ntf_"), d.WorkspaceID, d.Livemode, NotificationDeliveryFailed, d.ID,
					"Webhook "+d.Event+" could not be delivered to "+d.URL+" after "+strconv.Itoa(d.AutoAttempts)+" attempts", micros(r.Attempt.At)); err != nil {
					return err
				}
			}
			d := *l.d
			r.Delivery = &d
		}
		if len(rows) == 0 {
			return nil
		}
		var q strings.Builder
		q.WriteString(`WITH v (id, release_lease, status, attempts, auto_attempts, url, next_attempt_at, last_status_code, last_error, response_ms, delivered_at) AS (VALUES `)
		args := make([]any, 0, 11*len(rows))
		for i, l := range rows {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(`(CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS TEXT),
				CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT))`)
			d, release := l.d, 0
			if l.release {
				release = 1
			}
			args = append(args, d.ID, release, string(d.Status), d.Attempts, d.AutoAttempts, d.URL, nullMicros(d.NextAttemptAt),
				d.LastStatusCode, d.LastError, d.ResponseMS, nullMicros(d.DeliveredAt))
		}
		q.WriteString(`) UPDATE webhook_deliveries SET
			locked_until = CASE WHEN v.release_lease = 1 THEN NULL ELSE webhook_deliveries.locked_until END,
			lease_token = CASE WHEN v.release_lease = 1 THEN NULL ELSE webhook_deliveries.lease_token END,
			status = v.status, attempts = v.attempts, auto_attempts = v.auto_attempts, url = v.url, next_attempt_at = v.next_attempt_at,
			last_status_code = v.last_status_code, last_error = v.last_error, response_ms = v.response_ms, delivered_at = v.delivered_at
			FROM v WHERE webhook_deliveries.id = v.id`)
		_, err = t.exec(ctx, q.String(), args...)
		return err
	})
}

// settleAttempt applies an attempt's outcome to d, whose lease token is
// token, and reports whether the attempt held the lease (which it then
// releases) and whether it failed the delivery. An automatic attempt that
// holds it settles the delivery: a 2xx delivers; a failure schedules the
// next attempt, or fails the delivery after the last. A resend's 2xx
// delivers too; any other outcome changes only the counters and the last
// answer.
func settleAttempt(d *cauri.Delivery, token *sql.NullString, a DeliveryAttempt) (held, failed bool) {
	holdsLease := !a.Manual && d.Status == cauri.DeliveryPending && token.Valid && token.String == a.Lease
	d.Attempts++
	d.URL, d.ResponseMS = a.URL, a.ResponseMS
	d.LastStatusCode, d.LastError = nil, nil
	if a.StatusCode != 0 {
		code := a.StatusCode
		d.LastStatusCode = &code
	}
	if a.Error != "" {
		msg := a.Error
		d.LastError = &msg
	}
	switch {
	case a.Delivered:
		at := a.At
		d.Status, d.DeliveredAt, d.NextAttemptAt = cauri.DeliveryDelivered, &at, nil
	case !holdsLease:
	case a.NextAt != nil:
		next := *a.NextAt
		d.Status, d.NextAttemptAt = cauri.DeliveryPending, &next
	default:
		d.Status, d.NextAttemptAt, failed = cauri.DeliveryFailed, nil, true
	}
	if holdsLease {
		d.AutoAttempts++
		*token = sql.NullString{}
	}
	return holdsLease, failed
}

// withLeaseToken scans a delivery's columns followed by its lease token.
type withLeaseToken struct {
	row   interface{ Scan(...any) error }
	token *sql.NullString
}

func (w withLeaseToken) Scan(dest ...any) error { return w.row.Scan(append(dest, w.token)...) }

// NotificationDeliveryFailed is the kind of notification a failed delivery raises.
const NotificationDeliveryFailed = "webhook.delivery_failed"

// DeliveryFilter narrows a delivery list. Empty fields do not filter.
type DeliveryFilter struct {
	TransactionID string
	Status        string
	Event         string
	Limit         int
}

// Deliveries lists a workspace's deliveries of one mode, newest first.
func (s *Store) Deliveries(ctx context.Context, workspaceID string, livemode bool, f DeliveryFilter) ([]*cauri.Delivery, error) {
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries WHERE workspace_id = ? AND livemode = ?`
	args := []any{workspaceID, livemode}
	for _, c := range []struct{ col, val string }{{"transaction_id", f.TransactionID}, {"status", f.Status}, {"event", f.Event}} {
		if c.val != "" {
			q += " AND " + c.col + " = ?"
			args = append(args, c.val)
		}
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, f.Limit)
	var out []*cauri.Delivery
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanDelivery, q, args...)
		return err
	})
	return out, err
}

// Delivery reads one delivery of a workspace in one mode; any other is not found.
func (s *Store) Delivery(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error) {
	if !cauri.IsID("whd_", id) {
		return nil, errNotFound("Delivery %s not found", printable(id))
	}
	var d *cauri.Delivery
	err := s.read(ctx, func(t *tx) (err error) {
		d, err = scanDelivery(t.queryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
			WHERE id = ? AND workspace_id = ? AND livemode = ?`, id, workspaceID, livemode))
		return notFound(err, "Delivery %s not found", id)
	})
	return d, err
}

// Notification is a message for the merchant's dashboard.
type Notification struct {
	ID         string
	Kind       string
	Livemode   bool
	DeliveryID string
	Message    string
	CreatedAt  time.Time
}

// UnreadCountCap bounds the count of unread notifications a page shows
// ("1000+" beyond it): the count reads no more of them than that.
const UnreadCountCap = 1000

// UnreadNotifications lists a workspace's unread notifications of one
// mode, newest first, at most limit, and how many are unread (at most
// UnreadCountCap): read through the index of unread ones alone, however
// many the workspace dismissed before.
func (s *Store) UnreadNotifications(ctx context.Context, workspaceID string, livemode bool, limit int) ([]Notification, int, error) {
	var out []Notification
	var unread int
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (Notification, error) {
			var n Notification
			var created int64
			err := row.Scan(&n.ID, &n.Kind, &n.Livemode, &n.DeliveryID, &n.Message, &created)
			n.CreatedAt = fromMicros(created)
			return n, err
		}, `SELECT id, kind, livemode, COALESCE(delivery_id, ''), message, created_at FROM notifications
			WHERE workspace_id = ? AND livemode = ? AND read_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?`, workspaceID, livemode, limit)
		if err != nil {
			return err
		}
		return t.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM notifications
			WHERE workspace_id = ? AND livemode = ? AND read_at IS NULL LIMIT ?) AS u`, workspaceID, livemode, UnreadCountCap).Scan(&unread)
	})
	return out, unread, err
}

// AcknowledgeAllNotifications marks every unread notification of a
// workspace's mode read, and returns how many.
func (s *Store) AcknowledgeAllNotifications(ctx context.Context, workspaceID string, livemode bool, now time.Time) (int64, error) {
	return s.update(ctx, `UPDATE notifications SET read_at = ? WHERE workspace_id = ? AND livemode = ? AND read_at IS NULL`,
		micros(now), workspaceID, livemode)
}

// AcknowledgeNotification marks a workspace's notification read.
func (s *Store) AcknowledgeNotification(ctx context.Context, workspaceID, id string, now time.Time) error {
	if !cauri.IsID("ntf_", id) {
		return errNotFound("No unread notification %s", printable(id))
	}
	n, err := s.update(ctx, `UPDATE notifications SET read_at = ? WHERE id = ? AND workspace_id = ? AND read_at IS NULL`,
		micros(now), id, workspaceID)
	if err == nil && n == 0 {
		return errNotFound("No unread notification %s", printable(id))
	}
	return err
}

// InsertTestEvent writes an event tied to no payment (the dashboard's test
// webhook) and its delivery to url, whatever the event selection, in one
// transaction: a delivery of at most maxAttempts automatic attempts, due at
// once. It returns the delivery's id.
func (s *Store) InsertTestEvent(ctx context.Context, ev *cauri.Event, url string, maxAttempts int) (string, error) {
	id := cauri.NewLogID("whd_", ev.CreatedAt)
	err := s.tx(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO events (id, workspace_id, livemode, type, session_id, transfer_id, data, created_at) VALUES (?, ?, ?, ?, NULL, NULL, ?, ?)`,
			ev.ID, ev.WorkspaceID, ev.Livemode, ev.Type, string(ev.Data), micros(ev.CreatedAt)); err != nil {
			return err
		}
		_, err := t.exec(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, event_id, event, livemode, url, status, max_attempts,
			next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, ev.WorkspaceID, ev.ID, ev.Type, ev.Livemode, url, string(cauri.DeliveryPending), maxAttempts, micros(ev.CreatedAt), micros(ev.CreatedAt))
		return err
	})
	return id, err
}
