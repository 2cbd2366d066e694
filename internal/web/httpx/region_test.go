package httpx

import (
	"net/http/httptest"
	"testing"
)

// TestRegion: the country of the first language tag that names one.
func TestRegion(t *testing.T) {
	for header, want := range map[string]string{
		"fr-SN,fr;q=0.9": "SN", "fr,en-ci;q=0.8": "CI", "en": "", "": "", "zh-Hant-TW": "", "es-419": "",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Language", header)
		if got := Region(r); got != want {
			t.Errorf("Region(%q) = %q; want %q", header, got, want)
		}
	}
}
