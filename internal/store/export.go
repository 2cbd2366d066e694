package store

import (
	"context"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
)

// ExportFilter narrows a transaction export.
type ExportFilter struct {
	Status   cauri.SessionStatus // "" for every status
	From, To time.Time           // [From, To); zero for open
	Search   string              // case-insensitive, in the order id, customer name and e-mail
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
	q := `SELECT ` + prefixed("s.", sessionColumns) + `, ` + attempt("operator") + `, ` + attempt("provider_ref") + `
		FROM checkout_sessions s WHERE s.workspace_id = ? AND s.livemode = ?`
	args := []any{workspaceID, livemode}
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
	if f.Search != "" {
		orderID := `json_extract(s.metadata, '$.order_id')`
		if s.kind == config.Postgres {
			orderID = `(s.metadata::json ->> 'order_id')`
		}
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(f.Search)) + "%"
		q += ` AND (LOWER(COALESCE(` + orderID + `, '')) LIKE ? ESCAPE '\' OR LOWER(s.customer_name) LIKE ? ESCAPE '\'
			OR LOWER(s.customer_email) LIKE ? ESCAPE '\')`
		args = append(args, like, like, like)
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
