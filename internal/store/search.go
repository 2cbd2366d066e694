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
		// In the migration's transaction, through a store of the same kind
		// without the statement cache (the backfill's queries run once).
		t := &tx{q: sqlTx, sqlTx: sqlTx, s: &Store{kind: s.kind}}
		_, err := s.backfillSearchTerms(ctx, func(fn func(*tx) error) error { return fn(t) })
		return err
	}
	down := func(ctx context.Context, sqlTx *sql.Tx) error {
		_, err := sqlTx.ExecContext(ctx, `DROP TABLE search_terms`)
		return err
	}
	return goose.NewGoMigration(searchTermsVersion, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}

// RebuildSearchTerms writes again the search terms of every session and
// attempt, a page at a time, each page its own short transaction (terms
// already there are kept): after a rolling deploy, the sessions that nodes
// older than the terms' table created meanwhile have none
// (`cauri search rebuild`, docs/operations.md). It returns how many
// sessions and attempts it read.
func (s *Store) RebuildSearchTerms(ctx context.Context) (int, error) {
	return s.backfillSearchTerms(ctx, func(fn func(*tx) error) error { return s.tx(ctx, fn) })
}

// searchTermEntry is one term of one session.
type searchTermEntry struct {
	workspace, session, term string
	live                     bool
}

// backfillSearchTerms writes the terms of the stored sessions and of their
// attempts' phone numbers, a page of rows at a time, each page in one
// transaction of run's (the migration's own, or a new one per page) with
// a few multi-row inserts.
func (s *Store) backfillSearchTerms(ctx context.Context, run func(func(*tx) error) error) (int, error) {
	const page = 2000
	read := 0
	pages := []struct {
		q    string
		scan func(rows *sql.Rows) (last string, entries []searchTermEntry, err error)
	}{
		{`SELECT id, workspace_id, livemode, customer_name, customer_email, customer_phone, metadata
			FROM checkout_sessions WHERE id > ? ORDER BY id LIMIT ?`, func(rows *sql.Rows) (string, []searchTermEntry, error) {
			var sess cauri.Session
			var md string
			if err := rows.Scan(&sess.ID, &sess.WorkspaceID, &sess.Livemode, &sess.CustomerName, &sess.CustomerEmail, &sess.CustomerPhone, &md); err != nil {
				return "", nil, err
			}
			sess.Metadata = orderIDOnly(md)
			return sess.ID, entries(sess.WorkspaceID, sess.Livemode, sess.ID, search.SessionTerms(&sess)), nil
		}},
		{`SELECT a.id, a.phone, s.id, s.workspace_id, s.livemode FROM payment_attempts a
			JOIN checkout_sessions s ON s.id = a.session_id WHERE a.id > ? ORDER BY a.id LIMIT ?`, func(rows *sql.Rows) (string, []searchTermEntry, error) {
			var id, phone, session, workspace string
			var live bool
			if err := rows.Scan(&id, &phone, &session, &workspace, &live); err != nil {
				return "", nil, err
			}
			return id, entries(workspace, live, session, search.PhoneTerms(phone)), nil
		}},
	}
	for _, p := range pages {
		for last, n := "", page; n == page; {
			n = 0
			err := run(func(t *tx) error {
				rows, err := t.query(ctx, p.q, last, page)
				if err != nil {
					return err
				}
				var all []searchTermEntry
				for rows.Next() {
					id, e, err := p.scan(rows)
					if err != nil {
						rows.Close()
						return err
					}
					last, n, all = id, n+1, append(all, e...)
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
				return t.insertSearchTerms(ctx, all)
			})
			if err != nil {
				return read, err
			}
			read += n
		}
	}
	return read, nil
}

func entries(workspace string, live bool, session string, terms []string) []searchTermEntry {
	out := make([]searchTermEntry, len(terms))
	for i, term := range terms {
		out[i] = searchTermEntry{workspace: workspace, session: session, term: term, live: live}
	}
	return out
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
	return t.insertSearchTerms(ctx, entries(workspaceID, livemode, sessionID, terms))
}

// insertSearchTerms writes terms (already there: kept), 200 to a statement.
func (t *tx) insertSearchTerms(ctx context.Context, all []searchTermEntry) error {
	for len(all) > 0 {
		chunk := all[:min(len(all), 200)]
		all = all[len(chunk):]
		args := make([]any, 0, 4*len(chunk))
		values := make([]string, len(chunk))
		for i, e := range chunk {
			values[i] = "(?, ?, ?, ?)"
			args = append(args, e.workspace, e.live, e.term, e.session)
		}
		if _, err := t.exec(ctx, `INSERT INTO search_terms (workspace_id, livemode, term, session_id) VALUES `+strings.Join(values, ", ")+`
			ON CONFLICT DO NOTHING`, args...); err != nil {
			return err
		}
	}
	return nil
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
