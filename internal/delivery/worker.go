package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/webhook"
)

// Worker sends due webhook deliveries. Several workers (one per node) may
// run on one database: a delivery is sent by the one that leases it.
//
// A pass finds the endpoints (a workspace's address of one mode) with
// deliveries that came due since the last pass, looks up each endpoint's
// oldest due deliveries for the slots it may take, leases them in one
// statement, reads what they need in one read and sends them; the
// outcomes are recorded in batches, one commit each. No look-up grows with
// the backlog: a pass costs what it sends.
type Worker struct {
	Store    WorkerStore
	Client   *http.Client     // Guard.Client
	Schedule []time.Duration  // delay before each automatic attempt
	Timeout  time.Duration    // the receiver's time to answer
	Now      func() time.Time // injected clock
	Logger   *slog.Logger

	// Concurrency bounds the attempts in flight. PerEndpoint is what one
	// endpoint may hold at first and whenever it is slow or failing; an
	// endpoint that answers 2xx within FastAnswer gains a slot per
	// answer, up to MaxPerEndpoint (half of Concurrency unless set), and
	// halves its share on a failure or a slow answer: a slow receiver
	// holds PerEndpoint slots and never the others' deliveries.
	Concurrency    int
	PerEndpoint    int
	MaxPerEndpoint int
	Poll           time.Duration // how often the database is asked, besides wake-ups

	wake         chan struct{}
	initOnce     sync.Once
	mu           sync.Mutex
	running      int
	eps          map[store.Endpoint]*endpointState // endpoints with deliveries due, or in flight
	order        []store.Endpoint                  // eps in the order slots are offered, rotated each pass
	seenTo       time.Time                         // the end of the last window DueEndpoints was asked for
	sweptAt      time.Time                         // the last look from the start
	lookedBackAt time.Time                         // the last look back window
	wg           sync.WaitGroup
	outcomes     chan store.Recorded
	recorded     chan struct{} // closed when the recorder has written the last outcomes
}

// endpointState is an endpoint's share of the slots.
type endpointState struct {
	inflight, limit int
	// drained: at its last look-up the endpoint had fewer deliveries due
	// than it was offered (the rest of its backlog in flight, or leased by
	// another node), so it is offered no slot until a later look finds
	// new ones due: free slots go to the endpoints that have work.
	drained bool
}

// FastAnswer is how soon a receiver must answer 2xx for its endpoint to
// gain a slot.
const FastAnswer = 250 * time.Millisecond

// Each pass looks back shortWindow before its last look (a commit that
// landed that long after its event's time is seen at once), and every
// lookBackEvery a pass looks back window (a slower commit is seen within a
// second); every sweepEvery a pass looks from the start. A burst that came
// due at once is read by the passes of its first shortWindow and by a few
// look-backs, not by every pass for window.
const (
	shortWindow   = 250 * time.Millisecond
	window        = 5 * time.Second
	lookBackEvery = time.Second
	sweepEvery    = 30 * time.Second
)

// gather is how long a busy worker lets freed slots gather before its next
// pass (an idle one starts a new event's attempt at once).
const gather = 10 * time.Millisecond

// recordBatch bounds the outcomes written in one commit.
const recordBatch = 256

func (w *Worker) init() {
	w.initOnce.Do(func() {
		w.wake = make(chan struct{}, 1)
		w.eps = map[store.Endpoint]*endpointState{}
		if w.Concurrency <= 0 {
			w.Concurrency = 64
		}
		if w.PerEndpoint <= 0 {
			w.PerEndpoint = 2
		}
		if w.MaxPerEndpoint <= 0 {
			w.MaxPerEndpoint = max(w.Concurrency/2, w.PerEndpoint)
		}
		if w.Poll <= 0 {
			w.Poll = time.Second
		}
		if w.Timeout <= 0 {
			w.Timeout = cauri.WebhookTimeout
		}
		w.outcomes = make(chan store.Recorded, recordBatch)
		w.recorded = make(chan struct{})
	})
}

// Wake asks the worker to look for due deliveries now (after an event was
// committed on this node) instead of at its next poll.
func (w *Worker) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// lease is how long a claimed delivery stays the claimant's: longer than
// an attempt and its recording can last, short enough that a crashed
// node's deliveries are soon retried.
func (w *Worker) lease() time.Duration { return 2*w.Timeout + time.Second }

