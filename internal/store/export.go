package store

import (
	"context"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/search"
)

// ExportFilter narrows a transaction export.
type ExportFilter struct {
	Status   cauri.SessionStatus // "" for every status
	From, To time.Time           // [From, To); zero for open
	Search   string              // what package search reads: a name, e-mail, order id, phone, session id or reference
	Limit    int
	Offset   int // rows skipped, for the dashboard's pages
}

// ExportRow is one transaction of an export: the session, and from its
// deciding attempt (the one that succeeded, else the latest) the operator
// and the aggregator's reference.
type ExportRow struct {
	Session     *cauri.Session
	Operator    string
	ProviderRef string
}

// attemptSep joins an attempt's operator and aggregator reference in one
// column: the unit separator, in no operator's name.
const attemptSep = "\x1f"

// ExportTransactions streams a workspace's transactions of one mode, newest
// first, to fn, without holding them in memory.
func (s *Store) ExportTransactions(ctx context.Context, workspaceID string, livemode bool, f ExportFilter, fn func(ExportRow) error) error {
	// The deciding attempt's operator and aggregator reference, in one
	// look-up of its session's index (which holds both): joined by a
	// separator no operator's name holds, split below. Two look-ups per
	// row read twice the pages of a year of history.
	deciding := `COALESCE((SELECT a.operator || '` + attemptSep + `' || a.provider_ref FROM payment_attempts a WHERE a.session_id = s.id
			ORDER BY CASE WHEN a.status = 'succeeded' THEN 0 ELSE 1 END, a.created_at DESC LIMIT 1), '')`
	cols := prefixed("s.", sessionColumns) + `, ` + deciding
	var q string
	var args []any
	switch {
	case f.Search != "" && f.Status == "":
		// The page is chosen from the terms' index alone, newest first,
		// then only its sessions are read, by their key: a search that
		// matches every customer reads their terms' entries, never their
		// sessions. The matches are the workspace's mode's already (a
		// condition on the sessions here would let a planner without
		// statistics walk the workspace's sessions instead).
		// A word most customers share is found by walking the sessions
		// instead (searchWalk): its page's sessions replace its terms.
		sq := search.Parse(f.Search)
		page, err := s.searchWalk(ctx, sq, workspaceID, livemode, f.From, f.To, f.Limit+f.Offset)
		if err != nil {
			return err
		}
		matches, margs := searchMatches(sq, workspaceID, livemode, f.From, f.To, page)
		// A session is grouped by its id alone, at its newest time: during
		// a rolling upgrade it may have terms without the time (0) too.
		q = `SELECT ` + cols + ` FROM (SELECT MAX(created_at) AS created_at, session_id FROM (` + matches + `) m WHERE created_at IS NOT NULL
			GROUP BY session_id ORDER BY MAX(created_at) DESC, session_id DESC LIMIT ? OFFSET ?) p
			CROSS JOIN checkout_sessions s WHERE s.id = p.session_id
			ORDER BY p.created_at DESC, p.session_id DESC`
		args = append(margs, f.Limit, f.Offset)
	case f.Search != "":
		// The status is the session's: each match's session is read, as
		// before the terms had their time (CROSS JOIN keeps the matches
		// first on SQLite; PostgreSQL's planner chooses between them and
		// the list's index by status).
		matches, margs := searchMatches(search.Parse(f.Search), workspaceID, livemode, f.From, f.To, nil)
		q = `SELECT ` + cols + ` FROM (SELECT DISTINCT session_id FROM (` + matches + `) m WHERE created_at IS NOT NULL) p
			CROSS JOIN checkout_sessions s WHERE s.id = p.session_id AND s.workspace_id = ? AND s.livemode = ? AND s.status = ?
			ORDER BY s.created_at DESC, s.id DESC LIMIT ? OFFSET ?`
		args = append(margs, workspaceID, livemode, string(f.Status), f.Limit, f.Offset)
	default:
		q = `SELECT ` + cols + ` FROM checkout_sessions s WHERE s.workspace_id = ? AND s.livemode = ?`
		args = []any{workspaceID, livemode}
		if f.Status != "" {
			q += ` AND s.status = ?`
			args = append(args, string(f.Status))
		}
		if !f.From.IsZero() {
			q += ` AND s.created_at >= ?`
			args = append(args, micros(f.From))
		}
		if !f.To.IsZero() {
			q += ` AND s.created_at < ?`
			args = append(args, micros(f.To))
		}
		q += ` ORDER BY s.created_at DESC, s.id DESC LIMIT ? OFFSET ?`
		args = append(args, f.Limit, f.Offset)
	}
	return s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r ExportRow
			var deciding string
			r.Session, err = scanSession(scanAppend{rows, []any{&deciding}})
			if err != nil {
				return err
			}
			r.Operator, r.ProviderRef, _ = strings.Cut(deciding, attemptSep)
			if err := fn(r); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// scanAppend scans a row's leading columns with the caller's targets and
// its trailing ones into extra.
type scanAppend struct {
	row   interface{ Scan(...any) error }
	extra []any
}

func (s scanAppend) Scan(dest ...any) error { return s.row.Scan(append(dest, s.extra...)...) }

// prefixed qualifies a column list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
