package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cauri-pay/cauri"
)

const transferColumns = `id, workspace_id, livemode, reference, status, amount, currency, country, operator, provider_operator,
	phone, recipient_name, description, gateway_id, provider, provider_ref, failure_code, failure_message,
	created_at, updated_at, completed_at, initiated_at, recipient_name_check, recipient_name_reported`

func scanTransfer(row interface{ Scan(...any) error }) (*cauri.Transfer, error) {
	var tr cauri.Transfer
	var status, cur, nameCheck string
	var created, updated int64
	var completed, initiated sql.NullInt64
	if err := row.Scan(&tr.ID, &tr.WorkspaceID, &tr.Livemode, &tr.Reference, &status, &tr.Amount, &cur, &tr.Country, &tr.Operator,
		&tr.ProviderOperator, &tr.Phone, &tr.RecipientName, &tr.Description, &tr.GatewayID, &tr.Provider, &tr.ProviderRef,
		&tr.FailureCode, &tr.FailureMessage, &created, &updated, &completed, &initiated, &nameCheck, &tr.RecipientNameReported); err != nil {
		return nil, err
	}
	tr.Status, tr.Currency, tr.RecipientNameCheck = cauri.TransferStatus(status), cauri.Currency(cur), cauri.NameCheck(nameCheck)
	tr.CreatedAt, tr.UpdatedAt = fromMicros(created), fromMicros(updated)
	tr.CompletedAt, tr.InitiatedAt = fromNullMicros(completed), fromNullMicros(initiated)
	return &tr, nil
}

// CreateTransfer stores a new transfer, processing, before its aggregator
// is called. Under the workspace's lock, in one transaction: the
// idempotency key is claimed (a replay returns the id of the transfer the
// key created, and nothing is written), then admit is asked with the
// number of transfers created since dayStart (whatever their outcome) and
// the workspace's daily cap, then the transfer is written unless admit
// refused it. So a storm of replays writes one transfer, and concurrent
// creations are admitted one at a time.
func (s *Store) CreateTransfer(ctx context.Context, tr *cauri.Transfer, idem *Idempotency, dayStart time.Time, admit func(today, dailyCap int) error) (replayOf string, err error) {
	err = s.tx(ctx, func(t *tx) error {
		var dailyCap int
		if err := t.queryRow(ctx, `SELECT transfer_daily_cap FROM workspaces WHERE id = ?`+s.forUpdate(), tr.WorkspaceID).Scan(&dailyCap); err != nil {
			return notFound(err, "Workspace %s not found", tr.WorkspaceID)
		}
		if idem != nil {
			prev, err := t.claimIdempotencyKey(ctx, tr.WorkspaceID, tr.Livemode, idem, "transfer", tr.ID, tr.CreatedAt)
			if err != nil || prev != "" {
				replayOf = prev
				return err
			}
		}
		var today int
		// A transfer refused for the gateway's credentials moved no money:
		// it does not count.
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM transfers WHERE workspace_id = ? AND created_at >= ? AND failure_code <> ?`,
			tr.WorkspaceID, micros(dayStart), cauri.FailureCredentialsRefused).Scan(&today); err != nil {
			return err
		}
		if err := admit(today, dailyCap); err != nil {
			return err
		}
		_, err := t.exec(ctx, `INSERT INTO transfers (`+transferColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			tr.ID, tr.WorkspaceID, tr.Livemode, tr.Reference, string(tr.Status), tr.Amount, string(tr.Currency), tr.Country, tr.Operator,
			tr.ProviderOperator, tr.Phone, tr.RecipientName, tr.Description, tr.GatewayID, tr.Provider, tr.ProviderRef,
			tr.FailureCode, tr.FailureMessage, micros(tr.CreatedAt), micros(tr.UpdatedAt), nullMicros(tr.CompletedAt), nullMicros(tr.InitiatedAt),
			string(tr.RecipientNameCheck), tr.RecipientNameReported)
		return err
	})
	return replayOf, err
}

// TransferByIdempotencyKey finds the transfer an idempotency key created,
// checking that the request is the same (ErrIdempotencyMismatch
// otherwise); nil when the key is unknown or forgotten.
func (s *Store) TransferByIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *Idempotency, now time.Time) (*cauri.Transfer, error) {
	id, err := s.keyedResource(ctx, workspaceID, livemode, idem, now, "transfer")
	if err != nil || id == "" {
		return nil, err
	}
	return s.Transfer(ctx, workspaceID, id)
}

// keyedResource is the id of the resource of type typ an idempotency key
// created, checking that the request is the same (ErrIdempotencyMismatch
// otherwise, or when the key made another type); "" when the key is
// unknown or forgotten.
func (s *Store) keyedResource(ctx context.Context, workspaceID string, livemode bool, idem *Idempotency, now time.Time, typ string) (string, error) {
	var id, fingerprint, made string
	var created int64
	err := s.read(ctx, func(t *tx) error {
		return t.queryRow(ctx, `SELECT resource_id, fingerprint, resource_type, created_at FROM idempotency_keys
			WHERE workspace_id = ? AND livemode = ? AND key = ?`, workspaceID, livemode, idem.Key).Scan(&id, &fingerprint, &made, &created)
	})
	if err == sql.ErrNoRows || err == nil && now.Sub(fromMicros(created)) > cauri.IdempotencyKeyTTL {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if made != typ || fingerprint != idem.Fingerprint {
		return "", ErrIdempotencyMismatch
	}
	return id, nil
}

// DeleteTransfer removes a processing transfer its aggregator surely never
// received (the call could not be made), with its idempotency key, so that
// the client may try again: the SPEC's "500 internal: the transfer was not
// created". It reports false, and deletes nothing, when the transfer is no
// longer processing (something ended it meanwhile).
func (s *Store) DeleteTransfer(ctx context.Context, tr *cauri.Transfer) (bool, error) {
	deleted := false
	err := s.tx(ctx, func(t *tx) error {
		res, err := t.exec(ctx, `DELETE FROM transfers WHERE id = ? AND status = ?`, tr.ID, string(cauri.TransferProcessing))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		deleted = true
		_, err = t.exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = ? AND resource_type = 'transfer' AND resource_id = ?`,
			tr.WorkspaceID, tr.ID)
		return err
	})
	return deleted, err
}

