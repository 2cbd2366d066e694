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

	// ErrNotMember: the user of the dashboard session does not belong to
	// the workspace (or there is no such workspace).
	ErrNotMember = errors.New("store: not a member of the workspace")

	// ErrAlreadyMember: the invited address is already a member of the
	// workspace.
	ErrAlreadyMember = errors.New("store: already a member of the workspace")

	// ErrAccountExists: an account exists for the address, so a new one
	// (with a new password) cannot be made for it.
	ErrAccountExists = errors.New("store: an account exists for the address")

	// ErrNoAccount: no account exists for the address, and no password
	// hash was given to make one.
	ErrNoAccount = errors.New("store: no account for the address, and no password hash to make one")
)
