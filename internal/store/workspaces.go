package store

import (
	"context"
	"strconv"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/vault"
)

func errNotFound(format string, args ...any) error {
	return cauri.Errorf(cauri.ENotFound, format, args...)
}

// printable quotes an id taken from a request for an error message.
func printable(id string) string {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	q := strconv.Quote(id)
	return q[1 : len(q)-1]
}

// CreateWorkspace stores a workspace with its keys.
func (s *Store) CreateWorkspace(ctx context.Context, ws *cauri.Workspace, keys []*cauri.Key) error {
	return s.tx(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO workspaces (id, name, verified, connect, default_currency, created_at, transfers_closed, transfer_daily_cap)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			ws.ID, ws.Name, ws.Verified, ws.Connect, string(ws.DefaultCurrency), micros(ws.CreatedAt), ws.TransfersClosed, ws.TransferDailyCap); err != nil {
			return err
		}
		for _, k := range keys {
			if err := t.insertKey(ctx, k); err != nil {
				return err
			}
		}
		return nil
	})
}

const workspaceColumns = `w.id, w.name, w.verified, w.connect, w.default_currency, w.created_at, w.transfers_closed, w.transfer_daily_cap`

func scanWorkspace(row interface{ Scan(...any) error }, extra ...any) (*cauri.Workspace, error) {
	var ws cauri.Workspace
	var cur string
	var created int64
	if err := row.Scan(append([]any{&ws.ID, &ws.Name, &ws.Verified, &ws.Connect, &cur, &created, &ws.TransfersClosed, &ws.TransferDailyCap}, extra...)...); err != nil {
		return nil, err
	}
	ws.DefaultCurrency = cauri.Currency(cur)
	ws.CreatedAt = fromMicros(created)
	return &ws, nil
}

// Workspace reads one workspace.
func (s *Store) Workspace(ctx context.Context, id string) (*cauri.Workspace, error) {
	if !cauri.IsID("ws_", id) {
		return nil, errNotFound("Workspace %s not found", printable(id))
	}
	var ws *cauri.Workspace
	err := s.read(ctx, func(t *tx) (err error) {
		ws, err = scanWorkspace(t.queryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces w WHERE w.id = ?`, id))
		return notFound(err, "Workspace %s not found", id)
	})
	return ws, err
}

// VerifyWorkspace marks a workspace's identity verified: it leaves
// test-only mode, and its live keys now create live objects.
func (s *Store) VerifyWorkspace(ctx context.Context, id string) (*cauri.Workspace, error) {
	return s.setWorkspace(ctx, id, "verified", true)
}

// SetTransfersClosed closes (or reopens) transfers on a workspace: a
// closed workspace's transfers are refused with transferts_inactifs.
func (s *Store) SetTransfersClosed(ctx context.Context, id string, closed bool) (*cauri.Workspace, error) {
	return s.setWorkspace(ctx, id, "transfers_closed", closed)
}

// SetTransferDailyCap sets how many transfers a workspace may create per day.
func (s *Store) SetTransferDailyCap(ctx context.Context, id string, cap int) (*cauri.Workspace, error) {
	if cap < 0 {
		return nil, cauri.Errorf(cauri.EInvalid, "the daily cap must be 0 or more")
	}
	return s.setWorkspace(ctx, id, "transfer_daily_cap", cap)
}

// setWorkspace sets one administrative column of a workspace.
func (s *Store) setWorkspace(ctx context.Context, id, column string, value any) (*cauri.Workspace, error) {
	if !cauri.IsID("ws_", id) {
		return nil, errNotFound("Workspace %s not found", printable(id))
	}
	n, err := s.update(ctx, `UPDATE workspaces SET `+column+` = ? WHERE id = ?`, value, id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errNotFound("Workspace %s not found", id)
	}
	return s.Workspace(ctx, id)
}

// Authenticate finds the workspace and key of an API key by its hash.
// An unknown key, or a rolled one past its grace period, is ENotFound.
func (s *Store) Authenticate(ctx context.Context, apiKey string, now time.Time) (*cauri.Workspace, *cauri.Key, error) {
	var ws *cauri.Workspace
	var k cauri.Key
	err := s.read(ctx, func(t *tx) error {
		var kind string
		var created int64
		var err error
		ws, err = scanWorkspace(t.queryRow(ctx, `SELECT `+workspaceColumns+`, k.id, k.kind, k.live, k.created_at
			FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
			WHERE k.hash = ? AND (k.revoked_at IS NULL OR k.revoked_at > ?)`, vault.HashKey(apiKey), micros(now)), &k.ID, &kind, &k.Live, &created)
		if err != nil {
			return notFound(err, "key not found")
		}
		k.Kind, k.WorkspaceID, k.CreatedAt = cauri.KeyKind(kind), ws.ID, fromMicros(created)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ws, &k, nil
}
