package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/cauri-pay/cauri"
)

// The ledger's accounts. The service holds a Connect workspace's money:
// what the platform's gateways collected for it is owed to it until it is
// settled (paid out). Entries are signed minor units, debit positive; the
// entries of one movement sum to zero.
const (
	AccountCollected = "platform:collected" // money collected through the platform's gateways
	AccountPaidOut   = "platform:paid_out"  // money settled to merchants
)

// WorkspaceAccount is what the service owes a Connect workspace (credits).
func WorkspaceAccount(id string) string { return "workspace:" + id }

// Movement is one movement of money in the ledger.
type Movement struct {
	ID          string
	Key         string // payment:<session id>, payout:<reference>
	Kind        string // payment, payout
	WorkspaceID string
	Currency    cauri.Currency
	Amount      int64
	Description string
	CreatedAt   time.Time
}

// move records a movement and its two entries (debit, credit) once: a
// movement whose key is already recorded is not recorded again; it reports
// whether this call recorded it.
func (t *tx) move(ctx context.Context, m *Movement, debit, credit string) (bool, error) {
	res, err := t.exec(ctx, `INSERT INTO ledger_movements (id, key, kind, workspace_id, currency, amount, description, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		m.ID, m.Key, m.Kind, m.WorkspaceID, string(m.Currency), m.Amount, m.Description, micros(m.CreatedAt))
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	for _, e := range []struct {
		account string
		amount  int64
	}{{debit, m.Amount}, {credit, -m.Amount}} {
		if _, err := t.exec(ctx, `INSERT INTO ledger_entries (id, movement_id, account, currency, amount, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			cauri.NewID("le_"), m.ID, e.account, string(m.Currency), e.amount, micros(m.CreatedAt)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// creditConnect credits a session's workspace balance with its amount,
// once (the domain's rule says when: cauri.CreditsBalance), in the
// transaction that saves the session's state.
func (t *tx) creditConnect(ctx context.Context, sess *cauri.Session) error {
	_, err := t.move(ctx, &Movement{ID: cauri.NewID("mv_"), Key: "payment:" + sess.ID, Kind: "payment", WorkspaceID: sess.WorkspaceID,
		Currency: sess.Currency, Amount: sess.Amount, Description: "payment " + sess.ID, CreatedAt: sess.UpdatedAt},
		AccountCollected, WorkspaceAccount(sess.WorkspaceID))
	return err
}

// balances sums an account's entries per currency, credits positive.
func (t *tx) balances(ctx context.Context, account string) (map[cauri.Currency]int64, error) {
	out := map[cauri.Currency]int64{}
	rows, err := t.query(ctx, `SELECT currency, CAST(-SUM(amount) AS BIGINT) FROM ledger_entries WHERE account = ? GROUP BY currency`, account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var cur string
		var n int64
		if err := rows.Scan(&cur, &n); err != nil {
			return nil, err
		}
		out[cauri.Currency(cur)] = n
	}
	return out, rows.Err()
}

// Balance is what the service owes a Connect workspace, per currency.
func (s *Store) Balance(ctx context.Context, workspaceID string) (map[cauri.Currency]int64, error) {
	var out map[cauri.Currency]int64
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = t.balances(ctx, WorkspaceAccount(workspaceID))
		return err
	})
	return out, err
}

// Settlement is what a settlement is decided on, read under the
// workspace's lock: Settle's decide sees it.
type Settlement struct {
	Connect  bool      // the workspace is a Connect workspace
	Balance  int64     // its balance in the settlement's currency, before it
	Previous *Movement // the settlement already recorded with this reference, or nil
}

// Settle records a settlement paid out to a Connect workspace outside the
// service (a bank or Mobile Money transfer made by the administration):
// its balance goes down by amount. The reference (the transfer's, at the
// bank; the caller checks it) makes it idempotent: once a settlement is
// recorded with a reference, settling again with it records nothing and
// returns the first movement. decide, under the workspace's lock, says
// whether the settlement may be made (the caller's rules:
// reports.Service.Settle); its error is returned as it is, and nothing is
// recorded. Audited.
func (s *Store) Settle(ctx context.Context, workspaceID string, cur cauri.Currency, amount int64, reference string, now time.Time, decide func(Settlement) error) (*Movement, error) {
	m := &Movement{ID: cauri.NewID("mv_"), Key: "payout:" + workspaceID + ":" + reference, Kind: "payout", WorkspaceID: workspaceID, Currency: cur,
		Amount: amount, Description: "settlement " + reference, CreatedAt: now.UTC()}
	err := s.tx(ctx, func(t *tx) error {
		var f Settlement
		if err := t.queryRow(ctx, `SELECT connect FROM workspaces WHERE id = ?`+s.forUpdate(), workspaceID).Scan(&f.Connect); err != nil {
			return notFound(err, "Workspace %s not found", printable(workspaceID))
		}
		var prev Movement
		var created int64
		var prevCur string
		err := t.queryRow(ctx, `SELECT id, key, kind, workspace_id, currency, amount, description, created_at FROM ledger_movements WHERE key = ?`, m.Key).
			Scan(&prev.ID, &prev.Key, &prev.Kind, &prev.WorkspaceID, &prevCur, &prev.Amount, &prev.Description, &created)
		switch {
		case err == nil:
			prev.Currency, prev.CreatedAt = cauri.Currency(prevCur), fromMicros(created)
			f.Previous = &prev
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		balances, err := t.balances(ctx, WorkspaceAccount(workspaceID))
		if err != nil {
			return err
		}
		f.Balance = balances[cur]
		if err := decide(f); err != nil {
			return err
		}
		if f.Previous != nil {
			m = f.Previous
			return nil
		}
		if _, err := t.move(ctx, m, WorkspaceAccount(workspaceID), AccountPaidOut); err != nil {
			return err
		}
		return t.audit(ctx, now, "ledger.settled", workspaceID, map[string]any{"movement": m.ID, "amount": amount, "currency": string(cur), "reference": reference})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// LedgerSums is the sum of every entry per currency (zero when the ledger
// balances), and the number of movements whose entries do not sum to zero.
func (s *Store) LedgerSums(ctx context.Context) (map[cauri.Currency]int64, int, error) {
	sums := map[cauri.Currency]int64{}
	var unbalanced int
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT currency, CAST(SUM(amount) AS BIGINT) FROM ledger_entries GROUP BY currency`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var cur string
			var n int64
			if err := rows.Scan(&cur, &n); err != nil {
				return err
			}
			sums[cauri.Currency(cur)] = n
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return t.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT movement_id FROM ledger_entries GROUP BY movement_id HAVING SUM(amount) <> 0) u`).Scan(&unbalanced)
	})
	return sums, unbalanced, err
}