// Run sends deliveries until ctx ends, then lets the attempts in flight
// finish (each within Timeout) and records them before returning.
func (w *Worker) Run(ctx context.Context) {
	w.init()
	go w.record()
	tick := time.NewTicker(w.Poll)
	defer tick.Stop()
	for {
		// Slots offered to endpoints that turned out drained while others
		// waited are offered again at once, not at the next poll (a few
		// times: each pass drains or serves some endpoints).
		for i := 0; i < 8 && w.dispatch(ctx); i++ {
		}
		w.mu.Lock()
		busy := w.running > 0
		w.mu.Unlock()
		if busy {
			// Attempts end one by one: gather their freed slots into one
			// pass (one lease statement for many) rather than a pass each.
			time.Sleep(gather)
		}
		select {
		case <-ctx.Done():
			w.wg.Wait()
			close(w.outcomes)
			<-w.recorded
			return
		case <-w.wake:
		case <-tick.C:
		}
	}
}

func endpointOf(d *cauri.Delivery) store.Endpoint {
	return store.Endpoint{WorkspaceID: d.WorkspaceID, Livemode: d.Livemode}
}

// dispatch finds what came due, offers the free slots to the endpoints in
// turn (each up to its share), leases what they have due in one
// statement and starts the attempts. It reports whether slots offered to
// endpoints that had less due are worth offering again at once: some
// remain free, and endpoints that were not offered any may have work.
func (w *Worker) dispatch(ctx context.Context) (again bool) {
	if ctx.Err() != nil {
		return false
	}
	now := w.Now()
	since := w.seenTo.Add(-shortWindow)
	if now.Sub(w.lookedBackAt) >= lookBackEvery || now.Before(w.lookedBackAt) {
		since, w.lookedBackAt = w.seenTo.Add(-window), now
	}
	switch {
	case w.sweptAt.IsZero():
		// At start, the deliveries this node leased before it died (a
		// kill, a crash) are not due until their leases expire: the second
		// look from the start comes then, not a sweep later.
		since, w.sweptAt = time.Time{}, now.Add(w.lease()+time.Second-sweepEvery)
	case now.Sub(w.sweptAt) >= sweepEvery || now.Before(w.sweptAt):
		since, w.sweptAt = time.Time{}, now
	}
	found, err := w.Store.DueEndpoints(ctx, since, now, 10_000)
	if err != nil {
		w.warn(ctx, "list due endpoints", err)
		return false
	}
	w.seenTo = now
	w.mu.Lock()
	for _, ep := range found {
		if w.eps[ep] == nil {
			w.eps[ep] = &endpointState{limit: w.PerEndpoint}
			w.order = append(w.order, ep)
		}
		w.eps[ep].drained = false
	}
	free := w.Concurrency - w.running
	want := map[store.Endpoint]int{}
	if len(w.order) > 0 {
		w.order = append(w.order[1:], w.order[0]) // the first offer goes round
	}
	unoffered := false // an endpoint with work and room got no slot: none were left
	for _, ep := range w.order {
		st := w.eps[ep]
		if st.drained || st.limit <= st.inflight {
			continue
		}
		if free == 0 {
			unoffered = true
			continue
		}
		n := min(st.limit-st.inflight, free)
		want[ep], free = n, free-n
	}
	w.mu.Unlock()
	if len(want) == 0 {
		return false
	}
	due, err := w.Store.DueDeliveries(ctx, now, want)
	if err != nil {
		w.warn(ctx, "list due deliveries", err)
		return false
	}
	got := map[store.Endpoint]int{}
	ids := make([]string, 0, len(due))
	for _, d := range due {
		got[endpointOf(d)]++
		ids = append(ids, d.ID)
	}
	short := w.forget(want, got)
	again = short && unoffered
	lease, claimed, err := w.Store.ClaimDeliveries(ctx, ids, now, now.Add(w.lease()))
	if err != nil {
		w.warn(ctx, "claim deliveries", err)
		return false
	}
	if len(claimed) == 0 {
		return again
	}
	targets, err := w.Store.DeliveryTargets(ctx, claimed, now)
	if err != nil {
		w.warn(ctx, "read deliveries' targets", err)
		return false // leased: tried again when the lease expires
	}
	for _, tg := range targets {
		ep := endpointOf(tg.Delivery)
		w.mu.Lock()
		w.running++
		w.eps[ep].inflight++
		w.mu.Unlock()
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			// The attempt outlives a shutdown signal: it ends within Timeout.
			a := w.try(context.WithoutCancel(ctx), tg, lease)
			w.outcomes <- store.Recorded{ID: tg.Delivery.ID, Attempt: a}
			w.settle(ep, a)
			w.Wake() // a slot is free
		}()
	}
	return again
}

// forget marks drained the endpoints that had fewer deliveries due than
// asked, and drops those of them with nothing in flight either (a later
// window finds them again); it reports whether any was short.
func (w *Worker) forget(asked, got map[store.Endpoint]int) (short bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.order[:0]
	for _, ep := range w.order {
		if n, ok := asked[ep]; ok && got[ep] < n {
			short = true
			if got[ep] == 0 && w.eps[ep].inflight == 0 {
				delete(w.eps, ep)
				continue
			}
			w.eps[ep].drained = true
		}
		kept = append(kept, ep)
	}
	w.order = kept
	return short
}

