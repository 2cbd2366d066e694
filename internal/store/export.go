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

// ExportTransactions streams a workspace's transactions of one mode, newest
// first, to fn, without holding them in memory.
func (s *Store) ExportTransactions(ctx context.Context, workspaceID string, livemode bool, f ExportFilter, fn func(ExportRow) error) error {
	attempt := func(col string) string {
		return `COALESCE((SELECT a.` + col + ` FROM payment_attempts a WHERE a.session_id = s.id
			ORDER BY CASE WHEN a.status = 'succeeded' THEN 0 ELSE 1 END, a.created_at DESC LIMIT 1), '')`
	}
	from, args := `checkout_sessions s`, []any{}
	if f.Search != "" {
		// The matches first, then their sessions by id: a search costs
		// what it matches, not the workspace's history (CROSS JOIN keeps
		// that order on SQLite; PostgreSQL's planner chooses it itself).
		matches, margs := searchMatches(search.Parse(f.Search), workspaceID, livemode)
		from, args = `(`+matches+`) m CROSS JOIN checkout_sessions s`, margs
	}
	q := `SELECT ` + prefixed("s.", sessionColumns) + `, ` + attempt("operator") + `, ` + attempt("provider_ref") + `
		FROM ` + from + ` WHERE s.workspace_id = ? AND s.livemode = ?`
	args = append(args, workspaceID, livemode)
	if f.Search != "" {
		q += ` AND s.id = m.session_id`
	}
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
	return s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r ExportRow
			var extra [2]string
			r.Session, err = scanSession(scanAppend{rows, []any{&extra[0], &extra[1]}})
			if err != nil {
				return err
			}
			r.Operator, r.ProviderRef = extra[0], extra[1]
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
