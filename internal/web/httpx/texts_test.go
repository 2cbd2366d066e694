package httpx

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"
)

// sameInBoth are the texts whose French is the English word itself.
var sameInBoth = []string{"test", "date", "receipt_date", "transactions", "webhooks", "status", "code", "description",
	"amount", "currency", "provider", "operator", "transfers", "team", "gateways", "overview", "links", "region",
	"format", "mode", "page", "volume", "never", "whatsapp", "sms"}

// TestTexts_EveryStringInBothLanguages: the pages' texts exist in English
// and in French, every key a template uses is in both, and no French text
// is left in English (unless the word is the same in both).
func TestTexts_EveryStringInBothLanguages(t *testing.T) {
	en, fr := texts["en"], texts["fr"]
	for k := range en {
		if _, ok := fr[k]; !ok {
			t.Errorf("%q has no French text", k)
		}
	}
	for k := range fr {
		if _, ok := en[k]; !ok {
			t.Errorf("%q has no English text", k)
		}
	}
	var same []string
	for k, v := range en {
		if fr[k] == v && !slices.Contains(sameInBoth, k) {
			same = append(same, k)
		}
	}
	sort.Strings(same)
	if len(same) > 0 {
		t.Errorf("French texts left in English: %q (or add the key to sameInBoth when the word is the same in both)", same)
	}
	files, err := filepath.Glob("../*/templates/*.html")
	if err != nil || len(files) < 5 {
		t.Fatalf("templates: %v, %v", files, err)
	}
	used := regexp.MustCompile(`\$?\.T\.(\w+)|index \$?\.T "(\w+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range used.FindAllStringSubmatch(string(b), -1) {
			key := m[1] + m[2]
			if _, ok := en[key]; !ok {
				t.Errorf("%s uses %q, which has no text", f, key)
			}
		}
	}
}
