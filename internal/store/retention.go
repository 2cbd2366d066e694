package store

import (
	"context"
	"time"
)

// PurgeEventLog deletes, of every workspace and both modes, the webhook
// deliveries that ended (delivered or failed) and the events created before
// cutoff, and the dashboard's notifications of that age, and returns how
// many rows went (CAURI_EVENT_RETENTION: the log of what was notified, not
// the payments, refunds and transfers, which are kept). An event a
// delivery still retries is kept until the delivery ends. Each workspace's
// rows go a batch at a time through the indexes the lists read (by
// workspace and creation time), each batch its own transaction: writers
// wait for a batch at most, and the purge costs what it deletes.
func (s *Store) PurgeEventLog(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	for after := ""; ; {
		var workspaces []string // a page of them, by id
		err := s.read(ctx, func(t *tx) (err error) {
			workspaces, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (string, error) {
				var id string
				return id, row.Scan(&id)
			}, `SELECT id FROM workspaces WHERE id > ? ORDER BY id LIMIT ?`, after, purgeBatch)
			return err
		})
		if err != nil || len(workspaces) == 0 {
			return n, err
		}
		after = workspaces[len(workspaces)-1]
		m, err := s.purgeEventLogOf(ctx, workspaces, cutoff)
		n += m
		if err != nil {
			return n, err
		}
	}
}

// endedDeliveries deletes a batch of a workspace's deliveries of one mode
// that ended before a time.
const endedDeliveries = `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE workspace_id = ? AND livemode = ?
	AND created_at < ? AND status <> 'pending' LIMIT ?)`

// purgeEventLogOf is PurgeEventLog for some workspaces.
func (s *Store) purgeEventLogOf(ctx context.Context, workspaces []string, cutoff time.Time) (int64, error) {
	var n int64
	for _, ws := range workspaces {
		for _, step := range []struct {
			q    string
			args []any
		}{
			{endedDeliveries, []any{ws, true, micros(cutoff), purgeBatch}},
			{endedDeliveries, []any{ws, false, micros(cutoff), purgeBatch}}, // each mode along the list's index
			{`DELETE FROM events WHERE id IN (SELECT e.id FROM events e WHERE e.workspace_id = ? AND e.created_at < ?
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending') LIMIT ?)`, []any{ws, micros(cutoff), purgeBatch}},
			{`DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE workspace_id = ? AND created_at < ? LIMIT ?)`,
				[]any{ws, micros(cutoff), purgeBatch}},
		} {
			for {
				m, err := s.update(ctx, step.q, step.args...)
				if err != nil {
					return n, err
				}
				n += m
				if m == 0 {
					break
				}
			}
		}
	}
	return n, nil
}
