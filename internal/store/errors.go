package store

import "errors"

// The store's sentinel errors: facts the store finds inside its
// transaction, reported for the services to decide on and word (with
// errors.Is). The store itself words none of them for a client; an
// unmapped sentinel is an internal error.
var (
	// ErrNotFound: the row asked for does not exist (or not for this
	// workspace).
	ErrNotFound = errors.New("store: not found")

	// ErrIdempotencyMismatch: the idempotency key was already used, within
	// its lifetime, for another kind of object or with another
	// fingerprint.
	ErrIdempotencyMismatch = errors.New("store: idempotency key used with a different request")
)
