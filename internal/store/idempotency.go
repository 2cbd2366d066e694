package store

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
)

// claimIdempotencyKey records that key (scoped to a workspace and a mode)
// creates resourceID. It returns "" when the key is new, so the caller goes
// on creating the object in the same transaction, or the id of the object
// the key created before, for a replay. The primary key decides, not a
// check-then-insert: on PostgreSQL a concurrent claim of the same key waits
// for the first transaction and then sees its row; on SQLite the
// transactions are serialised by the write lock. A key older than
// cauri.IdempotencyKeyTTL is forgotten and may be reused. A key used for
// another kind of object or another request is ErrIdempotencyMismatch.
func (t *tx) claimIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *Idempotency, resourceType, resourceID string, now time.Time) (string, error) {
	res, err := t.exec(ctx, `INSERT INTO idempotency_keys (workspace_id, livemode, key, fingerprint, resource_type, resource_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		workspaceID, livemode, idem.Key, idem.Fingerprint, resourceType, resourceID, micros(now))
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return "", nil
	}
	for attempt := 0; ; attempt++ {
		var fingerprint, prevType, prevID string
		var created int64
		if err := t.queryRow(ctx, `SELECT fingerprint, resource_type, resource_id, created_at FROM idempotency_keys
			WHERE workspace_id = ? AND livemode = ? AND key = ?`, workspaceID, livemode, idem.Key).Scan(&fingerprint, &prevType, &prevID, &created); err != nil {
			return "", err
		}
		if now.Sub(fromMicros(created)) > cauri.IdempotencyKeyTTL && attempt == 0 {
			// Forgotten key: take it over, but only if nobody else has since.
			// A concurrent takeover makes this update match no row (PostgreSQL
			// re-checks the condition once the other transaction commits), and
			// the loop reads the winner's row and replays it.
			res, err := t.exec(ctx, `UPDATE idempotency_keys SET fingerprint = ?, resource_type = ?, resource_id = ?, created_at = ?
				WHERE workspace_id = ? AND livemode = ? AND key = ? AND created_at = ?`,
				idem.Fingerprint, resourceType, resourceID, micros(now), workspaceID, livemode, idem.Key, created)
			if err != nil {
				return "", err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return "", nil
			}
			continue
		}
		if prevType != resourceType || fingerprint != idem.Fingerprint {
			return "", ErrIdempotencyMismatch
		}
		return prevID, nil
	}
}
