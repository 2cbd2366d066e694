//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
