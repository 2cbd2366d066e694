//go:build !unix

package main

import "os"

// lockDatabase does nothing where file locks are not the Unix ones: a
// second server on one SQLite file is not detected there.
func lockDatabase(string) (func(), error) { return func() {}, nil }

// databaseServed cannot tell where file locks are not the Unix ones: a
// change made by the CLI reaches the server's cache of keys at its next
// read of the epoch (KeyCacheBound), without waiting for it.
func databaseServed(string) bool { return false }

// nudgeServer has no signal to send where they are not the Unix ones: a
// change to keys reaches the server within KeyCacheBound.
func nudgeServer(string) func() { return nil }

// keyNudges receives nothing where signals are not the Unix ones.
func keyNudges() (<-chan os.Signal, func()) { return nil, func() {} }
