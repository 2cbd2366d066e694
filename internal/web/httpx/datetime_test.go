package httpx

import (
	"testing"
	"time"
)

func TestDateTime(t *testing.T) {
	tests := []struct {
		name, lang string
		at         time.Time
		want       string
	}{
		{"english", "en", time.Date(2026, 11, 26, 14, 5, 9, 0, time.UTC), "26 Nov 2026, 14:05 UTC"},
		{"french", "fr", time.Date(2026, 11, 26, 14, 5, 9, 0, time.UTC), "26 nov. 2026 à 14:05 UTC"},
		{"french, first month, in UTC", "fr", time.Date(2027, 1, 1, 0, 30, 0, 0, time.FixedZone("WAT", 3600)), "31 déc. 2026 à 23:30 UTC"},
		{"french, August", "fr", time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC), "3 août 2026 à 09:00 UTC"},
		{"english, May", "en", time.Date(2026, 5, 3, 9, 0, 0, 0, time.UTC), "3 May 2026, 09:00 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DateTime(texts[tt.lang], tt.at); got != tt.want {
				t.Errorf("DateTime(%s, %v) = %q; want %q", tt.lang, tt.at, got, tt.want)
			}
		})
	}
}
