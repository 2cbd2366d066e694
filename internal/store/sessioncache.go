package store

import (
	"maps"
	"sync"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
)

// sessionCache holds the sessions read by id (Store.Session: a status
// read, the hosted page), so that a session read many times a second (a
// customer's page and the merchant's server polling it) costs one query a
// second. It is kept on SQLite only, while the
// cache of keys is on (serve): there one server process makes every
// change to a session, through tx, and the other writer, the CLI's purge,
// moves the keys' epoch, which clears this cache with the keys' (see
// keyCache). A change made behind the server's back (by hand, by a
// migration a newer CLI applies, by a second server the lock file cannot
// see) is seen once the copy is older than sessionCacheTTL, measured on
// the machine's clock as the key cache's polls are (the age of a copy,
// not a time of the business). On PostgreSQL several nodes change
// sessions and telling every node of each change would cost every
// settlement a NOTIFY: each read goes to the store.
//
// A transaction that changes a session names it (tx.sessionChanged), and
// once it has committed (whatever the outcome) the session is dropped and
// the generation moves. A read fills the cache only when the generation
// has not moved since it began: what it read may predate the change. So a
// read that begins after a change has returned to its caller sees it.
type sessionCache struct {
	mu  sync.RWMutex
	gen uint64 // moved by each change and clear
	m   map[string]cachedSession
}

// cachedSession is a session as read, and when it was read.
type cachedSession struct {
	sess cauri.Session
	at   time.Time
}

// maxCachedSessions bounds the cache (about 1 KB each); it is cleared when
// full.
const maxCachedSessions = 10_000

// sessionCacheTTL is how long a copy is served (a variable for the tests):
// a status polled many times a second is read once a second.
var sessionCacheTTL = KeyCacheBound

// sessionsCached tells whether the session cache is in use.
func (s *Store) sessionsCached() bool {
	return s.kind == config.SQLite && s.keys.on.Load()
}

// cachedSession returns a copy of the cached session id, and the
// generation to fill the cache with when there is none (ok false).
func (s *Store) cachedSession(id string) (sess *cauri.Session, ok bool, gen uint64) {
	if !s.sessionsCached() {
		return nil, false, 0
	}
	c := &s.sessions
	c.mu.RLock()
	e, ok := c.m[id]
	gen = c.gen
	c.mu.RUnlock()
	if !ok || time.Since(e.at) >= sessionCacheTTL {
		return nil, false, gen
	}
	return copySession(&e.sess), true, gen
}

// cacheSession keeps a session read at generation gen, unless a session
// changed since.
func (s *Store) cacheSession(sess *cauri.Session, gen uint64) {
	if !s.sessionsCached() {
		return
	}
	c := &s.sessions
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= maxCachedSessions {
		c.m = map[string]cachedSession{}
	}
	c.m[sess.ID] = cachedSession{sess: *copySession(sess), at: time.Now()}
}

// copySession copies what a caller could change in place.
func copySession(sess *cauri.Session) *cauri.Session {
	cp := *sess
	cp.Metadata = maps.Clone(sess.Metadata)
	if sess.CompletedAt != nil {
		at := *sess.CompletedAt
		cp.CompletedAt = &at
	}
	return &cp
}

// sessionChanged names a session the transaction changes (see
// sessionCache).
func (t *tx) sessionChanged(id string) {
	if t.s.kind == config.SQLite {
		t.sessionIDs = append(t.sessionIDs, id)
	}
}

// changed is called after the commit of a transaction that changed the
// sessions ids.
func (c *sessionCache) changed(ids []string) {
	if len(ids) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, id := range ids {
		delete(c.m, id)
	}
}

func (c *sessionCache) clear() {
	c.mu.Lock()
	c.gen++
	c.m = nil
	c.mu.Unlock()
}

// clearCaches empties the caches of keys and of sessions: a change they
// cannot follow row by row was made (an epoch moved, a key changed, the
// cache turned on or off).
func (s *Store) clearCaches() {
	s.keys.clear()
	s.sessions.clear()
}

// sessionsDeleted marks a transaction that deletes sessions (a purge): on
// SQLite it moves the caches' epoch as a change to keys does, which
// clears this process's caches at its commit and, when the CLI purges, the
// server's before the purge returns.
func (t *tx) sessionsDeleted() {
	if t.s.kind == config.SQLite {
		t.keysChanged()
	}
}
