// Package storetest opens real databases for tests: a fresh embedded SQLite
// file and a fresh schema on the PostgreSQL server named by
// CAURI_TEST_DATABASE_URL (Each runs one test against both, so the two
// stores are held to the same behaviour), and the Redis of
// CAURI_TEST_REDIS_URL. With CI=true neither PostgreSQL nor Redis is ever
// skipped: a missing URL fails the test.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/vault"
)

// Vault is the vault every test store uses.
func Vault(t testing.TB) *vault.Vault {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{42}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Each runs fn as a subtest once per database kind, each with a fresh,
// migrated store.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// SQLiteURL returns the database URL of a fresh SQLite file.
func SQLiteURL(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "cauri.db")
}

// SQLite returns a migrated store on a fresh SQLite file.
func SQLite(t testing.TB) *store.Store {
	t.Helper()
	return Open(t, SQLiteURL(t))
}

// RedisURL returns the test Redis's URL (CAURI_TEST_REDIS_URL), for the
// tests of what nodes share through Redis. It skips the test when none is
// configured, except under CI where it fails (.ci/run starts one).
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("CAURI_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CAURI_TEST_REDIS_URL is not set; the Redis tests must run in CI")
		}
		t.Skip("CAURI_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0); skipping the Redis test")
	}
	return u
}

// PostgresURL returns the URL of a fresh, empty schema on the test server,
// dropped when the test ends. It skips the test when no server is
// configured, except under CI where it fails.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("CAURI_TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CAURI_TEST_DATABASE_URL is not set; the PostgreSQL tests must run in CI")
		}
		t.Skip("CAURI_TEST_DATABASE_URL is not set; skipping the PostgreSQL run")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 8)
	rand.Read(b)
	schema := "test_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema on %s: %v", base, err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err == nil {
			admin.Exec("DROP SCHEMA " + schema + " CASCADE")
			admin.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres returns a migrated store on a fresh PostgreSQL schema.
func Postgres(t testing.TB) *store.Store {
	t.Helper()
	return Open(t, PostgresURL(t))
}

// Open opens and migrates the store at dbURL, closed when the test ends
// (two stores on one URL are two nodes).
func Open(t testing.TB, dbURL string) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, dbURL, Vault(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// Workspace stores a new workspace named name with its keys, verified (its
// live keys make live objects) when verified.
func Workspace(t testing.TB, st *store.Store, name string, verified bool, now time.Time) *cauri.Workspace {
	t.Helper()
	ctx := context.Background()
	ws, err := cauri.NewWorkspace(name, now)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := cauri.KeySet(ws.ID, now)
	if err := st.CreateWorkspace(ctx, ws, keys); err != nil {
		t.Fatal(err)
	}
	if verified {
		if ws, err = st.VerifyWorkspace(ctx, ws.ID, now); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// Gateway connects a live gateway of provider to ws, at baseURL (a
// simulator or a fake on loopback), serving countries, collecting and
// paying out.
func Gateway(t testing.TB, st *store.Store, ws *cauri.Workspace, provider, baseURL string, creds map[string]string, now time.Time, countries ...string) *cauri.Gateway {
	t.Helper()
	p, _ := gateway.Lookup(provider)
	routes, err := p.Routes(countries)
	if err != nil {
		t.Fatal(err)
	}
	g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: provider, Name: p.Name, Live: true, BaseURL: baseURL,
		Collect: true, Payout: true, Enabled: true, Routes: routes, CreatedAt: now}
	if err := st.CreateGateway(context.Background(), g, creds); err != nil {
		t.Fatal(err)
	}
	return g
}
