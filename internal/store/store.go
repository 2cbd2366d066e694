// Package store keeps Cauri's state in SQL: embedded SQLite (pure Go, WAL)
// for a single machine, PostgreSQL for several nodes. One set of portable
// queries serves both through a small dialect seam (placeholders, row
// locks); the schema is versioned migrations embedded in the binary. Every
// method takes ctx first and runs in one transaction, and every status
// change writes its event in that same transaction (the outbox). It holds
// no business rule: a rule that must be decided inside a transaction is
// the caller's func, given the facts read there, and what the store finds
// is reported as a sentinel error (errors.go) for the services to word.
//
// It imports the domain package, the vault and the database drivers, and
// knows nothing of HTTP.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/vault"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // registers "sqlite"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the database. It is safe for concurrent use.
type Store struct {
	// DeliveryAttempts is the number of automatic attempts of a new webhook
	// delivery (the length of the retry schedule); 0 means the SPEC's 10.
	DeliveryAttempts int
	// AwaitKeyCaches makes a change to keys wait until the server that has
	// this SQLite file open has cleared its cache of keys (see keyCache):
	// the CLI sets it when a server is running.
	AwaitKeyCaches bool
	// NudgeKeyCaches, when set, tells that server a change to keys
	// committed, before the wait: it reads the epoch at once rather than
	// at its next poll (sqliteKeyPoll).
	NudgeKeyCaches func()

	db    *sql.DB
	kind  string // config.SQLite or config.Postgres
	vault *vault.Vault
	stmts statements
	// writer lets one of this process's batches of transactions at a time
	// ask for SQLite's write lock, in turn: waiting for it in SQLite's busy
	// handler polls with sleeps of up to 100 ms, and under load a writer
	// can lose the race many times (another process, the CLI, still waits
	// there). queue holds the transactions waiting (writer.go).
	writer   chan struct{}
	queue    writeQueue
	keys     keyCache
	sessions sessionCache
	target   string // the driver's connection string (LISTEN opens its own)

	mu        sync.Mutex
	stopCache context.CancelFunc // ends CacheKeys's work; nil when not started
}

// Open connects to the database named by a CAURI_DATABASE_URL value (see
// config.ParseDatabaseURL), creating an embedded SQLite file and its folder
// when they do not exist. It does not migrate.
func Open(ctx context.Context, databaseURL string, v *vault.Vault) (*Store, error) {
	db, kind, err := OpenDB(databaseURL)
	if err != nil {
		return nil, err
	}
	_, target, _ := config.ParseDatabaseURL(databaseURL) // parsed by OpenDB already
	s := &Store{db: db, kind: kind, vault: v, stmts: statements{on: kind == config.SQLite}, target: target}
	s.keys.nudge = make(chan struct{}, 1)
	if kind == config.SQLite {
		s.writer = make(chan struct{}, 1)
	}
	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", kind, err)
	}
	return s, nil
}

// OpenDB opens the database itself, with the settings the store uses
// (WAL and durable commits on SQLite, the connection pool): the benchmark's
// database limit is measured on exactly this.
func OpenDB(databaseURL string) (db *sql.DB, kind string, err error) {
	kind, target, err := config.ParseDatabaseURL(databaseURL)
	if err != nil {
		return nil, "", err
	}
	switch kind {
	case config.SQLite:
		if dir := filepath.Dir(target); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, "", fmt.Errorf("create database folder: %w", err)
			}
		}
		if db, err = sql.Open("sqlite", sqliteDSN(target)); err != nil {
			return nil, "", err
		}
		// Writers queue on the file lock (busy_timeout); a handful of
		// connections lets readers work beside the one writer under WAL.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8) // kept open: a new connection parses the schema again
	case config.Postgres:
		if db, err = sql.Open("pgx", postgresDSN(target)); err != nil {
			return nil, "", err
		}
		db.SetMaxOpenConns(20)
		db.SetMaxIdleConns(20) // kept open (the default keeps 2): a new connection is a new server process
		db.SetConnMaxIdleTime(5 * time.Minute)
	}
	return db, kind, nil
}

