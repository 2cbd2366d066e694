package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/jackc/pgx/v5"
)

// keyCache holds what Authenticate found for the API keys in use, so that
// a request reads its key from memory rather than from the store. It is on
// only while CacheKeys's work runs (serve starts it), which is what keeps
// it true:
//
//   - a transaction that changes a key or a workspace's row (tx.keysChanged)
//     adds one to key_cache_epoch before it commits and clears this
//     process's cache once committed: a revoked key stops at once here;
//   - on PostgreSQL (several nodes) it also sends a NOTIFY, delivered at
//     commit, which every node listens for on a connection of its own; each
//     clears its cache and answers, and the transaction waits for every
//     answer (up to KeyCacheBound). Every node also reads the epoch every
//     KeyCacheBound and clears its cache when it moved: the bound for a
//     notice lost with its connection;
//   - on SQLite (one server, and the CLI writing the same file from another
//     process) the CLI tells the server its change committed (NudgeKeyCaches:
//     a signal), and the server reads the epoch then and every
//     sqliteKeyPoll, clears its cache when it moved and writes the epoch it
//     cleared at; the CLI's change waits for that (AwaitKeyCaches): at
//     once when nudged, up to sqliteKeyPoll + KeyCacheBound when not.
//
// Either way, when the CLI or a request that changed a key returns, every
// cache has been cleared. A key's end (a rolled key's grace) is checked
// against the caller's time at each use; keys that match nothing are not
// kept (a new key works at once).
type keyCache struct {
	on    atomic.Bool
	nudge chan struct{} // RecheckKeys: read the epoch now
	mu    sync.RWMutex
	gen   uint64 // moved by each clear: a read that began before it does not fill
	m     map[string]cachedKey
}

// cachedKey is one key's Authenticate result.
type cachedKey struct {
	ws    cauri.Workspace
	key   cauri.Key
	until int64 // micros its grace ends; 0: none
}

// KeyCacheBound is how often PostgreSQL nodes read the epoch (the longest
// a change whose notice was lost takes to reach a node's cache), and the
// longest a change waits for the caches to be cleared.
const KeyCacheBound = time.Second

// sqliteKeyPoll is how often an SQLite server reads the epoch unasked: the
// longest a CLI change that could not nudge the server (RecheckKeys) takes
// to reach its cache. Read every 50 ms, the epoch was four fifths of an
// idle server's CPU (1.2 % of a core against 0.2).
const sqliteKeyPoll = KeyCacheBound

// maxCachedKeys bounds the cache; it is cleared when full.
const maxCachedKeys = 10_000

// keyChannel is PostgreSQL's NOTIFY channel of key changes (the payload is
// the change's token); each node answers on keyAckChannel with the token
// once its cache is cleared.
const (
	keyChannel    = "cauri_keys"
	keyAckChannel = "cauri_keys_cleared"
)

// get returns the cached result of a key's hash at now, and the generation
// to fill with when there is none.
func (c *keyCache) get(hash string, now time.Time) (*cauri.Workspace, *cauri.Key, bool, uint64) {
	c.mu.RLock()
	e, ok := c.m[hash]
	gen := c.gen
	c.mu.RUnlock()
	if !ok || (e.until != 0 && e.until <= micros(now)) {
		return nil, nil, false, gen
	}
	ws, k := e.ws, e.key
	return &ws, &k, true, gen
}

// put keeps a result read at generation gen, unless the cache was cleared
// since.
func (c *keyCache) put(hash string, gen uint64, e cachedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || !c.on.Load() {
		return
	}
	if c.m == nil || len(c.m) >= maxCachedKeys {
		c.m = map[string]cachedKey{}
	}
	c.m[hash] = e
}

func (c *keyCache) clear() {
	c.mu.Lock()
	c.gen++
	c.m = nil
	c.mu.Unlock()
}

// cachedKey returns the cached result of a key's hash, and the generation
// to fill the cache with when there is none (ok false).
func (s *Store) cachedKey(hash string, now time.Time) (*cauri.Workspace, *cauri.Key, bool, uint64) {
	if !s.keys.on.Load() {
		return nil, nil, false, 0
	}
	return s.keys.get(hash, now)
}

func (s *Store) keyEpoch(ctx context.Context) (n int64, err error) {
	err = s.read(ctx, func(t *tx) error {
		return t.queryRow(ctx, `SELECT n FROM key_cache_epoch WHERE id = 1`).Scan(&n)
	})
	return n, err
}

// keysChanged marks the transaction as changing a key or a workspace's
// row (or deleting sessions: sessionsDeleted): the caches are cleared
// when it commits (see keyCache and sessionCache).
func (t *tx) keysChanged() { t.clearsKeys = true }

