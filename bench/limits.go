package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/store"
)

// The limits are bare programs doing the least a path must do, run in
// processes of their own like the service, on the same machine in the same
// run: each path's figure is read as a ratio to its limit.

// serveLimitHTTP answers every request with a fixed JSON body of size
// bytes: the ceiling of a read such as the status route.
func serveLimitHTTP(ln net.Listener, size int) error {
	body := []byte(`{"pad":"` + strings.Repeat("x", max(0, size-11)) + `"}`)
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}

// serveLimitDB inserts one row per request into the same kind of store,
// opened with the store's own settings (WAL and durable commits on
// SQLite, whose writers take the write lock in turn and whose WAL is
// checkpointed in the background, as the store's):
// the ceiling of a create.
func serveLimitDB(ln net.Listener, databaseURL string, size int) error {
	db, kind, err := store.OpenDB(databaseURL)
	if err != nil {
		return err
	}
	insert := `INSERT INTO bench_rows (id, body) VALUES ($1, $2)`
	if kind == config.SQLite {
		insert = `INSERT INTO bench_rows (id, body) VALUES (?, ?)`
		// Checkpointed in the background, as the server's store is.
		go store.Checkpoints(context.Background(), db, store.CheckpointEvery, func(err error) { fmt.Fprintln(os.Stderr, "limit-db:", err) })
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		return err
	}
	pad := strings.Repeat("x", size) // a row of a create request's size
	var n atomic.Int64
	var writer sync.Mutex
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := fmt.Sprint("row_", n.Add(1))
		if kind == config.SQLite {
			writer.Lock()
			defer writer.Unlock()
		}
		if _, err := db.ExecContext(r.Context(), insert, id, pad); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"id":%q}`, id)
	}))
}
