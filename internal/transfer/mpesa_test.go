package transfer

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// clock is a settable clock for the service.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// mpesaEnv is a workspace with a live M-Pesa gateway with B2C credentials
// pointed at Daraja's simulator over HTTP, the service over a real store,
// and the gateway's callback route (as the API serves it: the connector
// reads the callback, the service confirms it): each callback's reference,
// or why it was ignored, is sent on heard.
type mpesaEnv struct {
	s     *Service
	ws    *cauri.Workspace
	sim   *mpesa.Simulator
	clock *clock
	heard chan string
}

func newMpesaEnv(t *testing.T, st *store.Store) *mpesaEnv {
	t.Helper()
	ctx := context.Background()
	e := &mpesaEnv{clock: &clock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}, heard: make(chan string, 16)}
	ws := storetest.Workspace(t, st, "Nairobi payroll", true, e.clock.Now())
	ws, err := st.SetTransferDailyCap(ctx, ws.ID, 100, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	cred := base64.StdEncoding.EncodeToString(make([]byte, 256))
	e.sim = &mpesa.Simulator{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "174379", PassKey: "pk",
		InitiatorName: "testapi", B2CCredential: cred, B2CShortCode: "600996", SettleAfter: time.Millisecond}
	daraja := httptest.NewServer(e.sim)
	t.Cleanup(daraja.Close)
	g := storetest.Gateway(t, st, ws, "mpesa", daraja.URL, map[string]string{"consumer_key": "ck", "consumer_secret": "cs",
		"shortcode": "174379", "passkey": "pk", "initiator_name": "testapi", "security_credential": cred, "b2c_shortcode": "600996"},
		e.clock.Now(), "KE")
	failures := movement.NewFailures(slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	e.s = &Service{Store: st, Now: e.clock.Now, Failures: failures,
		Connectors: &movement.Connectors{Store: st, Build: connectors.New, Failures: failures}}
	callbacks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := http.Header{} // as the callback route gives it: the segment after /callbacks/{gatewayId}
		if parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/"); len(parts) == 3 {
			h.Set(gateway.CallbackPathHeader, parts[2])
		}
		conn, err := e.s.Connectors.For(r.Context(), movement.Transfer, g)
		ref := ""
		if err == nil {
			ref, err = conn.CallbackReference(h, body)
		}
		if err == nil {
			err = e.s.Callback(r.Context(), g.ID, ref)
		}
		if err != nil {
			ref = "ignored: " + err.Error()
		}
		w.Write([]byte(`{"received":true}`))
		e.heard <- ref
	}))
	t.Cleanup(callbacks.Close)
	e.s.CallbackURL = callbacks.URL + "/callbacks"
	return e
}

// send creates a transfer of 2,500 KES to phone.
func (e *mpesaEnv) send(t *testing.T, phone string) *cauri.Transfer {
	t.Helper()
	tr, err := e.s.Validate(context.Background(), e.ws, Params{Amount: "2500", Country: "KE", Operator: "mpesa", Phone: phone, Currency: "KES", RecipientName: "John Doe"})
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err = e.s.Create(context.Background(), e.ws, tr, "")
	if err != nil || tr.Status != cauri.TransferProcessing {
		t.Fatalf("create = %+v, %v; want processing", tr, err)
	}
	return tr
}

// next is the next callback's reference, or why it was ignored.
func (e *mpesaEnv) next(t *testing.T) string {
	t.Helper()
	select {
	case ref := <-e.heard:
		return ref
	case <-time.After(5 * time.Second):
		t.Fatal("no callback")
		return ""
	}
}

func (e *mpesaEnv) get(t *testing.T, id string) *cauri.Transfer {
	t.Helper()
	tr, err := e.s.Get(context.Background(), e.ws.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestReconcile_MpesaNeverReceived: a B2C request whose connection dropped
// before Daraja read it stays processing (its answer was lost: it may
// have arrived), is asked about by the reconciler, and stays processing
// whatever Daraja's status query answers about it (2032, "does not
// exist", is not confirmed to mean "never received" for a query by
// OriginatorConversationID, and a transfer ended failed is sent again).
// Requests Daraja did receive, their answers lost: one paid is found
// paid, one still pending at Daraja stays processing, however long; none
// is sent twice.
func TestReconcile_MpesaNeverReceived(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newMpesaEnv(t, st)

		e.sim.LoseB2CRequests.Store(true)
		never := e.send(t, "+254708374149")
		e.sim.LoseB2CRequests.Store(false)
		e.sim.LoseB2CAnswers.Store(true)
		stuck := e.send(t, "+254708370129") // received, never settles
		e.sim.LoseResults.Store(true)
		paid := e.send(t, "+254708374150") // received and paid, its result lost too
		if e.sim.B2CRequests() != 2 {
			t.Fatalf("%d B2C requests received; want 2", e.sim.B2CRequests())
		}

		// A minute later: Daraja does not know the first one yet, which
		// concludes nothing; the paid one is found paid.
		e.clock.Add(time.Minute)
		if _, err := e.s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			switch got := e.next(t); {
			case got == paid.Reference:
			case strings.HasPrefix(got, "ignored: ") && strings.Contains(got, never.Reference) && strings.Contains(got, "2032"):
			default:
				t.Fatalf("callback %q", got)
			}
		}
		if got := e.get(t, paid.ID); got.Status != cauri.TransferSucceeded {
			t.Fatalf("the paid one = %s %s", got.Status, got.FailureMessage)
		}
		if got := e.get(t, never.ID); got.Status != cauri.TransferProcessing {
			t.Fatalf("not known a minute after its call = %s %s; want processing", got.Status, got.FailureMessage)
		}

		// An hour later: Daraja's "not known" still ends nothing.
		e.clock.Add(time.Hour)
		if _, err := e.s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got := e.next(t); !strings.HasPrefix(got, "ignored: ") || !strings.Contains(got, "2032") {
			t.Fatalf("callback %q; want the status result of %s ignored", got, never.Reference)
		}
		if got := e.get(t, never.ID); got.Status != cauri.TransferProcessing {
			t.Fatalf("never received, an hour later = %s %s; want processing", got.Status, got.FailureMessage)
		}
		// The one Daraja has, still pending there, gets no result (the
		// reconciler's query above was the first's too).
		select {
		case got := <-e.heard:
			t.Fatalf("callback %q about a payout pending at Daraja", got)
		case <-time.After(300 * time.Millisecond):
		}
		if got := e.get(t, stuck.ID); got.Status != cauri.TransferProcessing {
			t.Fatalf("received, pending at Daraja = %s %s; want processing", got.Status, got.FailureMessage)
		}
		if e.sim.B2CRequests() != 2 || e.sim.B2CPaid(never.Reference) != 0 || e.sim.B2CPaid(paid.Reference) != 1 {
			t.Fatalf("%d B2C requests; never received paid %d times, paid %d times", e.sim.B2CRequests(),
				e.sim.B2CPaid(never.Reference), e.sim.B2CPaid(paid.Reference))
		}
	})
}
