package sim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// notes is a receiver for a book's notifications: the statuses they claim,
// in order of arrival.
type notes struct {
	mu   sync.Mutex
	got  []string
	srv  *httptest.Server
	seen chan struct{}
}

func newNotes(t *testing.T) *notes {
	n := &notes{seen: make(chan struct{}, 100)}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Status string }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		n.mu.Lock()
		n.got = append(n.got, body.Status+" "+r.Header.Get("X-Sig"))
		n.mu.Unlock()
		n.seen <- struct{}{}
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *notes) statuses() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

// testBook is a book with a lifecycle in the words of an imaginary
// aggregator: created, then queued or processing, ending paid, declined or
// reversed; its notifications carry the status and a signature header.
func testBook(url string) *Book[string] {
	return &Book[string]{Lifecycle: Lifecycle[string]{
		Pending: "created", Succeeded: "paid", Failed: "declined",
		Steps: []string{"queued", "processing"}, Finals: []string{"reversed"}, Stuck: "processing",
		End: func(m *Movement[string]) { m.Data = "ended " + m.Status },
		Notify: func(m *Movement[string], claim string) (string, []byte, http.Header) {
			status := m.Status
			if claim != "" {
				status = claim
			}
			b, _ := json.Marshal(map[string]string{"status": status})
			return url, b, http.Header{"X-Sig": {"sig-" + m.ID}}
		},
	}}
}

func TestBook_Lifecycle(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	m, added := b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567"}, "our-ref-1")
	if !added || m.Status != "created" || m.Seq != 1 || m.Created.IsZero() {
		t.Fatalf("Add = %+v, %v", m, added)
	}
	for _, key := range []string{"p1", "our-ref-1"} { // a duplicate by id or by alias
		if old, added := b.Add(&Movement[string]{ID: key}, key); added || old.ID != "p1" {
			t.Fatalf("a second Add of %s = %+v, %v; want the first, not added", key, old, added)
		}
	}
	if err := b.Settle("our-ref-1", "queued"); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.View("p1"); v.Status != "queued" || len(n.statuses()) != 0 {
		t.Fatalf("after a step: %q, notes %v; want queued, none", v.Status, n.statuses())
	}
	if err := b.Settle("p1", "unheard-of"); !errors.Is(err, ErrStatus) {
		t.Fatalf("settle to an unknown status: %v", err)
	}
	if err := b.Settle("nobody", ""); !errors.Is(err, ErrUnknown) {
		t.Fatalf("settle of no movement: %v", err)
	}
	if err := b.Settle("p1", ""); err != nil {
		t.Fatal(err)
	}
	<-n.seen
	if err := b.Settle("p1", "declined"); err != nil { // ended: stays paid, no second note
		t.Fatal(err)
	}
	v, _ := b.View("p1")
	if v.Status != "paid" || v.Data != "ended paid" || v.Ended.IsZero() {
		t.Fatalf("after settling = %+v; want paid, completed by End", v)
	}
	if err := b.Notify("our-ref-1", "declined"); err != nil { // a forged or stale one
		t.Fatal(err)
	}
	<-n.seen
	if got := strings.Join(n.statuses(), ","); got != "paid sig-p1,declined sig-p1" {
		t.Fatalf("notes = %s", got)
	}
}

func TestBook_OutcomeByNumber(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	for id, phone := range map[string]string{"ok": "+221771234567", "fails": "+221770000029", "poor": "+221770000049", "lost": "+221770000129"} {
		b.Add(&Movement[string]{ID: id, Phone: phone, Payout: id == "ok"})
		b.Settle(id, "")
	}
	want := map[string]string{"ok": "paid", "fails": "declined", "poor": "declined", "lost": "processing"}
	for id, status := range want {
		if v, _ := b.View(id); v.Status != status {
			t.Errorf("%s settled by its number = %s; want %s", id, v.Status, status)
		}
	}
	if b.Payouts() != 1 {
		t.Errorf("payouts = %d; want 1", b.Payouts())
	}
	if got := b.Find(func(m *Movement[string]) bool { return m.Status == "declined" }); len(got) != 2 || got[0].Seq > got[1].Seq {
		t.Errorf("Find = %+v; want the two declined, in order", got)
	}
}

func TestBook_SettleAfterAndControl(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	b.SettleAfter = 20 * time.Millisecond
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.Intercept(w, r) {
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer api.Close()
	b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567"})
	select {
	case <-n.seen:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification after SettleAfter")
	}
	b.SettleAfter = 0
	b.Add(&Movement[string]{ID: "p2", Phone: "+221771234567"}, "ref-2")
	post := func(path string) int {
		res, err := http.Post(api.URL+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for path, want := range map[string]int{
		"/_sim/settle/ref-2?status=reversed": 204, "/_sim/settle/nobody": 404, "/_sim/settle/p2?status=bogus": 400,
		"/_sim/callback/p2": 204, "/_sim/callback/nobody": 404, "/_sim/elsewhere": 404, "/_sim/fault?mode=500": 204,
	} {
		if got := post(path); got != want {
			t.Errorf("POST %s = %d; want %d", path, got, want)
		}
	}
	if v, _ := b.View("p2"); v.Status != "reversed" {
		t.Errorf("p2 = %s; want reversed", v.Status)
	}
	calls := b.Calls()
	if got := post("/v1/anything"); got != http.StatusInternalServerError {
		t.Errorf("an API call under fault 500 = %d", got)
	}
	if b.Calls() != calls+1 {
		t.Errorf("calls = %d; want the API call counted, control calls not", b.Calls())
	}
}
