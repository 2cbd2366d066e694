package cauri

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText trims a free-text field and refuses invalid UTF-8, control
// characters (other than line breaks and tabs) and more than max characters.
func CleanText(field, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", Errorf(EInvalid, "%s is not valid UTF-8", field)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return "", Errorf(EInvalid, "%s contains a control character (U+%04X)", field, r)
		}
	}
	if utf8.RuneCountInString(s) > max {
		return "", Errorf(EInvalid, "%s is longer than %d characters", field, max)
	}
	return s, nil
}

// MaxIdempotencyKeyLen bounds an Idempotency-Key.
const MaxIdempotencyKeyLen = 255

// KeyReused is the answer (422) to an Idempotency-Key already used with
// another request; what names what a new key is for ("request",
// "transfer").
func KeyReused(key, what string) *Error {
	return Errorf(EUnprocessable, "Idempotency-Key %q was already used with a different request; use a new key for a new %s", key, what)
}

// CheckIdempotencyKey refuses a key longer than MaxIdempotencyKeyLen or
// holding anything but printable ASCII without spaces.
func CheckIdempotencyKey(k string) error {
	if len(k) > MaxIdempotencyKeyLen {
		return Errorf(EInvalid, "Idempotency-Key is longer than %d characters", MaxIdempotencyKeyLen)
	}
	for _, r := range k {
		if r < 0x21 || r > 0x7e {
			return Errorf(EInvalid, "Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return nil
}

// Printable is an id taken from a request as an error message quotes it:
// escaped as a Go string (without its quotes), cut after 64 bytes.
func Printable(id string) string {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	q := strconv.Quote(id)
	return q[1 : len(q)-1]
}
