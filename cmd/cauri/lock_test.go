//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
)

// TestServe_OneServerPerSQLiteFile: a second `cauri serve` on the SQLite
// file one serves refuses to start, saying which process has it; once the
// first stops, another starts (kill -9's release is the crash tests').
func TestServe_OneServerPerSQLiteFile(t *testing.T) {
	// In a folder that does not exist yet, as on a fresh machine's first start.
	db := "sqlite:" + filepath.Join(t.TempDir(), "data", "cauri.db")
	first := startServe(t, map[string]string{"CAURI_DATABASE_URL": db})
	second := map[string]string{"CAURI_DATABASE_URL": db, "CAURI_ADDR": freeAddr(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := run(ctx, []string{"serve"}, func(k string) string { return second[k] }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "another cauri serve") || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("a second server on the same file: %v; want it refused, naming the first's process", err)
	}
	first.stop()
	if err := <-first.done; err != nil {
		t.Fatal(err)
	}
	startServe(t, map[string]string{"CAURI_DATABASE_URL": db}) // the file is free again
}

// TestLockDatabase_ThroughAProbe: a server starting while a CLI probes the
// lock (databaseServed holds it shared for a moment) waits the probe out
// instead of refusing to start; a server's own hold still refuses it.
func TestLockDatabase_ThroughAProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cauri.db")
	probe, err := os.OpenFile(path+".serve.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := syscall.Flock(int(probe.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	was := probeWindow
	probeWindow = 10 * time.Second // the probe ends after 50 ms however loaded the machine
	defer func() { probeWindow = was }()
	released := time.AfterFunc(50*time.Millisecond, func() { syscall.Flock(int(probe.Fd()), syscall.LOCK_UN) })
	defer released.Stop()
	unlock, err := lockDatabase(path)
	probeWindow = was
	if err != nil {
		t.Fatalf("a start during a probe: %v; want the lock once the probe ends", err)
	}
	defer unlock()
	if !databaseServed(path) {
		t.Fatal("databaseServed: false while a server holds the lock")
	}
	if _, err := lockDatabase(path); err == nil || !strings.Contains(err.Error(), "another cauri serve") {
		t.Fatalf("a second server: %v; want it refused", err)
	}
}

// TestServe_KeyNudge: the CLI's nudge that keys changed (SIGUSR1 to the
// process holding the SQLite file's lock, here the test's own) is caught
// by the server, which clears its cache at the epoch the CLI moved. The
// server's own reads of the epoch are an hour apart here: only the nudge
// can clear it.
func TestServe_KeyNudge(t *testing.T) {
	was := keyPoll
	keyPoll = time.Hour
	t.Cleanup(func() { keyPoll = was })
	path := filepath.Join(t.TempDir(), "cauri.db")
	srv := startServe(t, map[string]string{"CAURI_DATABASE_URL": "sqlite:" + path})
	db, _, err := store.OpenDB("sqlite:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`UPDATE key_cache_epoch SET n = n + 1 WHERE id = 1 RETURNING n`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	nudgeServer(path)()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var cleared int64
		if err := db.QueryRow(`SELECT cleared FROM key_cache_epoch WHERE id = 1`).Scan(&cleared); err != nil {
			t.Fatal(err)
		}
		if cleared >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server cleared its cache at epoch %d; want %d", cleared, n)
		}
	}
	srv.stop()
	if err := <-srv.done; err != nil {
		t.Fatal(err)
	}
}
