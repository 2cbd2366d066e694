package store

import (
	"context"

	"github.com/cauri-pay/cauri"
)

// insertEvent writes an event and, in the same transaction, its webhook
// delivery: a committed state change always has both, or neither.
func (t *tx) insertEvent(ctx context.Context, ev *cauri.Event) error {
	err := t.execLater(ctx, "", `INSERT INTO events (id, workspace_id, livemode, type, session_id, transfer_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, ev.WorkspaceID, ev.Livemode, ev.Type, nullString(ev.SessionID), nullString(ev.TransferID), string(ev.Data), micros(ev.CreatedAt))
	if err != nil {
		return err
	}
	return t.enqueueDelivery(ctx, ev)
}

const eventColumns = `id, workspace_id, livemode, type, COALESCE(session_id, ''), COALESCE(transfer_id, ''), data, created_at`

func scanEvent(row interface{ Scan(...any) error }) (*cauri.Event, error) {
	var ev cauri.Event
	var data string
	var created int64
	if err := row.Scan(&ev.ID, &ev.WorkspaceID, &ev.Livemode, &ev.Type, &ev.SessionID, &ev.TransferID, &data, &created); err != nil {
		return nil, err
	}
	ev.Data, ev.CreatedAt = []byte(data), fromMicros(created)
	return &ev, nil
}

func (t *tx) event(ctx context.Context, id string) (*cauri.Event, error) {
	ev, err := scanEvent(t.queryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, id))
	return ev, notFound(err, "Event %s not found", id)
}

// SessionEvents lists the events of a session, oldest first.
func (s *Store) SessionEvents(ctx context.Context, sessionID string) ([]*cauri.Event, error) {
	var events []*cauri.Event
	err := s.read(ctx, func(t *tx) (err error) {
		events, err = queryAll(ctx, t, scanEvent, `SELECT `+eventColumns+` FROM events WHERE session_id = ? ORDER BY created_at, id`, sessionID)
		return err
	})
	return events, err
}

// TransferEvents lists the events of a transfer, oldest first.
func (s *Store) TransferEvents(ctx context.Context, transferID string) ([]*cauri.Event, error) {
	var events []*cauri.Event
	err := s.read(ctx, func(t *tx) (err error) {
		events, err = queryAll(ctx, t, scanEvent, `SELECT `+eventColumns+` FROM events WHERE transfer_id = ? ORDER BY created_at, id`, transferID)
		return err
	})
	return events, err
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
