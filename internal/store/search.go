package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/search"
	"github.com/pressly/goose/v3"
)

// searchTermsVersion is the migration that makes the search terms' table
// and fills it from the sessions and attempts already stored: a Go
// migration, since the terms are cut by package search and the table's
// column must compare bytes on both databases (PostgreSQL's "C"
// collation; SQLite compares bytes already).
const searchTermsVersion = 34

func (s *Store) searchTermsMigration() *goose.Migration {
	collate := ""
	if s.kind == config.Postgres {
		collate = ` COLLATE "C"`
	}
	up := func(ctx context.Context, sqlTx *sql.Tx) error {
		if _, err := sqlTx.ExecContext(ctx, `CREATE TABLE search_terms (
			workspace_id TEXT NOT NULL,
			livemode     BOOLEAN NOT NULL,
			term         TEXT`+collate+` NOT NULL,
			session_id   TEXT NOT NULL,
			PRIMARY KEY (workspace_id, livemode, term, session_id))`); err != nil {
			return err
		}
		if _, err := sqlTx.ExecContext(ctx, `CREATE INDEX search_terms_session ON search_terms (session_id)`); err != nil {
			return err
		}
		// A store of the same kind without the statement cache: the
		// backfill's queries run once.
		return s.backfillSearchTerms(ctx, &tx{q: sqlTx, sqlTx: sqlTx, s: &Store{kind: s.kind}})
	}
	down := func(ctx context.Context, sqlTx *sql.Tx) error {
		_, err := sqlTx.ExecContext(ctx, `DROP TABLE search_terms`)
		return err
	}
	return goose.NewGoMigration(searchTermsVersion, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}

// backfillSearchTerms writes the terms of the sessions stored before the
// table, and of their attempts' phone numbers, a batch at a time.
func (s *Store) backfillSearchTerms(ctx context.Context, t *tx) error {
	const batch = 2000
	last := ""
	for {
		rows, err := t.query(ctx, `SELECT id, workspace_id, livemode, customer_name, customer_email, customer_phone, metadata
			FROM checkout_sessions WHERE id > ? ORDER BY id LIMIT ?`, last, batch)
		if err != nil {
			return err
		}
		var all []*cauri.Session
		for rows.Next() {
			var sess cauri.Session
			var md string
			if err := rows.Scan(&sess.ID, &sess.WorkspaceID, &sess.Livemode, &sess.CustomerName, &sess.CustomerEmail, &sess.CustomerPhone, &md); err != nil {
				rows.Close()
				return err
			}
			sess.Metadata = orderIDOnly(md)
			all = append(all, &sess)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, sess := range all {
			if err := t.addSearchTerms(ctx, sess.WorkspaceID, sess.Livemode, sess.ID, search.SessionTerms(sess)); err != nil {
				return err
			}
		}
		if len(all) < batch {
			break
		}
		last = all[len(all)-1].ID
	}
	last = ""
	for {
		rows, err := t.query(ctx, `SELECT a.id, a.phone, s.id, s.workspace_id, s.livemode FROM payment_attempts a
			JOIN checkout_sessions s ON s.id = a.session_id WHERE a.id > ? ORDER BY a.id LIMIT ?`, last, batch)
		if err != nil {
			return err
		}
		type phone struct {
			id, phone, session, workspace string
			live                          bool
		}
		var all []phone
		for rows.Next() {
			var p phone
			if err := rows.Scan(&p.id, &p.phone, &p.session, &p.workspace, &p.live); err != nil {
				rows.Close()
				return err
			}
			all = append(all, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, p := range all {
			if err := t.addSearchTerms(ctx, p.workspace, p.live, p.session, search.PhoneTerms(p.phone)); err != nil {
				return err
			}
		}
		if len(all) < batch {
			return nil
		}
		last = all[len(all)-1].id
	}
}

// orderIDOnly reads a session's metadata for its order id alone.
func orderIDOnly(md string) map[string]string {
	var m map[string]string
	if err := json.Unmarshal([]byte(md), &m); err != nil {
		return nil
	}
	return map[string]string{"order_id": m["order_id"]}
}

// addSearchTerms records terms of a session (already there: kept).
func (t *tx) addSearchTerms(ctx context.Context, workspaceID string, livemode bool, sessionID string, terms []string) error {
	if len(terms) == 0 {
		return nil
	}
	args := make([]any, 0, 4*len(terms))
	values := make([]string, len(terms))
	for i, term := range terms {
		values[i] = "(?, ?, ?, ?)"
		args = append(args, workspaceID, livemode, term, sessionID)
	}
	_, err := t.exec(ctx, `INSERT INTO search_terms (workspace_id, livemode, term, session_id) VALUES `+strings.Join(values, ", ")+`
		ON CONFLICT DO NOTHING`, args...)
	return err
}

// searchMatches is a subquery of the ids of the sessions of a workspace's
// mode that a search matches (package search reads it): terms by prefix
// or whole, each range of the index on its own; the session by its id;
// the attempts by their reference or their aggregator's (the latter
// through the workspace's gateways, which lead that index). The caller
// adds the workspace and mode on the sessions too.
func searchMatches(q search.Query, workspaceID string, livemode bool) (string, []any) {
	var parts []string
	var args []any
	for _, p := range q.Prefixes {
		parts = append(parts, `SELECT session_id FROM search_terms WHERE workspace_id = ? AND livemode = ? AND term >= ? AND term < ?`)
		args = append(args, workspaceID, livemode, p, p+"\U0010FFFF")
	}
	for _, e := range q.Exact {
		parts = append(parts, `SELECT session_id FROM search_terms WHERE workspace_id = ? AND livemode = ? AND term = ?`)
		args = append(args, workspaceID, livemode, e)
	}
	if q.ID != "" {
		parts = append(parts, `SELECT id FROM checkout_sessions WHERE id = ?`,
			`SELECT session_id FROM payment_attempts WHERE reference = ?`,
			`SELECT session_id FROM payment_attempts WHERE gateway_id IN (SELECT id FROM gateways WHERE workspace_id = ?) AND provider_ref = ?`)
		args = append(args, q.ID, q.ID, workspaceID, q.ID)
	}
	return strings.Join(parts, " UNION "), args
}
