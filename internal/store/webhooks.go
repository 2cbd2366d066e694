package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
)

func (t *tx) webhookConfig(ctx context.Context, workspaceID string, lock bool) (*cauri.WebhookConfig, error) {
	var c cauri.WebhookConfig
	var events, testEvents string
	lockClause := ""
	if lock {
		lockClause = t.s.forUpdate()
	}
	err := t.queryRow(ctx, `SELECT webhook_url, test_webhook_url, webhook_events, test_webhook_events FROM workspaces WHERE id = ?`+lockClause,
		workspaceID).Scan(&c.URL, &c.TestURL, &events, &testEvents)
	if err != nil {
		return nil, notFound(err, "Workspace %s not found", printable(workspaceID))
	}
	if events != "" {
		c.Events = strings.Split(events, ",")
	}
	if testEvents != "" {
		c.TestEvents = strings.Split(testEvents, ",")
	}
	return &c, nil
}

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
	cfg, err := t.webhookConfig(ctx, ev.WorkspaceID, false)
	if err != nil {
		return err
	}
	url := cfg.URLFor(ev.Livemode)
	if url == "" || !cfg.Selects(ev.Type, ev.Livemode) {
		return nil
	}
	_, err = t.exec(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, event_id, event, livemode, url, status, max_attempts,
		next_attempt_at, transaction_id, transfer_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		cauri.NewID("whd_"), ev.WorkspaceID, ev.ID, ev.Type, ev.Livemode, url, string(cauri.DeliveryPending), t.s.maxAttempts(),
		micros(ev.CreatedAt), nullString(ev.SessionID), nullString(ev.TransferID), micros(ev.CreatedAt))
	return err
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

// DueEndpoints lists the endpoints with deliveries pending whose time came
// in (since, now] (since zero: any time up to now), at most limit. Asked
// for the window since its last look, the worker's cost follows the new
// deliveries, not the backlog; asked from the start now and then, it
// finds what a window missed (a lease that expired on a node that died).
func (s *Store) DueEndpoints(ctx context.Context, since, now time.Time, limit int) ([]Endpoint, error) {
	var out []Endpoint
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (Endpoint, error) {
			var e Endpoint
			return e, row.Scan(&e.WorkspaceID, &e.Livemode)
		}, `SELECT DISTINCT workspace_id, livemode FROM webhook_deliveries WHERE status = ? AND next_attempt_at > ? AND next_attempt_at <= ? LIMIT ?`,
			string(cauri.DeliveryPending), micros(since), micros(now), limit)
		return err
	})
	return out, err
}

// maxEndpointsPerQuery bounds the endpoints of one DueDeliveries statement
// (SQLite takes at most 500 terms in a compound SELECT).
const maxEndpointsPerQuery = 100

