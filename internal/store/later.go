package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri/internal/config"
)

// On PostgreSQL each statement of a transaction is a round trip to the
// server, and the writes that end a state change (the row's update, its
// event, the event's webhook delivery, the overview's counts) need no
// answer. They are deferred, and sent together as one statement of
// data-modifying WITH clauses just before the transaction's next query or
// its commit: with its one read (the session locked, with its workspace),
// a settlement takes four round trips instead of eight.
// SQLite runs each at once (no round trip to save).

// laterStatement is a deferred write: its query, arguments, and the row it
// changes ("" for an insert of a new row).
type laterStatement struct {
	row, q string
	args   []any
}

// execLater runs a write whose result nobody reads, now or with the
// transaction's next statement (PostgreSQL). row names the existing row
// it changes, if any: the statements sent together see the same snapshot
// and must not change one row twice, so a second change of row sends the
// first before it is deferred.
func (t *tx) execLater(ctx context.Context, row, q string, args ...any) error {
	if t.s.kind != config.Postgres || t.sqlTx == nil {
		_, err := t.exec(ctx, q, args...)
		return err
	}
	if row != "" {
		for _, l := range t.later {
			if l.row == row {
				if err := t.flush(ctx); err != nil {
					return err
				}
				break
			}
		}
	}
	t.later = append(t.later, laterStatement{row: row, q: q, args: args})
	return nil
}

// flush sends the deferred writes, in one statement when there are
// several. Its error is also kept in laterErr: the caller that fails next
// on the aborted transaction reports its cause (tx).
func (t *tx) flush(ctx context.Context) error {
	if len(t.later) == 0 {
		return nil
	}
	later := t.later
	t.later = nil
	q, args := later[0].q, later[0].args
	if len(later) > 1 {
		var b strings.Builder
		args = nil
		for i, l := range later {
			if i == len(later)-1 {
				b.WriteString(" ")
			} else {
				if i == 0 {
					b.WriteString("WITH ")
				} else {
					b.WriteString(", ")
				}
				b.WriteString("w" + strconv.Itoa(i) + " AS (")
			}
			b.WriteString(l.q)
			if i < len(later)-1 {
				b.WriteString(")")
			}
			args = append(args, l.args...)
		}
		q = b.String()
	}
	if _, err := t.exec(ctx, q, args...); err != nil {
		t.laterErr = err
		return err
	}
	return nil
}