// settle frees an attempt's slot and adapts its endpoint's share: one more
// for a fast 2xx, half (not under PerEndpoint) for anything else.
func (w *Worker) settle(ep store.Endpoint, a store.DeliveryAttempt) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running--
	st := w.eps[ep]
	st.inflight--
	if a.Delivered && time.Duration(a.ResponseMS)*time.Millisecond < FastAnswer {
		st.limit = min(st.limit+1, w.MaxPerEndpoint)
	} else {
		st.limit = max(st.limit/2, w.PerEndpoint)
	}
}

// record writes the attempts' outcomes as they come, in batches: all that
// are waiting, up to recordBatch, in one commit.
func (w *Worker) record() {
	defer close(w.recorded)
	batch := make([]store.Recorded, 0, recordBatch)
	for r := range w.outcomes {
		batch = append(batch[:0], r)
	more:
		for len(batch) < recordBatch {
			select {
			case r, ok := <-w.outcomes:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		if err := w.Store.RecordDeliveryAttempts(context.Background(), batch); err != nil {
			w.Logger.Warn("webhook attempts not recorded; they will be retried when their lease expires", "deliveries", len(batch), "first", batch[0].ID, "err", err)
			continue
		}
		for _, r := range batch {
			w.logAttempt(r.Delivery, r.Attempt, r.Err)
		}
	}
}

func (w *Worker) warn(ctx context.Context, what string, err error) {
	if ctx.Err() == nil {
		w.Logger.Warn("webhook worker: "+what, "err", err)
	}
}

// logAttempt logs an attempt once recorded: a failure at Info (the
// delivery log shows it too), a 2xx at Debug.
func (w *Worker) logAttempt(d *cauri.Delivery, a store.DeliveryAttempt, err error) {
	if err != nil || d == nil {
		w.Logger.Warn("webhook attempt not recorded", "err", err)
		return
	}
	level := slog.LevelInfo
	if a.Delivered {
		level = slog.LevelDebug
	}
	w.Logger.Log(context.Background(), level, "webhook attempt", "delivery", d.ID, "event", d.Event, "status", d.Status,
		"code", a.StatusCode, "error", a.Error, "response_ms", a.ResponseMS, "manual", a.Manual)
}

// Body is the request body of an event's deliveries: the same bytes on
// every attempt.
func Body(ev *cauri.Event) ([]byte, error) {
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Livemode  bool            `json:"livemode"`
		Data      json.RawMessage `json:"data"`
		Timestamp string          `json:"timestamp"`
	}{ev.ID, ev.Type, ev.Livemode, ev.Data, ev.CreatedAt.UTC().Format(cauri.TimeFormat)})
}

// maxResponseRead is how much of a receiver's answer is read: only its
// status matters.
const maxResponseRead = 64 << 10

// Resend sends delivery id once now, whatever its state, and records the
// attempt; it does not move the automatic schedule. The attempt is
// recorded even if the caller goes away meanwhile.
func (w *Worker) Resend(ctx context.Context, id string) (*cauri.Delivery, error) {
	return w.attempt(context.WithoutCancel(ctx), id, "")
}

// SendNow makes the first automatic attempt of a delivery just written
// (the dashboard's test webhook) at once, under a lease as the worker's
// own passes do, and records it; if a pass leased it first, that pass
// sends it and SendNow returns the delivery as it stands.
func (w *Worker) SendNow(ctx context.Context, id string) (*cauri.Delivery, error) {
	w.init()
	ctx = context.WithoutCancel(ctx)
	now := w.Now()
	lease, claimed, err := w.Store.ClaimDeliveries(ctx, []string{id}, now, now.Add(w.lease()))
	if err != nil {
		return nil, err
	}
	if len(claimed) == 0 {
		tg, err := w.Store.DeliveryTarget(ctx, id, now)
		if err != nil {
			return nil, err
		}
		return tg.Delivery, nil
	}
	return w.attempt(ctx, id, lease)
}

// attempt sends delivery id once, to the address and with the key that are
// current now, and records the outcome at once (a resend: lease "").
func (w *Worker) attempt(ctx context.Context, id, lease string) (*cauri.Delivery, error) {
	w.init()
	tg, err := w.Store.DeliveryTarget(ctx, id, w.Now())
	if err != nil {
		return nil, err
	}
	a := w.try(ctx, tg, lease)
	d, err := w.Store.RecordDeliveryAttempt(ctx, id, a)
	w.logAttempt(d, a, err)
	return d, err
}

