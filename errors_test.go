package cauri

import (
	"errors"
	"fmt"
	"testing"
)

// TestNotFound: a not-found error names its object as the client asked for
// it, and carries its kind through wrapping.
func TestNotFound(t *testing.T) {
	err := fmt.Errorf("reading: %w", NotFound("transfer", "tr_abc"))
	if got, want := ErrorMessage(err), "Transfer tr_abc not found"; got != want {
		t.Errorf("message = %q; want %q", got, want)
	}
	if got, want := ErrorCode(err), ENotFound; got != want {
		t.Errorf("code = %q; want %q", got, want)
	}
	if got, want := ErrorEntity(err), "transfer"; got != want {
		t.Errorf("entity = %q; want %q", got, want)
	}
	if got, want := ErrorEntity(errors.New("plain")), ""; got != want {
		t.Errorf("entity of a plain error = %q; want %q", got, want)
	}
	if got, want := ErrorMessage(NotFound("session", "x\x00y")), `Session x\x00y not found`; got != want {
		t.Errorf("message with an unprintable id = %q; want %q", got, want)
	}
}
