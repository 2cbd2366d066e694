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

// notes is a receiver for a book's notifications: the statuses they claim
// and their methods, in order of arrival.
type notes struct {
	mu      sync.Mutex
	got     []string
	methods []string
	srv     *httptest.Server
	seen    chan struct{}
}

func newNotes(t *testing.T) *notes {
	n := &notes{seen: make(chan struct{}, 100)}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Status string }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		n.mu.Lock()
		n.got = append(n.got, body.Status+" "+r.Header.Get("X-Sig"))
		n.methods = append(n.methods, r.Method)
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
		Notify: func(m *Movement[string], claim string) Note {
			status := m.Status
			if claim != "" {
				status = claim
			}
			b, _ := json.Marshal(map[string]string{"status": status})
			return Note{URL: url, Body: b, Header: http.Header{"X-Sig": {"sig-" + m.ID}}}
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

// serve runs b behind a simulator's API: /token is counted without
// faults (Count), anything else goes through Intercept.
func serve(t *testing.T, b *Book[string]) string {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			b.Count()
		} else if b.Intercept(w, r) {
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(api.Close)
	return api.URL
}

// post POSTs to url, answering the status code.
func post(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Post(url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// wait waits for a notification.
func (n *notes) wait(t *testing.T) {
	t.Helper()
	select {
	case <-n.seen:
	case <-time.After(5 * time.Second):
		t.Fatalf("no notification; got %v", n.statuses())
	}
}

// none checks that no notification comes for a while.
func (n *notes) none(t *testing.T, why string) {
	t.Helper()
	select {
	case <-n.seen:
		t.Fatalf("%s: notified; got %v", why, n.statuses())
	case <-time.After(100 * time.Millisecond):
	}
}

func TestBook_SettleAfterAndControl(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	b.SettleAfter = 20 * time.Millisecond
	api := serve(t, b)
	b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567"})
	n.wait(t)
	b.SettleAfter = 0
	b.Add(&Movement[string]{ID: "p2", Phone: "+221771234567"}, "ref-2")
	for path, want := range map[string]int{
		"/_sim/settle/ref-2?status=reversed": 204, "/_sim/settle/nobody": 404, "/_sim/settle/p2?status=bogus": 400,
		"/_sim/callback/p2": 204, "/_sim/callback/nobody": 404, "/_sim/elsewhere": 404, "/_sim/fault?mode=500": 204,
	} {
		if got := post(t, api+path); got != want {
			t.Errorf("POST %s = %d; want %d", path, got, want)
		}
	}
	if v, _ := b.View("p2"); v.Status != "reversed" {
		t.Errorf("p2 = %s; want reversed", v.Status)
	}
	calls := b.Calls()
	if got := post(t, api+"/v1/anything"); got != http.StatusInternalServerError {
		t.Errorf("an API call under fault 500 = %d", got)
	}
	if b.Calls() != calls+1 {
		t.Errorf("calls = %d; want the API call counted, control calls not", b.Calls())
	}
	if got := post(t, api+"/token"); got != http.StatusOK || b.Calls() != calls+2 {
		t.Errorf("a call Count counts under fault 500 = %d, %d calls; want answered, counted", got, b.Calls()-calls)
	}
}

// TestBook_NoteMethod holds the book to a notification's method: PUT
// when the lifecycle's Note says so, on settling and on a control call.
func TestBook_NoteMethod(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	notify := b.Lifecycle.Notify
	b.Lifecycle.Notify = func(m *Movement[string], claim string) Note {
		note := notify(m, claim)
		note.Method = http.MethodPut
		return note
	}
	b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567"})
	b.Settle("p1", "")
	n.wait(t)
	post(t, serve(t, b)+"/_sim/callback/p1")
	n.wait(t)
	if got := strings.Join(n.methods, ","); got != "PUT,PUT" {
		t.Fatalf("methods = %s; want PUT,PUT", got)
	}
}

// TestBook_Words holds a settle to the lifecycle's Words and to its
// statuses in any case, and a callback's claim to the word as given.
func TestBook_Words(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	b.Words = map[string]string{"REFUSED": "declined", "CLEARED": "paid"}
	api := serve(t, b)
	for id, word := range map[string]string{"p1": "REFUSED", "p2": "cleared", "p3": "Declined", "p4": "QUEUED"} {
		b.Add(&Movement[string]{ID: id, Phone: "+221771234567"})
		if got := post(t, api+"/_sim/settle/"+id+"?status="+word); got != http.StatusNoContent {
			t.Errorf("settle to %s = %d", word, got)
		}
	}
	for id, want := range map[string]string{"p1": "declined", "p2": "paid", "p3": "declined", "p4": "queued"} {
		if v, _ := b.View(id); v.Status != want {
			t.Errorf("%s = %s; want %s", id, v.Status, want)
		}
	}
	if got := post(t, api+"/_sim/settle/p4?status=voided"); got != http.StatusBadRequest {
		t.Errorf("settle to a word the lifecycle lacks = %d; want 400", got)
	}
	for range 3 {
		n.wait(t)
	}
	post(t, api+"/_sim/callback/p4?status=Cleared")
	n.wait(t)
	if got := n.statuses(); got[len(got)-1] != "Cleared sig-p4" {
		t.Fatalf("claimed note = %v; want the claim as given", got)
	}
}

// TestBook_NotifySteps holds a lifecycle with NotifySteps to notifying a
// settle to a step, not a stuck movement's wait.
func TestBook_NotifySteps(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	b.NotifySteps = true
	b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567"})
	b.Settle("p1", "queued")
	n.wait(t)
	b.Add(&Movement[string]{ID: "lost", Phone: "+221770000129"})
	b.Settle("lost", "")
	n.none(t, "a stuck movement")
	if v, _ := b.View("lost"); v.Status != "processing" {
		t.Fatalf("lost = %s; want processing", v.Status)
	}
	b.Settle("p1", "")
	n.wait(t)
	b.Settle("p1", "processing") // ended: no step, no note
	n.none(t, "a step after the end")
	if got := strings.Join(n.statuses(), ","); got != "queued sig-p1,paid sig-p1" {
		t.Fatalf("notes = %s", got)
	}
}

// TestBook_After holds a status After has follow a final one: it ends
// only a movement at that status, notified and completed by End.
func TestBook_After(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	b.After = map[string][]string{"paid": {"refunded"}}
	b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567"})
	if err := b.Settle("p1", "refunded"); err != nil { // not paid yet
		t.Fatal(err)
	}
	if v, _ := b.View("p1"); v.Status != "created" {
		t.Fatalf("refunded before paid = %s; want still created", v.Status)
	}
	b.Settle("p1", "")
	n.wait(t)
	if err := b.Settle("p1", "REFUNDED"); err != nil {
		t.Fatal(err)
	}
	n.wait(t)
	if v, _ := b.View("p1"); v.Status != "refunded" || v.Data != "ended refunded" || !b.Final(v.Status) {
		t.Fatalf("after a refund = %+v; want refunded, completed by End, final", v)
	}
	b.Settle("p1", "paid")
	b.Settle("p1", "refunded")
	n.none(t, "settles after the refund")
	if got := strings.Join(n.statuses(), ","); got != "paid sig-p1,refunded sig-p1" {
		t.Fatalf("notes = %s", got)
	}
}

// TestBook_Held holds a held movement out of SettleAfter and Payouts
// until Release.
func TestBook_Held(t *testing.T) {
	n := newNotes(t)
	b := testBook(n.srv.URL)
	b.SettleAfter = 20 * time.Millisecond
	b.Add(&Movement[string]{ID: "p1", Phone: "+221771234567", Payout: true, Held: true}, "ref-1")
	n.none(t, "a held payout")
	if v, _ := b.View("p1"); v.Status != "created" || !v.Held || b.Payouts() != 0 {
		t.Fatalf("held = %+v, %d payouts; want created, held, none", v, b.Payouts())
	}
	if !b.Release("ref-1") || b.Payouts() != 1 {
		t.Fatalf("release: %d payouts; want 1", b.Payouts())
	}
	n.wait(t)
	if b.Release("p1") || b.Release("nobody") || b.Payouts() != 1 {
		t.Fatalf("a second release counted: %d payouts", b.Payouts())
	}
	if v, _ := b.View("p1"); v.Status != "paid" || v.Held {
		t.Fatalf("released = %+v; want paid", v)
	}
}
