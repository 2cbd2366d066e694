package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite ../sdk/testdata/webhook-vectors.json")

// vectorsFile is shared by the libraries in sdk/: each verifies every vector
// with its own implementation, so the four cannot drift apart.
const vectorsFile = "../sdk/testdata/webhook-vectors.json"

// Vector is one verification case: the raw body and headers as received,
// the receiver's secret and clock, and the expected outcome ("" when the
// request verifies; otherwise no_signature, bad_signature or too_old).
type Vector struct {
	Name    string            `json:"name"`
	Secret  string            `json:"secret"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
	Now     int64             `json:"now"`
	Error   string            `json:"error"`
}

var vectorErrors = map[string]error{"": nil, "no_signature": ErrNoSignature, "bad_signature": ErrBadSignature, "too_old": ErrTooOld}

// vectors builds the cases with Sign; they are deterministic.
func vectors() []Vector {
	const (
		key = "svc_test_sec_abcdefghijklmnopqrstuvwxyz234567"
		old = "svc_test_sec_oldoldoldoldoldoldoldoldoldold23"
	)
	at := time.Unix(1795000000, 0)
	// Bodies a receiver must not re-serialise: spacing, key order, escapes
	// and UTF-8 all count.
	body := `{"id":"evt_3Qm2x","event":"payment.completed","data":{"id":"cs_7Yx","amount":15000,"currency":"XOF","metadata":{"order_id":"1042"}}}`
	spaced := "{\n  \"id\": \"evt_9\",\n  \"data\": {\"description\": \"2 pagnes wax \\u00e9t\u00e9 \u2013 Abidjan \U0001F600\", \"amount\": 5000}\n}"
	signed := func(body string, secrets ...string) map[string]string {
		h := http.Header{}
		Sign(h, secrets, "whd_5Kp", "payment.completed", at, []byte(body))
		out := map[string]string{}
		for _, k := range []string{HeaderEvent, HeaderDelivery, HeaderTimestamp, HeaderSignature, HeaderStandardID, HeaderStandardTimestamp, HeaderStandardSignature} {
			out[k] = h.Get(k)
		}
		return out
	}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range h {
			out[kk] = vv
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	now := at.Unix()
	tol := int64(Tolerance / time.Second)
	sig := signed(body, key)[HeaderSignature]
	v1 := sig[len("t=1795000000,"):]
	return []Vector{
		{"valid", key, body, signed(body, key), now + 30, ""},
		{"valid_utf8_and_spacing", key, spaced, signed(spaced, key), now, ""},
		{"valid_empty_body", key, "", signed("", key), now, ""},
		{"valid_at_tolerance_past", key, body, signed(body, key), now + tol, ""},
		{"valid_at_tolerance_future", key, body, signed(body, key), now - tol, ""},
		{"valid_key_roll_new_key", key, body, signed(body, key, old), now, ""},
		{"valid_key_roll_old_key", old, body, signed(body, key, old), now, ""},
		{"valid_unknown_entry_first", key, body, with(signed(body, key), HeaderSignature, "t=1795000000,v0=abc,v1=00ff,"+v1), now, ""},
		{"valid_spaces_around_entries", key, body, with(signed(body, key), HeaderSignature, "t=1795000000, "+v1), now, ""},
		{"valid_uppercase_header_name", key, body, map[string]string{"X-SERVICE-SIGNATURE": sig}, now, ""},
		{"valid_uppercase_hex", key, body, with(signed(body, key), HeaderSignature, "t=1795000000,v1="+strings.ToUpper(v1[3:])), now, ""},
		{"too_old", key, body, signed(body, key), now + tol + 1, "too_old"},
		{"from_the_future", key, body, signed(body, key), now - tol - 1, "too_old"},
		{"wrong_secret", "svc_test_sec_someoneelse", body, signed(body, key), now, "bad_signature"},
		{"body_reserialised", key, `{"id": "evt_3Qm2x", "event": "payment.completed", "data": {"id": "cs_7Yx", "amount": 15000, "currency": "XOF", "metadata": {"order_id": "1042"}}}`, signed(body, key), now, "bad_signature"},
		{"body_utf8_escaped", key, "{\n  \"id\": \"evt_9\",\n  \"data\": {\"description\": \"2 pagnes wax \\u00e9t\\u00e9 \\u2013 Abidjan \\ud83d\\ude00\", \"amount\": 5000}\n}", signed(spaced, key), now, "bad_signature"},
		{"timestamp_changed", key, body, with(signed(body, key), HeaderSignature, "t=1795000001,"+v1), now, "bad_signature"},
		{"signature_truncated", key, body, with(signed(body, key), HeaderSignature, sig[:len(sig)-2]), now, "bad_signature"},
		{"signed_by_another_key", key, body, with(signed(body, key), HeaderSignature, signed(body, old)[HeaderSignature]), now, "bad_signature"},
		{"no_header", key, body, with(signed(body, key), HeaderSignature, ""), now, "no_signature"},
		{"no_timestamp", key, body, with(signed(body, key), HeaderSignature, v1), now, "no_signature"},
		{"no_v1", key, body, with(signed(body, key), HeaderSignature, "t=1795000000"), now, "no_signature"},
		{"garbled", key, body, with(signed(body, key), HeaderSignature, "t=x,v1=zz"), now, "no_signature"},
		{"standard_headers_only", key, body, with(signed(body, key), HeaderSignature, ""), now, "no_signature"},
	}
}

// TestVectors holds sdk/testdata/webhook-vectors.json to what Sign makes and
// Verify checks (go test ./webhook -update rewrites it).
func TestVectors(t *testing.T) {
	vs := vectors()
	for _, v := range vs {
		h := http.Header{}
		for k, val := range v.Headers {
			h.Set(k, val)
		}
		want, ok := vectorErrors[v.Error]
		if !ok {
			t.Fatalf("%s: unknown error %q", v.Name, v.Error)
		}
		if err := Verify([]byte(v.Body), h, v.Secret, time.Unix(v.Now, 0)); !errors.Is(err, want) {
			t.Errorf("%s: Verify = %v; want %v", v.Name, err, want)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	doc := struct {
		Comment string   `json:"comment"`
		Vectors []Vector `json:"vectors"`
	}{"Generated by go test ./webhook -update (webhook/vectors_test.go). Each library verifies every vector: body is the raw request body (bytes of its UTF-8 string), headers as received (names case-insensitive), now the receiver's clock in unix seconds, error the expected outcome (empty: verifies). Tolerance " + strconv.Itoa(int(Tolerance/time.Second)) + " seconds.", vs}
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll("../sdk/testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatalf("%v (go test ./webhook -update writes it)", err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s is stale: go test ./webhook -update", vectorsFile)
	}
}
