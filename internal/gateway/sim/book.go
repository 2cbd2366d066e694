package sim

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Movement is one collection or payout a simulator holds, as its
// aggregator would: where it is in the lifecycle (Status, in the
// aggregator's words) and the aggregator's own fields (Data).
type Movement[D any] struct {
	ID      string // the aggregator's id for it
	Seq     int    // its order of arrival, from 1
	Payout  bool
	Phone   string // the payer's or recipient's number: it decides the outcome
	Status  string
	Created time.Time
	Ended   time.Time // when it reached a final status; zero before
	// Held is a movement not yet sent to the network (a payment before its
	// push, a payout before its start): it does not settle after
	// SettleAfter, nor count as a payout, until Release.
	Held bool
	Data D
}

// Lifecycle is an aggregator's statuses and what its simulator does at
// each: the one state machine every simulator is built on. A movement
// starts Pending, may move to any of Steps (on a control call or by the
// simulator itself, without a notification unless NotifySteps) and ends
// once, Succeeded, Failed or one of Finals, with the aggregator's
// notification; only After may follow an end.
type Lifecycle[D any] struct {
	Pending, Succeeded, Failed string
	// Steps are the intermediate statuses the aggregator documents
	// (pawaPay's ENQUEUED, PROCESSING, IN_RECONCILIATION).
	Steps []string
	// NotifySteps notifies a settle to a step too, as CinetPay notifies
	// every update (a stuck movement's wait aside).
	NotifySteps bool
	// Finals are the other final statuses (cancelled, expired, reversed).
	Finals []string
	// After are the final statuses that may follow a final one, by the
	// one they follow (Wave's payout: succeeded, then reversed). A status
	// only After has (not in Finals) ends no movement at another status.
	After map[string][]string
	// Stuck is the status of a movement that never ends (its number asks
	// for it); "": it stays where it is.
	Stuck string
	// Words are other words a settle's status may use for a status
	// (CinetPay's REFUSED for 627). A status or a word is matched in any
	// case when not exactly.
	Words map[string]string
	// Outcome is how m ends when nothing says how: "" succeeds, else a
	// final status; stuck: it never ends. nil: by its number (Outcome).
	Outcome func(m *Movement[D]) (status string, stuck bool)
	// End completes m as it reaches its final status (the aggregator's
	// transaction id, failure reason, fees). The book is locked.
	End func(m *Movement[D])
	// Notify is the aggregator's notification of m, claiming status when
	// not "" (a stale, early or forged one, on a control call, sent as
	// claimed); a Note without URL: none. The book is locked; it is sent
	// after.
	Notify func(m *Movement[D], claim string) Note
}

// Book holds a simulator's movements and runs them through its Lifecycle:
// duplicates by id or alias, settling (after SettleAfter, on a page or a
// control call), the final notification, the control calls of every
// simulator (POST /_sim/settle/{id}[?status=], /_sim/callback/{id}
// [?status=], /_sim/fault?mode=) and its injected faults, and the counts
// tests read (API calls, payouts accepted: money sent).
//
// Its zero value needs only a Lifecycle. A simulator's own fields of a
// movement (Data) are read and changed through View and Update, under the
// book's lock.
type Book[D any] struct {
	Lifecycle[D]
	SettleAfter time.Duration // 0: only a page or a control call settles

	mu      sync.Mutex
	byID    map[string]*Movement[D]
	aliases map[string]string // another key (our reference) -> id
	seq     int
	calls   int
	payouts int
	faults  Faults
}

var (
	// ErrUnknown is a settle or a notification of no movement.
	ErrUnknown = errors.New("sim: no such movement")
	// ErrStatus is a settle to a status the lifecycle does not have.
	ErrStatus = errors.New("sim: no such status")
)

// Intercept answers what every simulator answers alike, before its API:
// the control calls (true), then, for an API request, it counts the call
// and injects the current fault (true when the fault answered). Pages a
// simulator serves under /_sim/ are its own: route them first.
func (b *Book[D]) Intercept(w http.ResponseWriter, r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		b.control(w, r)
		return true
	}
	b.Count()
	return b.faults.Apply(w, r)
}

