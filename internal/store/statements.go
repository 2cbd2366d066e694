package store

import (
	"context"
	"database/sql"
	"sync"
)

// statements caches SQLite's prepared statements, so that a query is
// parsed once per connection rather than at every call (parsing was a
// quarter of the service's CPU under load). PostgreSQL needs none: pgx
// caches each connection's statements itself.
//
// A query's first call runs unprepared while its statement is prepared in
// the background: preparing takes a connection of the pool, and a
// transaction waiting for one while others wait for its write lock would
// never get it. Within a transaction the statement runs on the
// transaction's own connection (sql.Tx.StmtContext), prepared there once.
type statements struct {
	on    bool // SQLite
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt // nil value: being prepared
}

// maxStatements bounds the cache: queries whose text varies (a list of ids)
// beyond it run unprepared.
const maxStatements = 1000

func (c *statements) get(db *sql.DB, q string) *sql.Stmt {
	if !c.on {
		return nil
	}
	c.mu.RLock()
	st, ok := c.stmts[q]
	c.mu.RUnlock()
	if ok {
		return st
	}
	c.mu.Lock()
	st, ok = c.stmts[q]
	if !ok && len(c.stmts) < maxStatements {
		if c.stmts == nil {
			c.stmts = map[string]*sql.Stmt{}
		}
		c.stmts[q] = nil
		go c.prepare(db, q)
	}
	c.mu.Unlock()
	return st
}

func (c *statements) prepare(db *sql.DB, q string) {
	st, err := db.PrepareContext(context.Background(), q)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil:
		delete(c.stmts, q) // the query's own call reports the error
	case !c.on: // closed meanwhile
		st.Close()
	default:
		c.stmts[q] = st
	}
}

// close closes the prepared statements (before the database).
func (c *statements) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		if st != nil {
			st.Close()
		}
		delete(c.stmts, q)
	}
	c.on = false
}
