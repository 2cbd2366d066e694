package cauri

import (
	"strings"
	"testing"
)

// TestPrintable: an id from a request is quoted as Go escapes it, cut
// after 64 bytes.
func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tr_abc", "tr_abc"},
		{"a\x00b\"c", `a\x00b\"c`},
		{"tr_" + strings.Repeat("a", 70), "tr_" + strings.Repeat("a", 61) + "..."},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q): got %q; want %q", tc.in, got, tc.want)
		}
	}
}
