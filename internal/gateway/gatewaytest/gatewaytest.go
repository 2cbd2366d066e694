// Package gatewaytest holds what the connectors' tests share: the
// conformance suite every connector runs (Run, conformance.go: its
// aggregator's documented answers, and what every connector owes the
// service), reading a golden fixture (testdata/, sources in
// testdata/SOURCES.md), holding an encoded request to the aggregator's
// documented example, serving fixed answers for a connector to decode,
// receiving what a simulator posts and making a simulator's control calls.
//
// It imports the gateway package and the movement lifecycle.
package gatewaytest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
// (extra fields, fields the connector sets itself). A documented address
// without a query string (a callback URL) is carried when the sent one is
// that address with a query string or one path segment of the connector's
// own added (M-Pesa's CallBackURL with the push's reference and token).
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
		if a, b := jsonOf(mine[k]), jsonOf(v); a != b && !sameAddress(mine[k], v) {
			t.Errorf("%s = %s; want the documented %s (testdata/%s)", k, a, b, name)
		}
	}
	return mine, documented
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// sameAddress reports whether sent is the documented http(s) address with
// a query string, or one path segment, of the connector's own added.
func sameAddress(sent, documented any) bool {
	s, ok1 := sent.(string)
	d, ok2 := documented.(string)
	if !ok1 || !ok2 || !strings.HasPrefix(d, "http") || strings.ContainsAny(d, "?#") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	if u.RawQuery != "" {
		return strings.TrimSuffix(s, "?"+u.RawQuery) == d
	}
	seg, ok := strings.CutPrefix(s, strings.TrimSuffix(d, "/")+"/")
	return ok && seg != "" && !strings.Contains(seg, "/")
}

// Answers is a server on loopback standing in for an aggregator's API with
// fixed answers, for a connector to decode: it answers a call ("POST
// /payouts") with what Set gave for it, else with what Set gave for "",
// else 404; and it records the calls it gets.
type Answers struct {
	URL string // the API's base address

	mu      sync.Mutex
	answers map[string]answer
	delays  map[string]time.Duration
	calls   []string
	bodies  [][]byte
	queries []string
	headers []http.Header
}

type answer struct {
	code int
	body []byte
}

// NewAnswers starts an Answers, closed when the test ends.
func NewAnswers(t *testing.T) *Answers {
	a := &Answers{answers: map[string]answer{}, delays: map[string]time.Duration{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		call := r.Method + " " + r.URL.Path
		a.mu.Lock()
		a.calls, a.bodies, a.queries = append(a.calls, call), append(a.bodies, b), append(a.queries, r.URL.RawQuery)
		a.headers = append(a.headers, r.Header.Clone())
		ans, ok := a.answers[call]
		if !ok {
			ans, ok = a.answers[""]
		}
		delay, slow := a.delays[call]
		if !slow {
			delay = a.delays[""]
		}
		a.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ans.code)
		w.Write(ans.body)
	}))
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// Set answers call ("METHOD /path", or "" for every call not set by name)
// with code and body from now on.
func (a *Answers) Set(call string, code int, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.answers[call] = answer{code, body}
}

// Delay makes call ("" for every call not set by name) wait d before it
// is answered, as an aggregator that does not answer in time.
func (a *Answers) Delay(call string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.delays[call] = d
}

// Calls returns the calls received so far ("METHOD /path"), in order.
func (a *Answers) Calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// Body returns the body of the last call named call ("PUT /payouts/start")
// received, nil if none.
func (a *Answers) Body(call string) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.calls) - 1; i >= 0; i-- {
		if a.calls[i] == call {
			return a.bodies[i]
		}
	}
	return nil
}

// Receiver is a server on loopback that records what a simulator posts to
// it (callbacks, webhooks, notifications), in the order they arrive.
type Receiver struct {
	URL string // where the simulator posts

	mu     sync.Mutex
	reqs   []*http.Request
	bodies [][]byte
}

// NewReceiver starts a Receiver, closed when the test ends.
func NewReceiver(t *testing.T) *Receiver {
	rc := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.reqs, rc.bodies = append(rc.reqs, r), append(rc.bodies, b)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// Received returns the requests that arrived so far (their header and
// path) and their bodies, in order.
func (rc *Receiver) Received() ([]*http.Request, [][]byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.reqs), slices.Clone(rc.bodies)
}

// Last returns the header and body of the last request to arrive, and how
// many arrived (nil, nil, 0 before any).
func (rc *Receiver) Last() (http.Header, []byte, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := len(rc.reqs)
	if n == 0 {
		return nil, nil, 0
	}
	return rc.reqs[n-1].Header, rc.bodies[n-1], n
}

// Control makes a simulator's control call, POST baseURL+path
// (/_sim/settle/{id}, /_sim/callback/{id}, /_sim/fault?mode=...), and fails
// the test unless it is answered 204.
func Control(t *testing.T, baseURL, path string) {
	t.Helper()
	if code := ControlStatus(t, baseURL, path); code != http.StatusNoContent {
		t.Fatalf("control %s = %d; want 204", path, code)
	}
}

// ControlStatus makes a simulator's control call and returns its HTTP
// status, for the tests of a refused one (404, 400).
func ControlStatus(t *testing.T, baseURL, path string) int {
	t.Helper()
	res, err := http.Post(baseURL+path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Recorded is a request a Recorder received.
type Recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// Recorder is a server on loopback that records the requests it gets and
// answers each with answer, for the connectors whose calls depend on one
// another (a token, then the call it allows).
type Recorder struct {
	URL    string
	mu     sync.Mutex
	reqs   []Recorded
	answer func(r *http.Request) (int, []byte)
}

// NewRecorder starts a Recorder, closed when the test ends.
func NewRecorder(t *testing.T, answer func(r *http.Request) (int, []byte)) *Recorder {
	rc := &Recorder{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, Recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), b})
		rc.mu.Unlock()
		code, body := rc.answer(r)
		w.WriteHeader(code)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// Requests are the requests received so far.
func (rc *Recorder) Requests() []Recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Recorded(nil), rc.reqs...)
}

// DocumentedToken is the access_token of testdata/token.json.
func DocumentedToken(t *testing.T) string {
	t.Helper()
	var a struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(Golden(t, "token.json"), &a); err != nil || a.AccessToken == "" {
		t.Fatalf("token.json: %v", err)
	}
	return a.AccessToken
}
