// Package gatewaytest holds what the connectors' tests share: reading a
// golden fixture (testdata/, sources in testdata/SOURCES.md) and holding an
// encoded request to the aggregator's documented example.
package gatewaytest

import (
	"encoding/json"
	"os"
	"testing"
)

// Golden reads testdata/name.
func Golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// DocumentedFields reports every field of the documented example
// testdata/name that request (encoded as JSON) does not carry with the same
// value, and returns both as field maps, for the caller to judge the rest
// (extra fields, fields the connector sets itself).
func DocumentedFields(t *testing.T, request any, name string) (mine, documented map[string]any) {
	t.Helper()
	got, err := json.Marshal(request)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &mine); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(Golden(t, name), &documented); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
	for k, v := range documented {
		if a, b := jsonOf(mine[k]), jsonOf(v); a != b {
			t.Errorf("%s = %s; want the documented %s (testdata/%s)", k, a, b, name)
		}
	}
	return mine, documented
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
