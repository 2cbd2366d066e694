package store

import (
	"testing"

	"github.com/cauri-pay/cauri/internal/config"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"", ""},
		{"?", "$1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"WHERE nom = 'Abéné' AND id IN (?,?,?,?,?,?,?,?,?,?,?)", "WHERE nom = 'Abéné' AND id IN ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"},
		{"x = ?é", "x = $1é"},
	} {
		if got := Rebind(config.Postgres, c.in); got != c.want {
			t.Errorf("Rebind(postgres, %q) = %q, want %q", c.in, got, c.want)
		}
		if got := Rebind(config.SQLite, c.in); got != c.in {
			t.Errorf("Rebind(sqlite, %q) = %q, want it unchanged", c.in, got)
		}
	}
}

func BenchmarkRebind(b *testing.B) {
	q := `SELECT ` + sessionColumns + ` FROM checkout_sessions WHERE id = ?`
	for b.Loop() {
		Rebind(config.Postgres, q)
	}
}