// AdoptOrphanTransfer marks initiated, at now, a processing transfer whose
// payout call never recorded its end, if nobody has: it reports whether
// this caller won it (and so may re-drive it).
func (s *Store) AdoptOrphanTransfer(ctx context.Context, id string, now time.Time) (bool, error) {
	n, err := s.update(ctx, `UPDATE transfers SET initiated_at = ?, checked_at = ? WHERE id = ? AND status = ? AND initiated_at IS NULL`,
		micros(now), micros(now), id, string(cauri.TransferProcessing))
	return n == 1, err
}

// Transfer reads one transfer of a workspace; another workspace's is
// ErrNotFound, as one that does not exist.
func (s *Store) Transfer(ctx context.Context, workspaceID, id string) (*cauri.Transfer, error) {
	if !cauri.IsID("tr_", id) {
		return nil, fmt.Errorf("transfer %s: %w", printable(id), ErrNotFound)
	}
	var tr *cauri.Transfer
	err := s.read(ctx, func(t *tx) (err error) {
		tr, err = scanTransfer(t.queryRow(ctx, `SELECT `+transferColumns+` FROM transfers WHERE id = ? AND workspace_id = ?`, id, workspaceID))
		return err
	})
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("transfer %s: %w", id, ErrNotFound)
	}
	return tr, err
}

// TransferByReference finds a gateway's transfer by our reference.
func (s *Store) TransferByReference(ctx context.Context, gatewayID, reference string) (*cauri.Transfer, error) {
	if !storable(reference) {
		return nil, errNotFound("No transfer %s at this gateway", printable(reference))
	}

	var tr *cauri.Transfer
	err := s.read(ctx, func(t *tx) (err error) {
		tr, err = scanTransfer(t.queryRow(ctx, `SELECT `+transferColumns+` FROM transfers WHERE gateway_id = ? AND reference = ?`,
			gatewayID, reference))
		return notFound(err, "No transfer %s at this gateway", printable(reference))
	})
	return tr, err
}

// Transfers lists a workspace's transfers of one mode, newest first, of
// one status when status is not empty.
func (s *Store) Transfers(ctx context.Context, workspaceID string, livemode bool, status cauri.TransferStatus, limit int) ([]*cauri.Transfer, error) {
	q := `SELECT ` + transferColumns + ` FROM transfers WHERE workspace_id = ? AND livemode = ?`
	args := []any{workspaceID, livemode}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, string(status))
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	var out []*cauri.Transfer
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanTransfer, q, append(args, limit)...)
		return err
	})
	return out, err
}

