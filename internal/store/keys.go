package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/vault"
)

// insertKey stores a key as a hash (to find it) and sealed under the
// master key (to sign webhooks); its plaintext is not stored.
func (t *tx) insertKey(ctx context.Context, k *cauri.Key) error {
	_, err := t.exec(ctx, `INSERT INTO api_keys (id, workspace_id, kind, live, hash, sealed, last4, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.WorkspaceID, string(k.Kind), k.Live, vault.HashKey(k.Plaintext), t.s.vault.Seal(k.Plaintext, k.ID), k.Last4, micros(k.CreatedAt))
	return err
}

// Keys lists a workspace's keys that still work at now, live before test,
// secret before public, newest first.
func (s *Store) Keys(ctx context.Context, workspaceID string, now time.Time) ([]*cauri.Key, error) {
	var out []*cauri.Key
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanKey, `SELECT id, workspace_id, kind, live, last4, created_at, revoked_at FROM api_keys
			WHERE workspace_id = ? AND (revoked_at IS NULL OR revoked_at > ?)
			ORDER BY live DESC, kind DESC, created_at DESC, id`, workspaceID, micros(now))
		return err
	})
	return out, err
}

func scanKey(row interface{ Scan(...any) error }) (*cauri.Key, error) {
	var k cauri.Key
	var kind string
	var created int64
	var expires *int64
	if err := row.Scan(&k.ID, &k.WorkspaceID, &kind, &k.Live, &k.Last4, &created, &expires); err != nil {
		return nil, err
	}
	k.Kind, k.CreatedAt = cauri.KeyKind(kind), fromMicros(created)
	if expires != nil {
		e := fromMicros(*expires)
		k.ExpiresAt = &e
	}
	return &k, nil
}

// RollKey replaces a workspace's key of one kind and mode: a new key is
// made (its plaintext is in the result, to be shown once), and the keys it
// replaces keep working for grace (0: they stop at once), never longer
// than they already would. The roll is audited. The kind and the grace
// are the caller's to check (accounts.Service.RollKey).
func (s *Store) RollKey(ctx context.Context, workspaceID string, kind cauri.KeyKind, live bool, grace time.Duration, now time.Time) (*cauri.Key, error) {
	if !cauri.IsID("ws_", workspaceID) {
		return nil, errNotFound("Workspace %s not found", printable(workspaceID))
	}
	k := cauri.NewKey(workspaceID, kind, live, now)
	err := s.tx(ctx, func(t *tx) error {
		var id string
		if err := t.queryRow(ctx, `SELECT id FROM workspaces WHERE id = ?`, workspaceID).Scan(&id); err != nil {
			return notFound(err, "Workspace %s not found", workspaceID)
		}
		end := micros(now.Add(grace))
		res, err := t.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE workspace_id = ? AND kind = ? AND live = ?
			AND (revoked_at IS NULL OR revoked_at > ?)`, end, workspaceID, string(kind), live, end)
		if err != nil {
			return err
		}
		t.keysChanged()
		replaced, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if err := t.insertKey(ctx, k); err != nil {
			return err
		}
		return t.audit(ctx, now, "key.rolled", workspaceID, map[string]any{"key": k.Masked(), "grace_seconds": int64(grace / time.Second), "replaced": replaced})
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// Audit is one entry of the audit log: who did what to which workspace.
// Detail never holds a secret.
type Audit struct {
	At          time.Time
	Actor       string // user:usr_..., cli, partner:...
	Action      string
	WorkspaceID string
	Detail      map[string]any
}

type actorKey struct{}

// WithActor tells the store who acts in ctx ("user:usr_...", "cli",
// "partner:..."): the audit log records it with each action.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// audit adds an entry to the audit log, in the transaction of the action;
// the actor comes from ctx (WithActor), "system" when none is set.
func (t *tx) audit(ctx context.Context, now time.Time, action, workspaceID string, detail map[string]any) error {
	actor, _ := ctx.Value(actorKey{}).(string)
	if actor == "" {
		actor = "system"
	}
	if detail == nil {
		detail = map[string]any{}
	}
	b, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO audit_log (id, at, actor, action, workspace_id, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		cauri.NewID("aud_"), micros(now), actor, action, workspaceID, string(b))
	return err
}

// AuditLog lists a workspace's audit entries, newest first ("" lists the
// entries of every workspace).
func (s *Store) AuditLog(ctx context.Context, workspaceID string, limit int) ([]Audit, error) {
	var out []Audit
	err := s.read(ctx, func(t *tx) error {
		list, err := queryAll(ctx, t, func(row interface{ Scan(...any) error }) (*Audit, error) {
			var a Audit
			var at int64
			var detail string
			if err := row.Scan(&at, &a.Actor, &a.Action, &a.WorkspaceID, &detail); err != nil {
				return nil, err
			}
			a.At = fromMicros(at)
			return &a, json.Unmarshal([]byte(detail), &a.Detail)
		}, `SELECT at, actor, action, workspace_id, detail FROM audit_log WHERE ? = '' OR workspace_id = ?
			ORDER BY at DESC, id DESC LIMIT ?`, workspaceID, workspaceID, limit)
		for _, a := range list {
			out = append(out, *a)
		}
		return err
	})
	return out, err
}