// Count counts an API request that faults spare (a token endpoint's),
// answered without Intercept.
func (b *Book[D]) Count() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
}

func (b *Book[D]) control(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	path, status := strings.TrimPrefix(r.URL.Path, "/_sim/"), r.URL.Query().Get("status")
	var err error
	switch {
	case strings.HasPrefix(path, "settle/"):
		err = b.Settle(strings.TrimPrefix(path, "settle/"), status)
	case strings.HasPrefix(path, "callback/"):
		err = b.Notify(strings.TrimPrefix(path, "callback/"), status)
	case path == "fault":
		b.faults.Set(r)
	default:
		err = ErrUnknown
	}
	switch {
	case errors.Is(err, ErrStatus):
		http.Error(w, err.Error()+" "+status, http.StatusBadRequest)
	case err != nil:
		http.NotFound(w, r)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// Add records m unless its id or one of its aliases (another key it is
// found by, such as the merchant's reference) is already known: then it
// returns the movement that holds it and false, for the simulator to
// answer a duplicate as its aggregator does. A new movement gets its Seq,
// its creation time, the Pending status when it has none and, unless
// Held, counts as a payout when it is one and settles after SettleAfter.
func (b *Book[D]) Add(m *Movement[D], aliases ...string) (*Movement[D], bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range append([]string{m.ID}, aliases...) {
		if old := b.find(k); old != nil {
			return old, false
		}
	}
	if b.byID == nil {
		b.byID, b.aliases = map[string]*Movement[D]{}, map[string]string{}
	}
	b.seq++
	m.Seq = b.seq
	if m.Created.IsZero() {
		m.Created = time.Now()
	}
	if m.Status == "" {
		m.Status = b.Pending
	}
	b.byID[m.ID] = m
	for _, k := range aliases {
		b.aliases[k] = m.ID
	}
	if !m.Held {
		b.send(m)
	}
	return m, true
}

// Release sends the held movement found by key to the network: it
// counts as a payout when it is one and settles after SettleAfter. It
// reports whether the movement was held (false: none, or released
// already).
func (b *Book[D]) Release(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.find(key)
	if m == nil || !m.Held {
		return false
	}
	m.Held = false
	b.send(m)
	return true
}

// send is m sent to the network. The book is locked.
func (b *Book[D]) send(m *Movement[D]) {
	if m.Payout {
		b.payouts++
	}
	if b.SettleAfter > 0 {
		id := m.ID
		time.AfterFunc(b.SettleAfter, func() { b.Settle(id, "") })
	}
}

// Alias makes id's movement found by key too.
func (b *Book[D]) Alias(key, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aliases == nil {
		b.aliases = map[string]string{}
	}
	b.aliases[key] = id
}

func (b *Book[D]) find(key string) *Movement[D] {
	if m := b.byID[key]; m != nil {
		return m
	}
	return b.byID[b.aliases[key]]
}

// View returns a copy of the movement found by key (its id or an alias).
func (b *Book[D]) View(key string) (Movement[D], bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.find(key); m != nil {
		return *m, true
	}
	return Movement[D]{}, false
}

// Update runs fn on the movement found by key with the book locked,
// reporting whether there is one. fn may change its Data, or its Status
// to a step; it ends a movement only through Settle.
func (b *Book[D]) Update(key string, fn func(m *Movement[D])) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.find(key)
	if m != nil {
		fn(m)
	}
	return m != nil
}

// Find returns copies of the movements match accepts, in their order of
// arrival (an aggregator's search).
func (b *Book[D]) Find(match func(m *Movement[D]) bool) []Movement[D] {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Movement[D]
	for _, m := range b.byID {
		if match(m) {
			out = append(out, *m)
		}
	}
	slices.SortFunc(out, func(a, b Movement[D]) int { return a.Seq - b.Seq })
	return out
}

// Next returns a new number, for the simulator's own ids.
func (b *Book[D]) Next() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return b.seq
}

// Final reports whether status ends a movement.
func (l *Lifecycle[D]) Final(status string) bool { return l.ends(status) || l.follows(status) }

// ends reports whether status ends a movement not ended yet.
func (l *Lifecycle[D]) ends(status string) bool {
	return status == l.Succeeded || status == l.Failed || slices.Contains(l.Finals, status)
}