// try makes one attempt of a delivery (lease: the worker's claim, or "" for
// a resend) and says what came of it, with when to try again.
func (w *Worker) try(ctx context.Context, tg *store.DeliveryTarget, lease string) store.DeliveryAttempt {
	now := w.Now()
	manual := lease == ""
	a := store.DeliveryAttempt{At: now, URL: tg.URL, Manual: manual, Lease: lease}
	var retryAfter time.Duration
	switch {
	case tg.Problem != "":
		a.Error = tg.Problem
	case tg.URL == "":
		a.Error = "no webhook URL is configured for this mode"
	default:
		body, err := Body(tg.Event)
		if err != nil {
			a.Error = "the event cannot be encoded"
			w.Logger.Error("webhook body", "delivery", tg.Delivery.ID, "err", err)
			break
		}
		retryAfter = w.send(ctx, tg, body, now, &a)
	}
	if !a.Delivered && !manual {
		a.NextAt = w.next(tg.Delivery, now, retryAfter)
	}
	return a
}

// send makes one request and fills in a; it returns the receiver's
// Retry-After on a 429 or 503.
func (w *Worker) send(ctx context.Context, tg *store.DeliveryTarget, body []byte, now time.Time, a *store.DeliveryAttempt) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tg.URL, bytes.NewReader(body))
	if err != nil {
		a.Error = "invalid webhook URL"
		return 0
	}
	webhook.Sign(req.Header, tg.Secrets, tg.Delivery.ID, tg.Delivery.Event, now, body)
	start := time.Now() // a measurement, not business time
	res, err := w.Client.Do(req)
	a.ResponseMS = int(time.Since(start).Milliseconds())
	switch {
	case err != nil && blocked(err):
		a.Error = "address not allowed: " + err.Error()
		return 0
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		a.Error = fmt.Sprintf("timeout: no answer within %s", w.Timeout)
		return 0
	case err != nil:
		a.Error = "network error: " + networkError(err)
		return 0
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, maxResponseRead))
	res.Body.Close()
	a.StatusCode = res.StatusCode
	a.Delivered = res.StatusCode >= 200 && res.StatusCode < 300
	switch {
	case res.StatusCode >= 300 && res.StatusCode < 400:
		a.Error = "redirect not followed: answer " + strconv.Itoa(res.StatusCode)
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
		return retryAfter(res.Header.Get("Retry-After"), now)
	}
	return 0
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// next is when the automatic attempt after this one is due, or nil when
// this was the last. A receiver's Retry-After pushes it later, to at most
// twice the schedule's step.
func (w *Worker) next(d *cauri.Delivery, now time.Time, retryAfter time.Duration) *time.Time {
	n := d.AutoAttempts + 1 // attempts made, this one included
	if n >= d.MaxAttempts || len(w.Schedule) == 0 {
		return nil
	}
	step := w.Schedule[min(n, len(w.Schedule)-1)]
	if retryAfter > step {
		step = min(retryAfter, 2*step)
	}
	t := now.Add(step)
	return &t
}

// networkError says what went wrong reaching a receiver in the merchant's
// terms, without the service's own network details (its DNS resolver's
// address, its local port), which the delivery log shows to the merchant.
func networkError(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("host %s does not resolve", dns.Name)
	case errors.As(err, &dns):
		return fmt.Sprintf("host %s could not be resolved: %s", dns.Name, dns.Err)
	case errors.As(err, &op) && op.Op == "dial":
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "connection refused"
		}
		return "could not connect: " + rootCause(op.Err)
	case errors.As(err, &op):
		return op.Op + ": " + rootCause(op.Err)
	}
	return rootCause(err)
}

// rootCause is the innermost error's text.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// WorkerStore is what the worker reads and records (*store.Store): the due
// deliveries, each leased before it is sent.
type WorkerStore interface {
	DueEndpoints(ctx context.Context, since, now time.Time, limit int) ([]store.Endpoint, error)
	DueDeliveries(ctx context.Context, now time.Time, want map[store.Endpoint]int) ([]*cauri.Delivery, error)
	ClaimDeliveries(ctx context.Context, ids []string, now, until time.Time) (string, []string, error)
	DeliveryTarget(ctx context.Context, id string, now time.Time) (*store.DeliveryTarget, error)
	DeliveryTargets(ctx context.Context, ids []string, now time.Time) ([]*store.DeliveryTarget, error)
	RecordDeliveryAttempt(ctx context.Context, id string, a store.DeliveryAttempt) (*cauri.Delivery, error)
	RecordDeliveryAttempts(ctx context.Context, batch []store.Recorded) error
}

var _ WorkerStore = (*store.Store)(nil)