// beforeKeysCommit is the end of a transaction that changed keys: the
// epoch moves and, on PostgreSQL, the nodes are told at commit. It returns
// what waits, after the commit, until the other caches are cleared (nil
// when there is nothing to wait for).
func (t *tx) beforeKeysCommit(ctx context.Context) (func(), error) {
	var n int64
	if err := t.queryRow(ctx, `UPDATE key_cache_epoch SET n = n + 1 WHERE id = 1 RETURNING n`).Scan(&n); err != nil {
		return nil, err
	}
	if t.s.kind != config.Postgres {
		if !t.s.AwaitKeyCaches {
			return nil, nil
		}
		return func() {
			if t.s.NudgeKeyCaches != nil {
				t.s.NudgeKeyCaches()
			}
			t.s.awaitCleared(n)
		}, nil
	}
	token := cauri.NewID("kc_")
	if _, err := t.exec(ctx, `SELECT pg_notify('`+keyChannel+`', ?)`, token); err != nil {
		return nil, err
	}
	// Who will be told: the connections listening now (a node's listening
	// connection runs nothing else, so its last query stays the LISTEN).
	// Each answers on keyAckChannel once its cache is cleared.
	var listeners int
	if err := t.queryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = ?`,
		"LISTEN "+keyChannel).Scan(&listeners); err != nil || listeners == 0 {
		return nil, nil
	}
	conn, err := t.s.listen(ctx, keyAckChannel)
	if err != nil {
		return nil, nil // the nodes are told all the same; only the wait is lost
	}
	return func() {
		defer conn.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), KeyCacheBound)
		defer cancel()
		for listeners > 0 {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			if n.Payload == token {
				listeners--
			}
		}
	}, nil
}

// awaitCleared waits until the SQLite server has cleared its cache at
// epoch n or later: at once when nudged, else at its next read of the
// epoch (sqliteKeyPoll), given KeyCacheBound more for that read and the
// write of what it cleared at.
func (s *Store) awaitCleared(n int64) {
	ctx, cancel := context.WithTimeout(context.Background(), sqliteKeyPoll+KeyCacheBound)
	defer cancel()
	for {
		var cleared int64
		err := s.read(ctx, func(t *tx) error {
			return t.queryRow(ctx, `SELECT cleared FROM key_cache_epoch WHERE id = 1`).Scan(&cleared)
		})
		if err != nil || cleared >= n {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// CacheKeys turns the cache of API keys on until ctx ends or the store
// closes: it reads the epoch every `every` (0: KeyCacheBound on
// PostgreSQL, sqliteKeyPoll on SQLite) and, on PostgreSQL, listens for the
// other nodes' changes; it returns once the listening is in place. Each
// later failure is given to report: the cache is off until the epoch can
// be read again, and cleared whenever a notice may have been missed.
func (s *Store) CacheKeys(ctx context.Context, every time.Duration, report func(error)) error {
	if every == 0 {
		every = sqliteKeyPoll
		if s.kind == config.Postgres {
			every = KeyCacheBound
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var conn *pgx.Conn
	if s.kind == config.Postgres {
		var err error
		if conn, err = s.listen(ctx, keyChannel); err != nil {
			cancel()
			return err
		}
	}
	last, err := s.keyEpoch(ctx)
	if err != nil {
		cancel()
		if conn != nil {
			conn.Close(context.Background())
		}
		return err
	}
	s.mu.Lock()
	s.stopCache = cancel
	s.mu.Unlock()
	s.clearCaches()
	s.keys.on.Store(true)
	if s.kind == config.SQLite { // a CLI waiting since before this start is answered
		err := s.tx(ctx, func(t *tx) error {
			_, err := t.exec(ctx, `UPDATE key_cache_epoch SET cleared = ? WHERE id = 1 AND cleared < ?`, last, last)
			return err
		})
		if err != nil {
			cancel()
			return err
		}
	}
	if conn != nil {
		go s.noticeKeys(ctx, conn, every, report)
	}
	go s.pollKeys(ctx, every, last, report)
	return nil
}

// RecheckKeys makes the cache of keys read the epoch now rather than at
// its next poll: the server calls it when the CLI nudges it.
func (s *Store) RecheckKeys() {
	select {
	case s.keys.nudge <- struct{}{}:
	default: // one is pending already
	}
}

// pollKeys clears the cache when the epoch moves (on SQLite, then writes
// the epoch it cleared at for the CLI waiting on it), and turns it off
// while the epoch cannot be read.
func (s *Store) pollKeys(ctx context.Context, every time.Duration, last int64, report func(error)) {
	defer func() { s.keys.on.Store(false); s.clearCaches() }()
	repeatOrNudged(ctx, every, s.keys.nudge, func() {
		n, err := s.keyEpoch(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.keys.on.Store(false)
			s.clearCaches()
			report(fmt.Errorf("key cache off: read the epoch: %w", err))
			return
		case n == last && s.keys.on.Load():
			return
		}
		s.clearCaches()
		last = n
		s.keys.on.Store(true)
		if s.kind == config.SQLite {
			err := s.tx(ctx, func(t *tx) error {
				_, err := t.exec(ctx, `UPDATE key_cache_epoch SET cleared = ? WHERE id = 1 AND cleared < ?`, n, n)
				return err
			})
			if err != nil && ctx.Err() == nil {
				report(fmt.Errorf("key cache: note the epoch cleared at: %w", err))
			}
		}
	})
}

// listen opens a connection of its own (LISTEN holds it) listening on
// channel.
func (s *Store) listen(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, s.target)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// noticeKeys clears the cache at each notice; a lost connection clears it
// too (notices may have been missed) and is opened again.
func (s *Store) noticeKeys(ctx context.Context, conn *pgx.Conn, every time.Duration, report func(error)) {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			s.clearCaches()
			if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, keyAckChannel, n.Payload); err != nil && ctx.Err() == nil {
				report(fmt.Errorf("key cache: tell the change's writer: %w", err))
			}
			continue
		}
		conn.Close(context.Background())
		s.clearCaches()
		for {
			if ctx.Err() != nil {
				return
			}
			report(fmt.Errorf("key cache: listen for other nodes' changes: %w", err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
			if conn, err = s.listen(ctx, keyChannel); err == nil {
				s.clearCaches() // changes made while no one listened
				break
			}
		}
	}
}