// follows reports whether status may follow a final status (After).
func (l *Lifecycle[D]) follows(status string) bool {
	for _, next := range l.After {
		if slices.Contains(next, status) {
			return true
		}
	}
	return false
}

// statusOf is the lifecycle's status word names: itself, its Words' one,
// either in another case; false: none.
func (l *Lifecycle[D]) statusOf(word string) (string, bool) {
	known := func(s string) bool {
		return s == l.Pending || s == l.Stuck || slices.Contains(l.Steps, s) || l.Final(s)
	}
	if word == "" || known(word) {
		return word, true
	}
	if s, ok := l.Words[word]; ok {
		return s, known(s)
	}
	statuses := slices.Concat([]string{l.Pending, l.Stuck, l.Succeeded, l.Failed}, l.Steps, l.Finals)
	for _, next := range l.After {
		statuses = append(statuses, next...)
	}
	for _, s := range statuses {
		if s != "" && strings.EqualFold(s, word) {
			return s, true
		}
	}
	for w, s := range l.Words {
		if strings.EqualFold(w, word) {
			return s, known(s)
		}
	}
	return "", false
}

// Settle moves the movement found by key as status says (the lifecycle's
// status or one of its Words, in any case): to a step (notified only with
// NotifySteps), to a final status, or, when status is "", as its Outcome
// says. A movement that reaches its end is completed (End) and notified;
// one already ended stays as it is (nil: a payment settles once), unless
// status is one After has follow its end. ErrUnknown: no such movement;
// ErrStatus: the lifecycle has no such status.
func (b *Book[D]) Settle(key, status string) error {
	status, ok := b.statusOf(status)
	if !ok {
		return ErrStatus
	}
	b.mu.Lock()
	m := b.find(key)
	switch {
	case m == nil:
		b.mu.Unlock()
		return ErrUnknown
	case status != "" && slices.Contains(b.After[m.Status], status):
		// A final status after its own: it ends m again, below.
	case b.Final(m.Status), b.follows(status) && !b.ends(status):
		b.mu.Unlock()
		return nil
	case status == "":
		outcome := b.Outcome
		if outcome == nil {
			outcome = b.byNumber
		}
		end, stuck := outcome(m)
		if stuck {
			if b.Stuck != "" {
				m.Status = b.Stuck
			}
			b.mu.Unlock()
			return nil
		}
		status = end
		if status == "" {
			status = b.Succeeded
		}
	case !b.Final(status):
		m.Status = status
		var n Note
		if b.NotifySteps {
			n = b.notification(m, "")
		}
		b.mu.Unlock()
		PostCallback(n)
		return nil
	}
	m.Status, m.Ended = status, time.Now()
	if b.End != nil {
		b.End(m)
	}
	n := b.notification(m, "")
	b.mu.Unlock()
	PostCallback(n)
	return nil
}

// byNumber is the default Outcome: the number's (Outcome).
func (b *Book[D]) byNumber(m *Movement[D]) (string, bool) {
	_, fails, stuck := Outcome(m.Phone)
	if fails {
		return b.Failed, stuck
	}
	return "", stuck
}

// Notify sends the notification of the movement found by key again (a
// duplicate), or, with claim, one claiming that status whatever the
// movement's (a stale, early or out-of-order one).
func (b *Book[D]) Notify(key, claim string) error {
	b.mu.Lock()
	m := b.find(key)
	if m == nil {
		b.mu.Unlock()
		return ErrUnknown
	}
	n := b.notification(m, claim)
	b.mu.Unlock()
	PostCallback(n)
	return nil
}

func (b *Book[D]) notification(m *Movement[D], claim string) Note {
	if b.Lifecycle.Notify == nil {
		return Note{}
	}
	return b.Lifecycle.Notify(m, claim)
}

// Calls counts the API requests the simulator answered (control calls and
// pages aside).
func (b *Book[D]) Calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// Payouts counts the payouts the simulator accepted (duplicates aside)
// and sent (held ones aside until Release): each is money sent.
func (b *Book[D]) Payouts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.payouts
}
