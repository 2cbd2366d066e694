//go:build !unix

package main

// lockDatabase does nothing where file locks are not the Unix ones: a
// second server on one SQLite file is not detected there.
func lockDatabase(string) (func(), error) { return func() {}, nil }

// databaseServed cannot tell where file locks are not the Unix ones: a
// change made by the CLI reaches the server's cache of keys at its next
// read of the epoch (50 ms), without waiting for it.
func databaseServed(string) bool { return false }