// DueDeliveries lists, for each endpoint of want, up to its count of the
// deliveries due at now and not leased, oldest first: one indexed look-up
// per endpoint (webhook_deliveries_endpoint_due), whatever the backlog.
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
				fmt.Fprintf(&q, `SELECT * FROM (SELECT %s FROM webhook_deliveries WHERE workspace_id = ? AND livemode = ? AND status = ?
					AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?) ORDER BY next_attempt_at, id LIMIT ?) AS d%d`, deliveryColumns, i)
				args = append(args, ep.WorkspaceID, ep.Livemode, string(cauri.DeliveryPending), micros(now), micros(now), want[ep])
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
// leased, to the caller until until, in one statement, and returns the
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
			WHERE id IN (`+placeholders(len(ids))+`) AND status = ? AND next_attempt_at <= ?
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
// one read of a few statements whatever their number: the deliveries, their
// events, and each workspace's address and keys (opened once). A delivery
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
		type signing struct {
			url     string
			secrets []string
			problem string
		}
		seen := map[Endpoint]*signing{}
		for _, id := range ids {
			d := byID[id]
			if d == nil {
				continue
			}
			ep := Endpoint{d.WorkspaceID, d.Livemode}
			sg := seen[ep]
			if sg == nil {
				sg = &signing{}
				cfg, err := t.webhookConfig(ctx, d.WorkspaceID, false)
				if err != nil {
					return err
				}
				sg.url = cfg.URLFor(d.Livemode)
				if sg.secrets, err = t.signingSecrets(ctx, d.WorkspaceID, d.Livemode, now); err != nil {
					if cauri.ErrorCode(err) != cauri.ENotFound {
						return err
					}
					sg.problem = cauri.ErrorMessage(err)
				}
				seen[ep] = sg
			}
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

// signingSecrets opens the secret keys of a mode that work at now, newest
// first: webhooks of that mode are signed with each (SPEC section 5, item 8).
func (t *tx) signingSecrets(ctx context.Context, workspaceID string, live bool, now time.Time) ([]string, error) {
	type sealedKey struct{ id, sealed string }
	keys, err := queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*sealedKey, error) {
		var k sealedKey
		return &k, row.Scan(&k.id, &k.sealed)
	}, `SELECT id, sealed FROM api_keys WHERE workspace_id = ? AND kind = ? AND live = ? AND (revoked_at IS NULL OR revoked_at > ?)
		ORDER BY created_at DESC, id`, workspaceID, string(cauri.KeySecret), live, micros(now))
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errNotFound("Workspace %s has no secret key for this mode", printable(workspaceID))
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		if out[i], err = t.s.vault.Open(k.sealed, k.id); err != nil {
			return nil, err
		}
	}
	return out, nil
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
	var d *cauri.Delivery
	err := s.tx(ctx, func(t *tx) (err error) {
		d, err = t.recordDeliveryAttempt(ctx, id, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
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
// RecordDeliveryAttempt does, in one transaction (one commit, however
// many). A delivery that no longer exists is left out (its Err set); any
// other error records none.
func (s *Store) RecordDeliveryAttempts(ctx context.Context, batch []Recorded) error {
	return s.tx(ctx, func(t *tx) error {
		if s.kind == config.Postgres && len(batch) > 1 {
			// Lock the batch's rows in one statement, in one order (two
			// nodes' batches never wait on each other in a cycle).
			ids := make([]string, len(batch))
			for i, r := range batch {
				ids[i] = r.ID
			}
			sort.Strings(ids)
			if _, err := t.exec(ctx, `SELECT id FROM webhook_deliveries WHERE id IN (`+placeholders(len(ids))+`) ORDER BY id FOR UPDATE`, anys(ids)...); err != nil {
				return err
			}
		}
		for i := range batch {
			r := &batch[i]
			r.Delivery, r.Err = t.recordDeliveryAttempt(ctx, r.ID, r.Attempt)
			if r.Err != nil && !errors.Is(r.Err, ErrNotFound) {
				return r.Err
			}
		}
		return nil
	})
}

func (t *tx) recordDeliveryAttempt(ctx context.Context, id string, a DeliveryAttempt) (*cauri.Delivery, error) {
	var token sql.NullString
	d, err := scanDelivery(withLeaseToken{t.queryRow(ctx, `SELECT `+deliveryColumns+`, lease_token FROM webhook_deliveries WHERE id = ?`+t.s.forUpdate(), id), &token})
	if err != nil {
		return nil, notFound(err, "Delivery %s not found", printable(id))
	}
	holdsLease := !a.Manual && d.Status == cauri.DeliveryPending && token.Valid && token.String == a.Lease
	d.Attempts++
	d.URL, d.ResponseMS = a.URL, a.ResponseMS
	d.LastStatusCode, d.LastError = nil, nil
	if a.StatusCode != 0 {
		d.LastStatusCode = &a.StatusCode
	}
	if a.Error != "" {
		d.LastError = &a.Error
	}
	switch {
	case a.Delivered:
		at := a.At
		d.Status, d.DeliveredAt, d.NextAttemptAt = cauri.DeliveryDelivered, &at, nil
	case !holdsLease:
	case a.NextAt != nil:
		d.Status, d.NextAttemptAt = cauri.DeliveryPending, a.NextAt
	default:
		d.Status, d.NextAttemptAt = cauri.DeliveryFailed, nil
		if _, err := t.exec(ctx, `INSERT INTO notifications (id, workspace_id, livemode, kind, delivery_id, message, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, cauri.NewID("ntf_"), d.WorkspaceID, d.Livemode, NotificationDeliveryFailed, d.ID,
			"Webhook "+d.Event+" could not be delivered to "+d.URL+" after "+strconv.Itoa(d.AutoAttempts+1)+" attempts", micros(a.At)); err != nil {
			return nil, err
		}
	}
	lease := "" // a resend, or a stale attempt: the lease stays its holder's
	if holdsLease {
		d.AutoAttempts++
		lease = "locked_until = NULL, lease_token = NULL, "
	}
	_, err = t.exec(ctx, `UPDATE webhook_deliveries SET `+lease+`status = ?, attempts = ?, auto_attempts = ?, url = ?,
		next_attempt_at = ?, last_status_code = ?, last_error = ?, response_ms = ?, delivered_at = ? WHERE id = ?`,
		string(d.Status), d.Attempts, d.AutoAttempts, d.URL, nullMicros(d.NextAttemptAt), d.LastStatusCode, d.LastError,
		d.ResponseMS, nullMicros(d.DeliveredAt), d.ID)
	if err != nil {
		return nil, err
	}
	return d, nil
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
	Read       bool // acknowledged by the merchant
}

// Notifications lists a workspace's notifications, newest first.
func (s *Store) Notifications(ctx context.Context, workspaceID string) ([]Notification, error) {
	var out []Notification
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (Notification, error) {
			var n Notification
			var created int64
			var read sql.NullInt64
			err := row.Scan(&n.ID, &n.Kind, &n.Livemode, &n.DeliveryID, &n.Message, &created, &read)
			n.CreatedAt, n.Read = fromMicros(created), read.Valid
			return n, err
		}, `SELECT id, kind, livemode, COALESCE(delivery_id, ''), message, created_at, read_at FROM notifications
			WHERE workspace_id = ? ORDER BY created_at DESC, id DESC`, workspaceID)
		return err
	})
	return out, err
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
