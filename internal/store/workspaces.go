package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/vault"
)

// errNotFound is ErrNotFound, with the message a client may be shown
// ("Session cs_... not found": what was asked, never more).
func errNotFound(format string, args ...any) error {
	return &cauri.Error{Code: cauri.ENotFound, Message: fmt.Sprintf(format, args...), Cause: ErrNotFound}
}

// storable reports whether s, taken from outside (an aggregator's
// callback), can be looked up at all: valid UTF-8 without a NUL byte
// (PostgreSQL refuses both in a text parameter) and of a reference's size.
// Anything else names nothing: not found, without a query.
func storable(s string) bool {
	return s != "" && len(s) <= 255 && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// printable quotes an id taken from a request for an error message.
func printable(id string) string { return cauri.Printable(id) }

// CreateWorkspace stores a workspace with its keys (audited).
func (s *Store) CreateWorkspace(ctx context.Context, ws *cauri.Workspace, keys []*cauri.Key) error {
	return s.tx(ctx, func(t *tx) error { return t.createWorkspace(ctx, ws, keys) })
}

// createWorkspace is CreateWorkspace in the caller's transaction.
func (t *tx) createWorkspace(ctx context.Context, ws *cauri.Workspace, keys []*cauri.Key) error {
	if _, err := t.exec(ctx, `INSERT INTO workspaces (id, name, verified, connect, default_currency, created_at, transfers_closed, transfer_daily_cap, partner_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ws.ID, ws.Name, ws.Verified, ws.Connect, string(ws.DefaultCurrency), micros(ws.CreatedAt), ws.TransfersClosed, ws.TransferDailyCap, ws.PartnerID); err != nil {
		return err
	}
	for _, k := range keys {
		if err := t.insertKey(ctx, k); err != nil {
			return err
		}
	}
	return t.audit(ctx, ws.CreatedAt, "workspace.created", ws.ID, map[string]any{"name": ws.Name, "verified": ws.Verified, "connect": ws.Connect,
		"partner": ws.PartnerID})
}

// Provision is what a partner's new merchant is made of: its workspace and
// keys, its webhook settings, and its owner (a user with a password hash,
// or an invitation with its link's token).
type Provision struct {
	Workspace    *cauri.Workspace
	Keys         []*cauri.Key
	Webhook      *cauri.WebhookConfig // nil: none
	Owner        *cauri.User          // with PasswordHash; nil when invited
	PasswordHash string
	Invitation   *cauri.Invitation // with Token; nil when Owner is set
	Token        string
}

// ProvisionWorkspace stores a new merchant whole, in one transaction:
// nothing of it exists unless all of it does.
func (s *Store) ProvisionWorkspace(ctx context.Context, p Provision) error {
	return s.tx(ctx, func(t *tx) error {
		if err := t.createWorkspace(ctx, p.Workspace, p.Keys); err != nil {
			return err
		}
		if p.Webhook != nil {
			if err := t.saveWebhookConfig(ctx, p.Workspace.ID, p.Webhook); err != nil {
				return err
			}
		}
		if p.Owner != nil {
			_, err := t.addMember(ctx, p.Owner, p.PasswordHash, p.Workspace.ID)
			return err
		}
		if p.Invitation != nil {
			return t.insertInvitation(ctx, p.Invitation, p.Token)
		}
		return nil
	})
}

const workspaceColumns = `w.id, w.name, w.verified, w.connect, w.default_currency, w.created_at, w.transfers_closed, w.transfer_daily_cap, w.partner_id`

func scanWorkspace(row interface{ Scan(...any) error }, extra ...any) (*cauri.Workspace, error) {
	var ws cauri.Workspace
	var cur string
	var created int64
	if err := row.Scan(append([]any{&ws.ID, &ws.Name, &ws.Verified, &ws.Connect, &cur, &created, &ws.TransfersClosed, &ws.TransferDailyCap, &ws.PartnerID}, extra...)...); err != nil {
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
// test-only mode, and its live keys now create live objects. Audited, as
// every administrative change below.
func (s *Store) VerifyWorkspace(ctx context.Context, id string, now time.Time) (*cauri.Workspace, error) {
	return s.setWorkspace(ctx, id, "verified", true, now)
}

// SetTransfersClosed closes (or reopens) transfers on a workspace: a
// closed workspace's transfers are refused with transferts_inactifs.
func (s *Store) SetTransfersClosed(ctx context.Context, id string, closed bool, now time.Time) (*cauri.Workspace, error) {
	return s.setWorkspace(ctx, id, "transfers_closed", closed, now)
}

// SetTransferDailyCap sets how many transfers a workspace may create per
// day (the caller checks the number: transfer.Service.SetDailyCap).
func (s *Store) SetTransferDailyCap(ctx context.Context, id string, cap int, now time.Time) (*cauri.Workspace, error) {
	return s.setWorkspace(ctx, id, "transfer_daily_cap", cap, now)
}

// SetConnect marks a workspace Connect (its money is held by the service:
// it collects through the platform's gateways into its balance, and has no
// transfers), or unmarks it.
func (s *Store) SetConnect(ctx context.Context, id string, connect bool, now time.Time) (*cauri.Workspace, error) {
	return s.setWorkspace(ctx, id, "connect", connect, now)
}

// setWorkspace sets one administrative column of a workspace, audited as
// "workspace.<column>".
func (s *Store) setWorkspace(ctx context.Context, id, column string, value any, now time.Time) (*cauri.Workspace, error) {
	if !cauri.IsID("ws_", id) {
		return nil, errNotFound("Workspace %s not found", printable(id))
	}
	if err := s.tx(ctx, func(t *tx) error { return t.setWorkspace(ctx, id, column, value, now) }); err != nil {
		return nil, err
	}
	return s.Workspace(ctx, id)
}

// setWorkspace is Store.setWorkspace in the caller's transaction.
func (t *tx) setWorkspace(ctx context.Context, id, column string, value any, now time.Time) error {
	res, err := t.exec(ctx, `UPDATE workspaces SET `+column+` = ? WHERE id = ?`, value, id)
	if err != nil {
		return err
	}
	t.keysChanged() // Authenticate returns the workspace's row
	if n, _ := res.RowsAffected(); n == 0 {
		return errNotFound("Workspace %s not found", id)
	}
	return t.audit(ctx, now, "workspace."+column, id, map[string]any{column: value})
}

// UpdateWorkspace changes, in one transaction, a workspace's name (when
// name is not "", audited) and its webhook settings (fn, when not nil).
func (s *Store) UpdateWorkspace(ctx context.Context, id, name string, fn func(*cauri.WebhookConfig) error, now time.Time) (*cauri.Workspace, error) {
	if !cauri.IsID("ws_", id) {
		return nil, errNotFound("Workspace %s not found", printable(id))
	}
	err := s.tx(ctx, func(t *tx) error {
		if name != "" {
			if err := t.setWorkspace(ctx, id, "name", name, now); err != nil {
				return err
			}
		}
		if fn == nil {
			return nil
		}
		c, err := t.webhookConfig(ctx, id, true)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		return t.saveWebhookConfig(ctx, id, c)
	})
	if err != nil {
		return nil, err
	}
	return s.Workspace(ctx, id)
}

// Workspaces lists every workspace, newest first (the administration's list).
func (s *Store) Workspaces(ctx context.Context) ([]*cauri.Workspace, error) {
	var out []*cauri.Workspace
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*cauri.Workspace, error) { return scanWorkspace(row) },
			`SELECT `+workspaceColumns+` FROM workspaces w ORDER BY w.created_at DESC, w.id`)
		return err
	})
	return out, err
}

// Authenticate finds the workspace and key of an API key by its hash,
// in memory while CacheKeys runs (see keyCache). An unknown key, or a
// rolled one past its grace period, is ENotFound.
func (s *Store) Authenticate(ctx context.Context, apiKey string, now time.Time) (*cauri.Workspace, *cauri.Key, error) {
	hash := vault.HashKey(apiKey)
	ws, k, ok, gen := s.cachedKey(hash, now)
	if ok {
		return ws, k, nil
	}
	k = &cauri.Key{}
	var revoked *int64
	err := s.read(ctx, func(t *tx) error {
		var kind string
		var created int64
		var err error
		ws, err = scanWorkspace(t.queryRow(ctx, `SELECT `+workspaceColumns+`, k.id, k.kind, k.live, k.created_at, k.revoked_at
			FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
			WHERE k.hash = ? AND (k.revoked_at IS NULL OR k.revoked_at > ?)`, hash, micros(now)), &k.ID, &kind, &k.Live, &created, &revoked)
		if err != nil {
			return notFound(err, "key not found")
		}
		k.Kind, k.WorkspaceID, k.CreatedAt = cauri.KeyKind(kind), ws.ID, fromMicros(created)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	e := cachedKey{ws: *ws, key: *k}
	if revoked != nil {
		e.until = *revoked
	}
	s.keys.put(hash, gen, e)
	return ws, k, nil
}
