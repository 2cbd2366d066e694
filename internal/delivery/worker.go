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
type Worker struct {
	Store    WorkerStore
	Client   *http.Client     // Guard.Client
	Schedule []time.Duration  // delay before each automatic attempt
	Timeout  time.Duration    // the receiver's time to answer
	Now      func() time.Time // injected clock
	Logger   *slog.Logger

	// Concurrency bounds the attempts in flight; PerEndpoint bounds those
	// to one workspace's address of one mode, so that a slow receiver
	// holds at most that many slots and never the others' deliveries.
	Concurrency int
	PerEndpoint int
	Poll        time.Duration // how often the database is asked, besides wake-ups

	wake     chan struct{}
	initOnce sync.Once
	mu       sync.Mutex
	inflight map[string]int
	running  int
	wg       sync.WaitGroup
}

func (w *Worker) init() {
	w.initOnce.Do(func() {
		w.wake = make(chan struct{}, 1)
		w.inflight = map[string]int{}
		if w.Concurrency <= 0 {
			w.Concurrency = 16
		}
		if w.PerEndpoint <= 0 {
			w.PerEndpoint = 2
		}
		if w.Poll <= 0 {
			w.Poll = time.Second
		}
		if w.Timeout <= 0 {
			w.Timeout = cauri.WebhookTimeout
		}
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
// an attempt can last, short enough that a crashed node's deliveries are
// soon retried.
func (w *Worker) lease() time.Duration { return 2*w.Timeout + time.Second }

// Run sends deliveries until ctx ends, then lets the attempts in flight
// finish (each within Timeout) before returning.
func (w *Worker) Run(ctx context.Context) {
	w.init()
	tick := time.NewTicker(w.Poll)
	defer tick.Stop()
	for {
		w.dispatch(ctx)
		select {
		case <-ctx.Done():
			w.wg.Wait()
			return
		case <-w.wake:
		case <-tick.C:
		}
	}
}

func endpoint(d *cauri.Delivery) string { return d.WorkspaceID + "/" + strconv.FormatBool(d.Livemode) }

// dispatch claims as many due deliveries as there are free slots, skipping
// endpoints that already use their share, and starts their attempts.
func (w *Worker) dispatch(ctx context.Context) {
	w.mu.Lock()
	free := w.Concurrency - w.running
	w.mu.Unlock()
	if free <= 0 || ctx.Err() != nil {
		return
	}
	now := w.Now()
	due, err := w.Store.DueDeliveries(ctx, now, w.PerEndpoint, 4*w.Concurrency)
	if err != nil {
		if ctx.Err() == nil {
			w.Logger.Warn("webhook worker: list due deliveries", "err", err)
		}
		return
	}
	// Pick what fits the free slots and each endpoint's share, then lease
	// the lot in one statement (one commit, however many).
	var picked []string
	byID := map[string]*cauri.Delivery{}
	want := map[string]int{}
	w.mu.Lock()
	for _, d := range due {
		ep := endpoint(d)
		if len(picked) >= free || w.inflight[ep]+want[ep] >= w.PerEndpoint {
			continue
		}
		want[ep]++
		picked = append(picked, d.ID)
		byID[d.ID] = d
	}
	w.mu.Unlock()
	lease, claimed, err := w.Store.ClaimDeliveries(ctx, picked, now, now.Add(w.lease()))
	if err != nil {
		if ctx.Err() == nil {
			w.Logger.Warn("webhook worker: claim deliveries", "err", err)
		}
		return
	}
	for _, id := range claimed {
		d := byID[id]
		ep := endpoint(d)
		w.mu.Lock()
		w.running++
		w.inflight[ep]++
		w.mu.Unlock()
		w.wg.Add(1)
		go func() {
			defer func() {
				w.mu.Lock()
				w.running--
				w.inflight[ep]--
				w.mu.Unlock()
				w.wg.Done()
				w.Wake() // a slot is free
			}()
			// The attempt outlives a shutdown signal: it ends within Timeout.
			if _, err := w.attempt(context.WithoutCancel(ctx), d.ID, lease); err != nil {
				w.Logger.Warn("webhook attempt not recorded; it will be retried when its lease expires", "delivery", d.ID, "err", err)
			}
		}()
	}
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

// attempt sends delivery id once, to the address and with the key that are
// current now, and records the outcome. lease is the token of the worker's
// claim, or "" for a resend.
func (w *Worker) attempt(ctx context.Context, id, lease string) (*cauri.Delivery, error) {
	w.init()
	now := w.Now()
	tg, err := w.Store.DeliveryTarget(ctx, id, now)
	if err != nil {
		return nil, err
	}
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
			return nil, err
		}
		retryAfter = w.send(ctx, tg, body, now, &a)
	}
	if !a.Delivered && !manual {
		a.NextAt = w.next(tg.Delivery, now, retryAfter)
	}
	d, err := w.Store.RecordDeliveryAttempt(ctx, id, a)
	if err == nil {
		w.Logger.Info("webhook attempt", "delivery", d.ID, "event", d.Event, "status", d.Status, "code", a.StatusCode,
			"error", a.Error, "response_ms", a.ResponseMS, "manual", manual)
	}
	return d, err
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
	ClaimDeliveries(ctx context.Context, ids []string, now, until time.Time) (string, []string, error)
	DeliveryTarget(ctx context.Context, id string, now time.Time) (*store.DeliveryTarget, error)
	DueDeliveries(ctx context.Context, now time.Time, perEndpoint, limit int) ([]*cauri.Delivery, error)
	RecordDeliveryAttempt(ctx context.Context, id string, a store.DeliveryAttempt) (*cauri.Delivery, error)
}

var _ WorkerStore = (*store.Store)(nil)
