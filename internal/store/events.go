package store

import (
	"context"

	"github.com/cauri-pay/cauri"
)

func (t *tx) insertEvent(ctx context.Context, ev *cauri.Event) error {
	_, err := t.exec(ctx, `INSERT INTO events (id, workspace_id, livemode, type, session_id, transfer_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, ev.WorkspaceID, ev.Livemode, ev.Type, nullString(ev.SessionID), nullString(ev.TransferID), string(ev.Data), micros(ev.CreatedAt))
	return err
}

// SessionEvents lists the events of a session, oldest first.
func (s *Store) SessionEvents(ctx context.Context, sessionID string) ([]*cauri.Event, error) {
	var events []*cauri.Event
	err := s.tx(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT id, workspace_id, livemode, type, COALESCE(session_id, ''), COALESCE(transfer_id, ''), data, created_at
			FROM events WHERE session_id = ? ORDER BY created_at, id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ev cauri.Event
			var data string
			var created int64
			if err := rows.Scan(&ev.ID, &ev.WorkspaceID, &ev.Livemode, &ev.Type, &ev.SessionID, &ev.TransferID, &data, &created); err != nil {
				return err
			}
			ev.Data, ev.CreatedAt = []byte(data), fromMicros(created)
			events = append(events, &ev)
		}
		return rows.Err()
	})
	return events, err
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
