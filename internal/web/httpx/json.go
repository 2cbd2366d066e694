package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cauri-pay/cauri"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// DecodeJSON reads one JSON object into dst, refusing unknown fields. Every
// way a body can be wrong gets a 4xx whose message names the problem.
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return cauri.Errorf(cauri.EUnsupported, "Content-Type must be application/json, not %q", ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		return decodeError(err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] != '{' {
		// null, a list, a string: encoding/json would take null for an
		// empty object (a PATCH that changes nothing, answered 200).
		return cauri.Errorf(cauri.EInvalid, "Request body must be a JSON object")
	}
	return DecodeObject(body, dst)
}

// DecodeObject reads one JSON object (a body, or an item of a batch) into
// dst as DecodeJSON does, refusing unknown fields.
func DecodeObject(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return cauri.Errorf(cauri.EInvalid, "Request body must hold a single JSON object")
	}
	return exactFieldNames(body, dst)
}

// exactFieldNames refuses a field whose name matches a known one only when
// case is ignored: encoding/json would take "AMOUNT" for "amount".
func exactFieldNames(body []byte, dst any) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	known := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := range t.NumField() {
		known[strings.Split(t.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	var unknown []string
	for name := range fields {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return cauri.Errorf(cauri.EInvalid, "Unknown field %q", unknown[0])
	}
	return nil
}

func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return cauri.Errorf(cauri.ETooLarge, "Request body is larger than %d bytes", MaxBody)
	case errors.Is(err, io.EOF):
		return cauri.Errorf(cauri.EInvalid, "Request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return cauri.Errorf(cauri.EInvalid, "Request body is truncated JSON")
	case errors.As(err, &syntax):
		return cauri.Errorf(cauri.EInvalid, "Request body is not valid JSON (at byte %d): %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return cauri.Errorf(cauri.EInvalid, "Request body must be a JSON object")
		}
		return cauri.Errorf(cauri.EInvalid, "%s must be %s", typ.Field, jsonKind(typ.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return cauri.Errorf(cauri.EInvalid, "Unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return cauri.Errorf(cauri.EInvalid, "Request body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return fmt.Sprintf("of type %s", t)
}

// JSONNumber returns the text of a JSON number field, or "" when the field
// is absent or null. A string or any other type is an error: money is sent
// as a number.
func JSONNumber(field string, raw json.RawMessage) (string, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", nil
	}
	if c := s[0]; c != '-' && (c < '0' || c > '9') {
		return "", cauri.Errorf(cauri.EInvalid, "%s must be a number", field)
	}
	return s, nil
}

// StringMap decodes an object whose values must all be strings, naming the
// first key whose value is not.
func StringMap(field string, raw json.RawMessage) (map[string]string, error) {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, cauri.Errorf(cauri.EInvalid, "%s must be an object of string values", field)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, cauri.Errorf(cauri.EInvalid, "%s.%s must be a string", field, k)
		}
		out[k] = s
	}
	return out, nil
}

// Query reads a request's query string, refusing one that cannot be read as
// it was meant: a malformed percent-escape (which would silently drop its
// filter: an export of every date), a NUL byte or invalid UTF-8 (which no
// database text holds: a 500 on PostgreSQL).
func Query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, cauri.Errorf(cauri.EInvalid, "The query string is malformed (%s): escape %% as %%25", err.Error())
	}
	for k, vs := range q {
		for _, v := range append(vs, k) {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return nil, cauri.Errorf(cauri.EInvalid, "Query parameter %q holds a NUL byte or invalid UTF-8",
					strings.ToValidUTF8(strings.ReplaceAll(k, "\x00", ""), "?"))
			}
		}
	}
	return q, nil
}