// postgresDSN is the URL with the session settings the store's queries
// want: no JIT compilation (PostgreSQL's planner compiles a query whose
// estimated cost passes jit_above_cost, which a page of a big merchant's
// list does on a table without fresh statistics: 250 ms of compiling for a
// 1 ms read), unless the URL sets it.
func postgresDSN(target string) string {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return target // key=value form: as given
	}
	q := u.Query()
	if !q.Has("jit") {
		q.Set("jit", "off")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// sqliteDSN turns a path into modernc's DSN. WAL lets readers work during a
// write; synchronous(FULL) makes every commit durable across a power loss,
// which payments need; _txlock=immediate takes the write lock at BEGIN so two
// writers never deadlock upgrading a read lock; checkpoints are the
// server's, in the background (checkpoint.go). Each connection's page
// cache is sqliteCacheKiB. temp_store(MEMORY) keeps the sub-journals of
// the savepoints group commit runs each transaction in (writer.go) in
// memory: on disk, SQLite spills them to a temporary file past 64 KiB and
// writes each saved page with two calls to the kernel, a fifth of a
// settlement's CPU (BenchmarkSettleSandbox/sqlite: 196 to 216 µs against
// 233 to 270, docs/benchmarks.md). A batch's sub-journal holds the pages
// it changes, a few MB at most; sorts use that memory too.
// mmap_size maps the file's first sqliteMmapBytes into the process: a page
// the connection's small cache lacks is read where the operating system
// caches it, shared by every connection, rather than copied in by a call
// to the kernel and decoded into that connection's cache. In a store
// grown over months a page of a list reads its rows from as many pages of
// the file: with a million sessions, most of the dashboard's and the API's
// reads were 1.4 to 2.3 times faster with it (issue 24, docs/benchmarks.md,
// 2026-11-26 11:33 and 11:50). Those pages count in the process's resident memory
// as the file's, not its own (docs/operations.md, "Memory").
func sqliteDSN(path string) string {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(FULL)", "temp_store(MEMORY)",
		"mmap_size(" + strconv.Itoa(sqliteMmapBytes) + ")",
		"wal_autocheckpoint(" + strconv.Itoa(walAutocheckpoint) + ")", "cache_size(-" + strconv.Itoa(sqliteCacheKiB) + ")"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// sqliteCacheKiB is each SQLite connection's page cache, in KiB (SQLite's
// default is 2 000). The service keeps 8 connections open, and the pure-Go
// SQLite's allocator holds a 4 KiB page in about 7 KiB: at a million
// sessions their full default caches held 28 MB of the service's memory,
// which took it over 100 MB during an export (issue 24; docs/benchmarks.md,
// 2026-11-26). A page the cache lacks is read from the operating system's
// cache of the file, not from the disk, once the file has been read: the
// reads that need a large cache (an export, a whole-history job) read
// each page once anyway.
const sqliteCacheKiB = 1024

// sqliteMmapBytes is how much of the file is mapped: SQLite's own ceiling
// (SQLITE_MAX_MMAP_SIZE, 0x7fff0000); past it, pages are read as without.
const sqliteMmapBytes = 0x7fff0000

// Kind is config.SQLite or config.Postgres.
func (s *Store) Kind() string { return s.kind }

// Close closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.stopCache != nil {
		s.stopCache()
	}
	s.mu.Unlock()
	s.stmts.close()
	return s.db.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Heartbeat writes node's heartbeat at now and reads it back, in one
// transaction: it fails when the store cannot write (a full disk) or read.
func (s *Store) Heartbeat(ctx context.Context, node string, now time.Time) error {
	return s.tx(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO node_heartbeats (node, at) VALUES (?, ?)
			ON CONFLICT (node) DO UPDATE SET at = excluded.at`, node, micros(now)); err != nil {
			return err
		}
		var at int64
		return t.queryRow(ctx, `SELECT at FROM node_heartbeats WHERE node = ?`, node).Scan(&at)
	})
}

// Migrate applies the embedded migrations that the database lacks. On
// PostgreSQL an advisory lock lets several nodes start at once.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.migrations()
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if s.kind == config.SQLite {
		// SQLite's planner has statistics only where ANALYZE left them:
		// this gathers those a migration's new indexes lack (a bounded
		// look, not a whole ANALYZE); the server repeats it hourly.
		if _, err := s.db.ExecContext(ctx, `PRAGMA optimize=0x10002`); err != nil {
			return fmt.Errorf("migrate: optimize: %w", err)
		}
	}
	return nil
}

// migrations is the store's migrations: the embedded SQL files and the Go
// migrations.
func (s *Store) migrations() (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.kind == config.Postgres {
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	opts = append(opts, goose.WithGoMigrations(s.searchTermsMigration(), s.searchTermsByTimeMigration()))
	return goose.NewProvider(dialect, s.db, sub, opts...)
}

// writerWait is how long a transaction waits for its write turn: the
// busy_timeout of the SQLite connection (sqliteDSN).
const writerWait = 10 * time.Second

// tx runs fn in one transaction, committed when fn returns nil. On SQLite
// it takes the write lock at once: use it for changes.
func (s *Store) tx(ctx context.Context, fn func(*tx) error) error {
	if s.writer != nil {
		return s.groupTx(ctx, fn) // writer.go
	}
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &tx{q: sqlTx, sqlTx: sqlTx, s: s}
	err = fn(t)
	if err == nil && t.counts != nil {
		err = t.writeCounts(ctx)
	}
	var told func()
	if err == nil && t.clearsKeys {
		told, err = t.beforeKeysCommit(ctx)
	}
	if err == nil {
		err = t.flush(ctx)
	}
	if t.laterErr != nil {
		err = t.laterErr // the cause of what failed after it
	}
	if err != nil {
		sqlTx.Rollback()
		return err
	}
	err = sqlTx.Commit()
	s.sessions.changed(t.sessionIDs) // even when the commit's outcome is unknown
	if t.clearsKeys {
		s.clearCaches() // even when the commit's outcome is unknown
	}
	if told != nil {
		told()
	}
	return err
}

// read runs fn's queries straight on the pool, outside any transaction:
// reads take no lock, so they never queue behind SQLite's one writer, and
// cost no BEGIN and COMMIT round trips on PostgreSQL. Each statement sees a
// committed state; use tx where several must agree.
func (s *Store) read(ctx context.Context, fn func(*tx) error) error {
	return fn(&tx{q: s.db, s: s})
}

// querier is *sql.Tx or *sql.DB.
type querier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// tx runs queries with the dialect's placeholders, in a transaction or not,
// through the prepared statement of each query once there is one.
type tx struct {
	q          querier
	sqlTx      *sql.Tx // nil outside a transaction
	s          *Store
	clearsKeys bool                            // see keysChanged
	sessionIDs []string                        // the sessions it changes (sessionChanged)
	counts     map[rollupKey]rollupCount       // the overview's counts this transaction changes (rollups.go)
	hooks      map[string]*cauri.WebhookConfig // webhook settings read with their workspace (workspaceAndHooks)
	// uncancelled runs the statements without their context's cancellation
	// (a batch of SQLite transactions: writer.go).
	uncancelled bool
	later       []laterStatement            // deferred writes, sent together (execLater)
	laterErr    error                       // the error of the last flush of later, if any
	workspaces  map[string]*cauri.Workspace // workspaces read in this transaction (workspaceAndHooks)
}

// QueryLog receives each query a store method runs in a context given
// WithQueryLog, as sent to the database (placeholders rebound), with its
// arguments.
type QueryLog func(q string, args []any)

type queryLogKey struct{}

// WithQueryLog makes the store's methods called with ctx report each query
// to log (the plan test reads every query of a path this way).
func WithQueryLog(ctx context.Context, log QueryLog) context.Context {
	return context.WithValue(ctx, queryLogKey{}, log)
}

// sent rebinds q for the database and reports it to the context's query
// log, if any.
func (t *tx) sent(ctx context.Context, q string, args []any) string {
	q = t.s.rebind(q)
	if log, ok := ctx.Value(queryLogKey{}).(QueryLog); ok {
		log(q, args)
	}
	return q
}

func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	ctx, q = t.statement(ctx), t.sent(ctx, q, args)
	if st := t.prepared(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.q.ExecContext(ctx, q, args...)
}

func (t *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	t.flush(ctx) // its error is kept in laterErr; the query then fails on the aborted transaction
	ctx, q = t.statement(ctx), t.sent(ctx, q, args)
	if st := t.prepared(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.q.QueryRowContext(ctx, q, args...)
}

func (t *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	ctx, q = t.statement(ctx), t.sent(ctx, q, args)
	if st := t.prepared(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.q.QueryContext(ctx, q, args...)
}

// statement is the context a statement runs with: ctx, without its
// cancellation in a batch of SQLite transactions (writer.go).
func (t *tx) statement(ctx context.Context) context.Context {
	if t.uncancelled {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// prepared is q's prepared statement (in the transaction, if any), or nil
// while it has none yet.
func (t *tx) prepared(ctx context.Context, q string) *sql.Stmt {
	st := t.s.stmts.get(t.s.db, q)
	if st == nil || t.sqlTx == nil {
		return st
	}
	return t.sqlTx.StmtContext(ctx, st)
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, t *tx, scan func(interface{ Scan(...any) error }) (T, error), q string, args ...any) ([]T, error) {
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// forUpdate is the row-lock clause: PostgreSQL locks the row; SQLite needs
// nothing because an immediate transaction already holds the write lock.
func (s *Store) forUpdate() string {
	if s.kind == config.Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// rebind rewrites ? placeholders as $1, $2, ... for PostgreSQL. Queries in
// this package never contain a literal question mark.
func (s *Store) rebind(q string) string { return Rebind(s.kind, q) }

// Rebind writes a query of ? placeholders for a database kind: $1, $2, ...
// for PostgreSQL (the benchmark's bulk loads use it too).
func Rebind(kind, q string) string {
	if kind != config.Postgres {
		return q
	}
	// A '?' is one byte in UTF-8 and no byte of another character: the
	// text between two is copied whole (this runs for every query).
	b := make([]byte, 0, len(q)+16)
	n := 0
	for {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			break
		}
		n++
		b = append(b, q[:i]...)
		b = strconv.AppendInt(append(b, '$'), int64(n), 10)
		q = q[i+1:]
	}
	return string(append(b, q...))
}

// micros and fromMicros convert times to the stored form.
func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func fromNullMicros(us sql.NullInt64) *time.Time {
	if !us.Valid {
		return nil
	}
	t := fromMicros(us.Int64)
	return &t
}

func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

// notFound turns sql.ErrNoRows into the domain's not-found error.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return errNotFound(format, args...)
	}
	return err
}

// qualify prefixes each of a list of columns with a table's name.
func qualify(table, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = table + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