// MarkTransferInitiated records that a transfer's payout call has returned,
// with the aggregator's own id when it gave one.
func (s *Store) MarkTransferInitiated(ctx context.Context, id string, now time.Time, providerRef string) error {
	_, err := s.update(ctx, `UPDATE transfers SET initiated_at = ?, provider_ref = CASE WHEN ? = '' THEN provider_ref ELSE ? END WHERE id = ?`,
		micros(now), providerRef, providerRef, id)
	return err
}

// SetTransferProviderRef records the aggregator's own id of a transfer as
// soon as the aggregator gives it, before the money can move.
func (s *Store) SetTransferProviderRef(ctx context.Context, id, providerRef string) error {
	_, err := s.update(ctx, `UPDATE transfers SET provider_ref = ? WHERE id = ?`, providerRef, id)
	return err
}

// FinishTransfer changes a processing transfer under its row lock: fn
// sets its outcome in place, and the transfer's event is written in the
// same transaction. A transfer no longer processing is left alone (fn is
// not called): a late or repeated outcome changes nothing. It returns the
// transfer as it is after (ErrNotFound when there is none).
func (s *Store) FinishTransfer(ctx context.Context, id string, fn func(*cauri.Transfer) error) (*cauri.Transfer, bool, error) {
	var tr *cauri.Transfer
	changed := false
	err := s.tx(ctx, func(t *tx) (err error) {
		tr, err = scanTransfer(t.queryRow(ctx, `SELECT `+transferColumns+` FROM transfers WHERE id = ?`+s.forUpdate(), id))
		if err == sql.ErrNoRows {
			return fmt.Errorf("transfer %s: %w", printable(id), ErrNotFound)
		}
		if err != nil {
			return err
		}
		if tr.Status != cauri.TransferProcessing {
			return nil
		}
		if err := fn(tr); err != nil || tr.Status == cauri.TransferProcessing {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE transfers SET status = ?, provider_ref = ?, failure_code = ?, failure_message = ?,
			updated_at = ?, completed_at = ?, recipient_name_reported = ? WHERE id = ?`, string(tr.Status), tr.ProviderRef, tr.FailureCode, tr.FailureMessage,
			micros(tr.UpdatedAt), nullMicros(tr.CompletedAt), tr.RecipientNameReported, tr.ID); err != nil {
			return err
		}
		ev, err := cauri.TransferEvent(tr, tr.UpdatedAt)
		if err != nil {
			return err
		}
		changed = true
		return t.insertEvent(ctx, ev)
	})
	return tr, changed, err
}

// ClaimTransferCheck is ClaimAttemptCheck for transfers.
func (s *Store) ClaimTransferCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error) {
	return s.claimCheck(ctx, "transfers", string(cauri.TransferProcessing), id, now, every)
}

// ClaimTransferCallbackCheck is ClaimCallbackCheck for transfers.
func (s *Store) ClaimTransferCallbackCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error) {
	return s.claimCallbackCheck(ctx, "transfers", string(cauri.TransferProcessing), id, now, every)
}

// DueTransfers is DueAttempts for transfers.
func (s *Store) DueTransfers(ctx context.Context, now time.Time, minWait, maxWait time.Duration, limit int) ([]*cauri.Transfer, error) {
	var out []*cauri.Transfer
	err := s.read(ctx, func(t *tx) (err error) {
		q, args := dueQuery(transferColumns, "transfers", string(cauri.TransferProcessing), now, minWait, maxWait, limit)
		out, err = queryAll(ctx, t, scanTransfer, q, args...)
		return err
	})
	return out, err
}

// OrphanTransfers lists up to limit processing transfers created before
// cutoff whose payout call never recorded its end: the process stopped
// between committing them and hearing the aggregator (or before calling).
func (s *Store) OrphanTransfers(ctx context.Context, cutoff time.Time, limit int) ([]*cauri.Transfer, error) {
	var out []*cauri.Transfer
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanTransfer, `SELECT `+transferColumns+` FROM transfers
			WHERE status = ? AND initiated_at IS NULL AND created_at < ? ORDER BY created_at LIMIT ?`,
			string(cauri.TransferProcessing), micros(cutoff), limit)
		return err
	})
	return out, err
}
