package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// documented is a fake aggregator that answers only with its documented
// answers: the fixtures of its connector's testdata/ (each one's source
// in that folder's SOURCES.md), not a simulator of ours. A call is
// answered by the longest "METHOD /path-prefix" set for it; the
// documented ids in a fixture (ids) are replaced by the reference the
// service sent (read by refOf from the request that carries it), so that
// the documented answer is about our payment.
type documented struct {
	t     *testing.T
	dir   string
	refOf func(r *http.Request, body []byte) string
	ids   []string

	mu     sync.Mutex
	ours   string
	routes map[string]fixtureReply
	calls  []string
	bodies [][]byte
}

type fixtureReply struct {
	fixture string // testdata file, or a body when it starts with { or [
	code    int
}

// newDocumented serves pkg's documented answers on loopback.
func newDocumented(t *testing.T, pkg string, refOf func(*http.Request, []byte) string, ids ...string) *documented {
	return &documented{t: t, dir: filepath.Join("..", "gateway", pkg, "testdata"), refOf: refOf, ids: ids, routes: map[string]fixtureReply{}}
}

// on answers call ("POST /v2/deposits", or a prefix such as "GET
// /v2/deposits/") with fixture, code 200 unless given, from now on.
func (d *documented) on(call, fixture string, code ...int) *documented {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := fixtureReply{fixture: fixture, code: http.StatusOK}
	if len(code) > 0 {
		r.code = code[0]
	}
	d.routes[call] = r
	return d
}

// body is a fixture with the documented ids replaced by ours.
func (d *documented) body(fixture string) []byte {
	d.t.Helper()
	var b []byte
	if strings.HasPrefix(fixture, "{") || strings.HasPrefix(fixture, "[") {
		b = []byte(fixture)
	} else {
		var err error
		if b, err = os.ReadFile(filepath.Join(d.dir, fixture)); err != nil {
			d.t.Fatal(err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ours != "" {
		for _, id := range d.ids {
			b = bytes.ReplaceAll(b, []byte(id), []byte(d.ours))
		}
	}
	return b
}

func (d *documented) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	call := r.Method + " " + r.URL.Path
	d.mu.Lock()
	d.calls, d.bodies = append(d.calls, call), append(d.bodies, body)
	if ref := d.refOf(r, body); ref != "" {
		d.ours = ref
	}
	var best string
	for k := range d.routes {
		if strings.HasPrefix(call, k) && len(k) > len(best) {
			best = k
		}
	}
	reply, ok := d.routes[best]
	d.mu.Unlock()
	if !ok || best == "" {
		d.t.Errorf("the documented fake has no answer for %s", call)
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.code)
	w.Write(d.body(reply.fixture))
}

// last is the body of the last call named call ("POST /charge"), nil if
// none came.
func (d *documented) last(call string) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.calls) - 1; i >= 0; i-- {
		if d.calls[i] == call {
			return d.bodies[i]
		}
	}
	return nil
}

// callback posts a documented callback (fixture, our ids in it) to the
// gateway's callback address, with header.
func (d *documented) callback(e *env, g *cauri.Gateway, fixture string, header http.Header) {
	d.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/callbacks/"+g.ID, bytes.NewReader(d.body(fixture)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		d.t.Fatalf("callback %s answered %d", fixture, res.StatusCode)
	}
}

// jsonRef reads our reference from a JSON request's field.
func jsonRef(field string) func(*http.Request, []byte) string {
	return func(_ *http.Request, body []byte) string {
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return ""
		}
		s, _ := m[field].(string)
		return s
	}
}

// addDocumented connects a live gateway of provider to the workspace,
// pointed at the documented fake d.
func (e *env) addDocumented(ws *cauri.Workspace, provider string, d *documented, creds map[string]string, countries ...string) *cauri.Gateway {
	e.t.Helper()
	g, _ := e.addGateway(ws, provider, d, creds, countries...)
	return g
}

// settled fails unless session id is SUCCESS in the store after what the
// test just did (what: a callback, a status check): the merchant's read of
// a pending live session asks the aggregator itself, so only the stored
// status shows that the callback settled it.
func settled(t *testing.T, st *store.Store, what, id string) {
	t.Helper()
	sess, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Status != cauri.SessionSuccess {
		t.Fatalf("after %s, the session is %s; want SUCCESS", what, sess.Status)
	}
}

// sessionStatus is a live session's status as its merchant reads it.
func (e *env) sessionStatus(secret, id string) string {
	return e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(secret)...).str("status")
}
