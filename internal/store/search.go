package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/search"
	"github.com/pressly/goose/v3"
)

// searchTermsVersion is the migration that made the search terms' table;
// searchTermsByTimeVersion the one that makes it again with each term's
// session's creation time in its key, and fills it from the sessions and
// attempts already stored (both Go migrations, since the terms are cut by
// package search). The term column compares bytes on both databases
// (PostgreSQL's "C" collation; SQLite compares bytes already).
const (
	searchTermsVersion       = 34
	searchTermsByTimeVersion = 37
)

// searchTermsMigration makes the table of migration 34, empty: the terms
// are written by migration 37, which makes the table again.
func (s *Store) searchTermsMigration() *goose.Migration {
	up := func(ctx context.Context, sqlTx *sql.Tx) error {
		if _, err := sqlTx.ExecContext(ctx, `CREATE TABLE search_terms (
			workspace_id TEXT NOT NULL,
			livemode     BOOLEAN NOT NULL,
			term         TEXT`+s.byteOrder()+` NOT NULL,
			session_id   TEXT NOT NULL,
			PRIMARY KEY (workspace_id, livemode, term, session_id))`); err != nil {
			return err
		}
		_, err := sqlTx.ExecContext(ctx, `CREATE INDEX search_terms_session ON search_terms (session_id)`)
		return err
	}
	down := func(ctx context.Context, sqlTx *sql.Tx) error {
		_, err := sqlTx.ExecContext(ctx, `DROP TABLE search_terms`)
		return err
	}
	return goose.NewGoMigration(searchTermsVersion, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}

// searchTermsByTimeMigration makes the terms' table again with the
// session's creation time between the term and the session, so that a
// search picks its page, newest first, from the terms' index alone and
// reads only that page's sessions (docs/dashboard.md, "Search"), and
// writes the terms of the sessions and attempts stored, a page of them at
// a time in the migration's transaction. On SQLite the table is its
// primary key (WITHOUT ROWID): the index is the table, not a copy of it.
// The time's default, 0, is for the nodes older than this migration
// during a rolling upgrade, whose inserts do not name it: their sessions
// are found, sorted as the oldest (once, in their place, when they have
// terms of both), until `cauri search rebuild` writes their terms with
// the time and removes those without.
func (s *Store) searchTermsByTimeMigration() *goose.Migration {
	withoutRowid := ""
	if s.kind == config.SQLite {
		withoutRowid = " WITHOUT ROWID"
	}
	up := func(ctx context.Context, sqlTx *sql.Tx) error {
		for _, q := range []string{
			`DROP TABLE search_terms`,
			`CREATE TABLE search_terms (
			workspace_id TEXT NOT NULL,
			livemode     BOOLEAN NOT NULL,
			term         TEXT` + s.byteOrder() + ` NOT NULL,
			created_at   BIGINT NOT NULL DEFAULT 0,
			session_id   TEXT NOT NULL,
			PRIMARY KEY (workspace_id, livemode, term, created_at, session_id))` + withoutRowid,
			`CREATE INDEX search_terms_session ON search_terms (session_id)`,
		} {
			if _, err := sqlTx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if s.kind == config.Postgres {
			// PostgreSQL reads a term from the index alone only when the
			// table's page is marked all-visible by a vacuum; else it visits
			// the table for each (a word all 11 000 customers share: 125 ms
			// rather than 7). Autovacuum vacuums an insert-only table after
			// 20 % more rows by default: this table after 1 %.
			if _, err := sqlTx.ExecContext(ctx, `ALTER TABLE search_terms SET (autovacuum_vacuum_insert_scale_factor = 0.01)`); err != nil {
				return err
			}
		}
		// In the migration's transaction, through a store of the same kind
		// without the statement cache (the backfill's queries run once).
		t := &tx{q: sqlTx, sqlTx: sqlTx, s: &Store{kind: s.kind}}
		_, err := s.backfillSearchTerms(ctx, func(fn func(*tx) error) error { return fn(t) })
		return err
	}
	down := func(ctx context.Context, sqlTx *sql.Tx) error {
		for _, q := range []string{
			`CREATE TABLE search_terms_before (
			workspace_id TEXT NOT NULL,
			livemode     BOOLEAN NOT NULL,
			term         TEXT` + s.byteOrder() + ` NOT NULL,
			session_id   TEXT NOT NULL,
			PRIMARY KEY (workspace_id, livemode, term, session_id))`,
			`INSERT INTO search_terms_before (workspace_id, livemode, term, session_id)
			SELECT workspace_id, livemode, term, session_id FROM search_terms`,
			`DROP TABLE search_terms`,
			`ALTER TABLE search_terms_before RENAME TO search_terms`,
			`CREATE INDEX search_terms_session ON search_terms (session_id)`,
		} {
			if _, err := sqlTx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if s.kind == config.Postgres { // the primary key keeps the name it was made with
			_, err := sqlTx.ExecContext(ctx, `ALTER TABLE search_terms RENAME CONSTRAINT search_terms_before_pkey TO search_terms_pkey`)
			return err
		}
		return nil
	}
	return goose.NewGoMigration(searchTermsByTimeVersion, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}

// byteOrder is the collation of a column compared byte by byte.
func (s *Store) byteOrder() string {
	if s.kind == config.Postgres {
		return ` COLLATE "C"`
	}
	return ""
}

// RebuildSearchTerms writes again the search terms of every session and
// attempt, a page at a time, each page its own short transaction (terms
// already there are kept, but those without their session's time, which
// nodes older than migration 37 write, are replaced): after a rolling
// deploy, the sessions that nodes older than the terms' table created
// meanwhile have none
// (`cauri search rebuild`, docs/operations.md). It returns how many
// sessions and attempts it read.
func (s *Store) RebuildSearchTerms(ctx context.Context) (int, error) {
	return s.backfillSearchTerms(ctx, func(fn func(*tx) error) error { return s.tx(ctx, fn) })
}

// searchTermEntry is one term of one session.
type searchTermEntry struct {
	workspace, session, term string
	live                     bool
	created                  int64 // the session's creation time, in microseconds
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
		{`SELECT id, workspace_id, livemode, created_at, customer_name, customer_email, customer_phone, metadata
			FROM checkout_sessions WHERE id > ? ORDER BY id LIMIT ?`, func(rows *sql.Rows) (string, []searchTermEntry, error) {
			var sess cauri.Session
			var md string
			var created int64
			if err := rows.Scan(&sess.ID, &sess.WorkspaceID, &sess.Livemode, &created, &sess.CustomerName, &sess.CustomerEmail, &sess.CustomerPhone, &md); err != nil {
				return "", nil, err
			}
			sess.Metadata = orderIDOnly(md)
			return sess.ID, entries(sess.WorkspaceID, sess.Livemode, sess.ID, created, search.SessionTerms(&sess)), nil
		}},
		{`SELECT a.id, a.phone, s.id, s.workspace_id, s.livemode, s.created_at FROM payment_attempts a
			JOIN checkout_sessions s ON s.id = a.session_id WHERE a.id > ? ORDER BY a.id LIMIT ?`, func(rows *sql.Rows) (string, []searchTermEntry, error) {
			var id, phone, session, workspace string
			var live bool
			var created int64
			if err := rows.Scan(&id, &phone, &session, &workspace, &live, &created); err != nil {
				return "", nil, err
			}
			return id, entries(workspace, live, session, created, search.PhoneTerms(phone)), nil
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
				if err := t.insertSearchTerms(ctx, all); err != nil {
					return err
				}
				return t.dropUntimedTerms(ctx, all)
			})
			if err != nil {
				return read, err
			}
			read += n
		}
	}
	return read, nil
}

func entries(workspace string, live bool, session string, created int64, terms []string) []searchTermEntry {
	out := make([]searchTermEntry, len(terms))
	for i, term := range terms {
		out[i] = searchTermEntry{workspace: workspace, session: session, term: term, live: live, created: created}
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

// dropUntimedTerms removes the terms without their session's time (written
// by a node older than migration 37) of the sessions of entries, whose
// terms with the time were just written.
func (t *tx) dropUntimedTerms(ctx context.Context, entries []searchTermEntry) error {
	var ids []any
	seen := map[string]bool{}
	for _, e := range entries {
		if !seen[e.session] {
			seen[e.session] = true
			ids = append(ids, e.session)
		}
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		if _, err := t.exec(ctx, `DELETE FROM search_terms WHERE session_id IN (`+placeholders(len(chunk))+`) AND created_at = 0`, chunk...); err != nil {
			return err
		}
	}
	return nil
}

// addSearchTerms records terms of a session (already there: kept), in one
// statement.
func (t *tx) addSearchTerms(ctx context.Context, sess *cauri.Session, terms []string) error {
	return t.insertSearchTerms(ctx, entries(sess.WorkspaceID, sess.Livemode, sess.ID, micros(sess.CreatedAt), terms))
}

// insertSearchTerms writes terms (already there: kept), 200 to a statement.
func (t *tx) insertSearchTerms(ctx context.Context, all []searchTermEntry) error {
	for len(all) > 0 {
		chunk := all[:min(len(all), 200)]
		all = all[len(chunk):]
		args := make([]any, 0, 5*len(chunk))
		values := make([]string, len(chunk))
		for i, e := range chunk {
			values[i] = "(?, ?, ?, ?, ?)"
			args = append(args, e.workspace, e.live, e.term, e.created, e.session)
		}
		if _, err := t.exec(ctx, `INSERT INTO search_terms (workspace_id, livemode, term, created_at, session_id) VALUES `+strings.Join(values, ", ")+`
			ON CONFLICT DO NOTHING`, args...); err != nil {
			return err
		}
	}
	return nil
}

// searchMatches is a subquery of the sessions of a workspace's mode that a
// search matches (package search reads it), as (created_at, session_id)
// pairs, a session's pair once or more, and pairs whose created_at is NULL
// to leave out: terms by prefix or whole, each range of the terms' index
// on its own and read from it alone, or, when searchWalk found them, the
// sessions of page instead; the session by its id; the attempts by their
// reference or their aggregator's (the latter through the workspace's
// gateways, which lead that index). Sessions created out of [from, to)
// are left out (a zero bound is open).
func searchMatches(q search.Query, workspaceID string, livemode bool, from, to time.Time, page []string) (string, []any) {
	var parts []string
	var args []any
	if page != nil {
		parts = append(parts, `SELECT created_at, id AS session_id FROM checkout_sessions WHERE id IN (`+placeholders(len(page))+`)`)
		args = append(args, anys(page)...)
	} else {
		parts, args = termRanges(q, `SELECT created_at, session_id`, workspaceID, livemode, from, to)
	}
	if q.ID != "" {
		parts = append(parts, `SELECT created_at, id AS session_id FROM checkout_sessions WHERE id = ? AND workspace_id = ? AND livemode = ?`+dates("created_at", from, to))
		args = append(append(args, q.ID, workspaceID, livemode), datesArgs(from, to)...)
		// An attempt's session by its key alone, whatever the planner
		// guesses of the tables' sizes: its created_at, NULL when it is
		// another workspace's or mode's or out of the dates.
		created := `(SELECT c.created_at FROM checkout_sessions c WHERE c.id = a.session_id AND c.workspace_id = ? AND c.livemode = ?` +
			dates("c.created_at", from, to) + `) AS created_at`
		createdArgs := append([]any{workspaceID, livemode}, datesArgs(from, to)...)
		parts = append(parts, `SELECT `+created+`, a.session_id FROM payment_attempts a WHERE a.reference = ?`,
			`SELECT `+created+`, a.session_id FROM payment_attempts a
			WHERE a.gateway_id IN (SELECT id FROM gateways WHERE workspace_id = ?) AND a.provider_ref = ?`)
		args = append(append(args, createdArgs...), q.ID)
		args = append(append(args, createdArgs...), workspaceID, q.ID)
	}
	return strings.Join(parts, " UNION ALL "), args
}

// termRanges are the ranges of the terms' index a search reads, one query
// each selecting cols: each prefix's, each whole term's.
func termRanges(q search.Query, cols, workspaceID string, livemode bool, from, to time.Time) ([]string, []any) {
	var parts []string
	var args []any
	for _, p := range q.Prefixes {
		parts = append(parts, cols+` FROM search_terms WHERE workspace_id = ? AND livemode = ? AND term >= ? AND term < ?`+dates("created_at", from, to))
		args = append(append(args, workspaceID, livemode, p, p+"\U0010FFFF"), datesArgs(from, to)...)
	}
	for _, e := range q.Exact {
		parts = append(parts, cols+` FROM search_terms WHERE workspace_id = ? AND livemode = ? AND term = ?`+dates("created_at", from, to))
		args = append(append(args, workspaceID, livemode, e), datesArgs(from, to)...)
	}
	return parts, args
}

// A search reads the terms it matches from their index, groups them by
// session and sorts them to cut its page: its cost is the number of terms
// it matches. For a word most of a workspace's customers share (a common
// name, the shop's own domain in their e-mails) that is tens of thousands
// (45 to 110 ms for 11 000 customers at a million sessions, issue 24),
// although the page is in the newest few dozen sessions. Such a search
// walks the sessions instead, newest first, and probes each one's terms
// by its key, stopping at the page's end (searchWalk).
var (
	// searchWalkFrom is how many matching terms make a search walk the
	// sessions: below it, reading and sorting them costs less than
	// the walk (a variable for the tests).
	searchWalkFrom = 1000
	// searchWalkMax is how many sessions a walk reads at most, and
	// searchWalkEach how many for each row of the page: a search whose
	// page is not among them (its matches are many but old, or spread
	// thin over a large history) falls back to the terms (the cost of
	// the walk, a few milliseconds, is then lost).
	searchWalkMax  = 4000
	searchWalkEach = 20
)

// searchWalk returns the first need sessions (newest first) that a search
// whose terms match at least searchWalkFrom entries finds, from a walk of
// the workspace mode's sessions newest first, or nil when the search is
// not such a search or the walk did not find them all within its bound
// (then the terms are read: searchMatches). The sessions found by their
// id or reference are not walked for: searchMatches adds them.
func (s *Store) searchWalk(ctx context.Context, q search.Query, workspaceID string, livemode bool, from, to time.Time, need int) ([]string, error) {
	walk := need * searchWalkEach
	if need <= 0 || walk > searchWalkMax || len(q.Prefixes)+len(q.Exact) == 0 {
		return nil, nil
	}
	var page []string
	err := s.read(ctx, func(t *tx) error {
		// How many terms match, counted up to the bound from the index.
		parts, args := termRanges(q, `SELECT 1`, workspaceID, livemode, from, to)
		var n int
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM (`+strings.Join(parts, " UNION ALL ")+` LIMIT ?) m`,
			append(args, searchWalkFrom)...).Scan(&n); err != nil {
			return err
		}
		if n < searchWalkFrom {
			return nil
		}
		// Each walked session's terms by its key (the terms' session
		// index; no condition on the workspace, which would let the
		// planner take the terms' own range instead).
		var match []string
		var margs []any
		for _, p := range q.Prefixes {
			match = append(match, `t.term >= ? AND t.term < ?`)
			margs = append(margs, p, p+"\U0010FFFF")
		}
		for _, e := range q.Exact {
			match = append(match, `t.term = ?`)
			margs = append(margs, e)
		}
		wargs := append(append([]any{workspaceID, livemode}, datesArgs(from, to)...), walk)
		rows, err := t.query(ctx, `SELECT s.id FROM (SELECT id, created_at FROM checkout_sessions
			WHERE workspace_id = ? AND livemode = ?`+dates("created_at", from, to)+` ORDER BY created_at DESC, id DESC LIMIT ?) s
			WHERE EXISTS (SELECT 1 FROM search_terms t WHERE t.session_id = s.id AND (`+strings.Join(match, " OR ")+`))
			ORDER BY s.created_at DESC, s.id DESC LIMIT ?`, append(append(wargs, margs...), need)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			page = append(page, id)
		}
		return rows.Err()
	})
	if err != nil || len(page) < need {
		return nil, err
	}
	return page, nil
}

// dates is the condition that col is in [from, to) (a zero bound is
// open), for datesArgs's arguments.
func dates(col string, from, to time.Time) string {
	out := ""
	if !from.IsZero() {
		out += ` AND ` + col + ` >= ?`
	}
	if !to.IsZero() {
		out += ` AND ` + col + ` < ?`
	}
	return out
}

func datesArgs(from, to time.Time) []any {
	var out []any
	if !from.IsZero() {
		out = append(out, micros(from))
	}
	if !to.IsZero() {
		out = append(out, micros(to))
	}
	return out
}
