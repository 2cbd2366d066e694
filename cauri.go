// Package cauri holds Cauri's domain: workspaces and their keys, checkout
// sessions and their states, money in minor units, events, and the error
// type every layer returns. It imports only the standard library; storage,
// HTTP and the outside world live in the internal/ packages that depend on it.
package cauri

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Error codes. Each maps to one HTTP status in the web package; anything else
// is an internal error that is logged and never echoed to a client.
const (
	EInvalid          = "invalid"            // 400: bad parameter
	EUnauthorized     = "unauthorized"       // 401: key missing or invalid
	EForbidden        = "forbidden"          // 403
	ENotFound         = "not_found"          // 404
	EConflict         = "conflict"           // 409: state forbids the action, or a request still in flight
	ETooLarge         = "too_large"          // 413
	EUnsupported      = "unsupported"        // 415: content type
	EUnprocessable    = "unprocessable"      // 422: idempotency key reused with another payload
	ERateLimited      = "rate_limited"       // 429
	EInternal         = "internal"           // 500
	EPayment          = "payment"            // 402: insufficient balance
	EBadGateway       = "bad_gateway"        // 502: the aggregator refused; the message carries its answer
	EUnavailable      = "unavailable"        // 503: the partner API is disabled
	EMethodNotAllowed = "method_not_allowed" // 405: the path takes other methods
)

// Error is an error whose message is safe to show to the API client.
type Error struct {
	Code    string
	Message string
	// Reason, when set, is the machine-readable code the client reads in
	// the error body's "code" (SPEC section 7: "montant_invalide", ...).
	Reason string
	// Entity, when set, is the kind of object the error is about
	// ("transfer", "session", ...): with Code, it picks the body's code
	// where a route gives one to every error (the transfers').
	Entity string
	// Cause, when set, is what went wrong underneath: logged, never shown.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("cauri error: code=%s message=%s cause=%v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("cauri error: code=%s message=%s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Reasonf returns an *Error with a machine-readable reason for the client.
func Reasonf(code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// NotFound is ENotFound about the object of kind entity named id, as a
// client asked for it: "Transfer tr_... not found".
func NotFound(entity, id string) *Error {
	name := entity
	if name != "" {
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	return &Error{Code: ENotFound, Entity: entity, Message: fmt.Sprintf("%s %s not found", name, Printable(id))}
}

// ErrorEntity returns the kind of object err is about, or "".
func ErrorEntity(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Entity
	}
	return ""
}

// ErrorReason returns the machine-readable reason of err, or "".
func ErrorReason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// ErrorCode returns the code of err when it is (or wraps) an *Error, "" for
// no error, else EInternal.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the client-safe message of err, or a generic one.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error"
}

// NewID returns prefix followed by 160 random bits in lowercase base32
// (32 characters). IDs are unguessable: a session id alone lets its holder
// open the hosted page and settle a test payment.
func NewID(prefix string) string {
	return prefix + randomString(20)
}

// sortable is base32 in the order of its characters' bytes.
const sortable = "234567abcdefghijklmnopqrstuvwxyz"

// NewLogID returns an id of NewID's shape (IsID accepts it) for a row of
// an append-only log (events, webhook deliveries): its first 9 characters
// are at, the row's creation time, in milliseconds, in an alphabet whose
// order is its bytes' order, then 115 random bits. Ids made later sort
// later, so the id's index grows at its end, as UUIDv7's do, where random
// ids write each new entry into a page of their own anywhere in the index
// (a page written to the log at every commit: issue 18). Still unguessable;
// the time it tells, the row shows anyway.
func NewLogID(prefix string, at time.Time) string {
	var b [32]byte
	ms := uint64(max(at.UnixMilli(), 0))
	for i := 8; i >= 0; i-- {
		b[i] = sortable[ms&31]
		ms >>= 5
	}
	copy(b[9:], randomString(20)[:23])
	return prefix + string(b[:])
}

// IsID reports whether s is an id made by NewID with this prefix. Anything
// else is answered "not found" without a database look-up.
func IsID(prefix, s string) bool {
	if len(s) != len(prefix)+32 || s[:len(prefix)] != prefix {
		return false
	}
	for _, c := range s[len(prefix):] {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// NewUUID returns a random UUID (version 4): the references Cauri gives
// aggregators as their idempotency ids.
func NewUUID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func randomString(nbytes int) string {
	b := make([]byte, nbytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return idEncoding.EncodeToString(b)
}
