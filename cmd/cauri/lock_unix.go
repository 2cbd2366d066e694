//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockDatabase keeps a second `cauri serve` off an embedded SQLite
// database one already serves: an exclusive lock on {path}.serve.lock,
// which the system releases when the process ends however it ends (a kill
// -9 included). The lock file holds the serving process's id, for the
// message. It returns the function that releases it.
func lockDatabase(path string) (func(), error) {
	// The folder may not exist yet: the first start creates it, as the
	// store would.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("database lock: %w", err)
	}
	f, err := os.OpenFile(path+".serve.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("database lock: %w", err)
	}
	if err := lockExclusive(f); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(b[:n]))
			return nil, fmt.Errorf("another cauri serve (process %s) already serves the database %s: stop it first, or give this one a database of its own (CAURI_DATABASE_URL); several nodes share PostgreSQL, not a SQLite file", pid, path)
		}
		return nil, fmt.Errorf("database lock: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Truncate(0); f.Close() }, nil
}

// probeWindow is how long a starting server tries again for the lock: a
// CLI's probe (databaseServed) holds it for a moment, a server until it
// ends (flock cannot tell the two apart, so a second server is refused
// after this long). (A variable for the
// test, which gives a loaded machine more room.)
var probeWindow = 250 * time.Millisecond

// lockExclusive takes f's exclusive lock, trying again for probeWindow
// while another holds it.
func lockExclusive(f *os.File) error {
	deadline := time.Now().Add(probeWindow)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// databaseServed reports whether a `cauri serve` holds the lock of the
// SQLite database at path (lockDatabase).
func databaseServed(path string) bool {
	f, err := os.Open(path + ".serve.lock")
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// nudgeServer returns what tells the `cauri serve` that holds the SQLite
// database at path that keys changed: SIGUSR1 to the process its lock file
// names, and only once that process is seen holding the lock file open
// (its /proc entry): an id from another PID namespace (a server in a
// container, the CLI outside) or a stale one names another process. The
// server then clears its cache of keys at once rather than at its next
// read of the epoch. Nothing is sent when that cannot be seen (no /proc,
// a server of another user): the change reaches it at that read, which
// the CLI waits for (store.KeyCacheBound twice at most).
func nudgeServer(path string) func() {
	lock := path + ".serve.lock"
	return func() {
		if !databaseServed(path) {
			return
		}
		b, err := os.ReadFile(lock)
		if err != nil {
			return
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || !holdsOpen(pid, lock) {
			return
		}
		syscall.Kill(pid, syscall.SIGUSR1)
	}
}

// holdsOpen reports whether process pid has the file at path open.
func holdsOpen(pid int, path string) bool {
	want, err := os.Stat(path)
	if err != nil {
		return false
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if got, err := os.Stat(filepath.Join(dir, fd.Name())); err == nil && os.SameFile(got, want) {
			return true
		}
	}
	return false
}

// keyNudges receives the CLI's nudges (nudgeServer) until stop is called.
// The server asks for them before it takes the database's lock, so that
// none is lost once the lock names it.
func keyNudges() (nudges <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	return ch, func() { signal.Stop(ch) }
}
