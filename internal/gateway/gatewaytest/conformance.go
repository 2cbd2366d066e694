package gatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/movement"
)

// Reply is one answer of the fake aggregator: testdata/Fixture (its source
// cited in SOURCES.md) or Body, with HTTP status Code (200 when 0).
type Reply struct {
	Fixture string
	Body    string
	Code    int
}

func (r Reply) bytes(t *testing.T) []byte {
	if r.Fixture != "" {
		return Golden(t, r.Fixture)
	}
	return []byte(r.Body)
}

func (r Reply) code() int {
	if r.Code == 0 {
		return http.StatusOK
	}
	return r.Code
}

// Case is one documented answer of the aggregator and what the connector
// must make of it.
type Case struct {
	// Name labels the case in failures (its fixture's name when empty).
	Name string
	// Reply answers every call of the case, except the calls named in
	// Replies ("METHOD /path"), answered so.
	Reply   Reply
	Replies map[string]Reply
	// Want is the status the connector must read: its Outcome always, and
	// each other field that is set (Reason and Instructions as parts of the
	// connector's); all of them, exactly, with Exact.
	Want  gateway.Status
	Exact bool
	// Ref, for a status read, is the payment read instead of the Spec's
	// StatusRef.
	Ref *gateway.Ref
	// Err, when set, is the error the connector must return instead.
	Err *Err
}

// Err is how an error must be classified.
type Err struct {
	Transient bool
	NotSent   bool   // the request surely never reached the aggregator
	Answered  bool   // the aggregator answered (an unusable answer), when required
	MaybeSent bool   // it may have reached the aggregator: never "not sent"
	Contains  string // a part of the error's text, when set
}

// CallbackCase is a documented callback and the reference (ours, or the
// aggregator's id where the callback carries only that) the connector
// must read from it; Err: the connector must refuse it (a forged or
// unsigned one).
type CallbackCase struct {
	Name   string
	Header http.Header
	Body   Reply
	Want   string
	Err    bool
}

// Spec is what a connector declares to the conformance suite every
// connector runs (Run): how to build it against a fake aggregator, and the
// aggregator's documented answers with what each means.
type Spec struct {
	// New builds the connector against the fake API at baseURL with hc.
	New func(baseURL string, hc *http.Client) gateway.Connector
	// Setup answers calls every case needs (a token, a configuration),
	// by "METHOD /path"; TokenCall, when set, is the call that gets an
	// access token, which concurrent calls must share (single-flight).
	Setup     map[string]Reply
	TokenCall string

	// Collection is a collection the aggregator takes, in its own amount
	// and phone rules; Initiation is the call that starts it and
	// Initiated the documented answer of a started one.
	Collection gateway.Collection
	Initiation string
	Initiated  Case
	// Reference reads from the initiation request (its body and query)
	// the id the aggregator keeps the collection under when it is ours
	// (its idempotency or client id): it must be Collection.Reference, or
	// KeptAs(Collection.Reference) for an aggregator that keeps a form of
	// it (Orange Money's order_id: its first 30 letters and digits).
	// ReferenceHeader names the header that carries it instead, for the
	// aggregators that take it there (an Idempotency-Key).
	Reference       func(body []byte, query string) string
	ReferenceHeader string
	KeptAs          func(reference string) string
	// Request, when set, is the documented initiation request: every field
	// it has must be sent with its value (Collection is chosen to match it).
	Request string
	// Collect and Status are the documented answers to an initiation and
	// to a status read of StatusRef.
	Collect   []Case
	Status    []Case
	StatusRef gateway.Ref
	Callbacks []CallbackCase

	// Payouts, for the connectors that send money.
	Payout *PayoutSpec
	// Code, for the connectors that take a customer's code after the
	// initiation (gateway.CodeSubmitter).
	Code *CodeSpec
}

// CodeSpec is Spec's part for a code the customer types after the
// initiation (a voucher, a one-time code): the call that submits Code for
// Ref, its documented Request, and the documented answers (Cases).
type CodeSpec struct {
	Ref     gateway.Ref
	Code    string
	Call    string
	Request string
	Cases   []Case
}

// PayoutSpec is Spec's part for payouts.
type PayoutSpec struct {
	Payout          gateway.Payout
	Initiation      string
	Initiated       Case
	Reference       func(body []byte, query string) string
	ReferenceHeader string
	Request         string
	Sent            []Case // answers to the payout
	// Sends is the call that moves the money, when it is not Initiation
	// (FedaPay creates a payout, then starts it): the one whose lost
	// answer must never make the payout go twice.
	Sends     string
	Status    []Case // answers to a status read of StatusRef
	StatusRef gateway.Ref
}

// fake is the aggregator the suite's connector talks to.
type fake struct {
	*Answers
	delay time.Duration
}

// Run holds a connector to its aggregator's documented behaviour and to
// what every connector owes the service: each documented answer read as
// documented; transport failures classified so that nothing is started
// twice (no connection: not sent; no answer: unknown, never "not sent");
// a failed status read never taken for "not found"; callbacks read and
// forged ones refused; our reference as the aggregator's id where it
// keeps one; one access token for concurrent calls; a payout whose answer
// was lost never sent again unless the aggregator keeps it idempotent.
func Run(t *testing.T, s Spec) {
	ctx := context.Background()
	client := &http.Client{Timeout: 2 * time.Second}
	newFake := func(t *testing.T) (*Answers, gateway.Connector) {
		a := NewAnswers(t)
		for call, r := range s.Setup {
			a.Set(call, r.code(), r.bytes(t))
		}
		return a, s.New(a.URL, client)
	}
	answer := func(t *testing.T, a *Answers, c Case) {
		a.Set("", c.Reply.code(), c.Reply.bytes(t))
		for call, r := range c.Replies {
			a.Set(call, r.code(), r.bytes(t))
		}
	}
	cases := func(t *testing.T, name string, list []Case, call func(gateway.Connector, Case) (gateway.Status, error)) {
		for i, c := range list {
			a, conn := newFake(t)
			answer(t, a, c)
			st, err := call(conn, c)
			label := c.Name
			if label == "" {
				label = c.Reply.Fixture
			}
			if label == "" {
				label = fmt.Sprintf("%s case %d", name, i+1)
			}
			check(t, label, st, err, c)
		}
	}
	refOf := func(c Case, ref gateway.Ref) gateway.Ref {
		if c.Ref != nil {
			return *c.Ref
		}
		return ref
	}

	t.Run("Initiation", func(t *testing.T) {
		a, conn := newFake(t)
		answer(t, a, s.Initiated)
		st, err := conn.Collect(ctx, s.Collection)
		check(t, "initiated", st, err, s.Initiated)
		ours := s.Collection.Reference
		if s.KeptAs != nil {
			ours = s.KeptAs(ours)
		}
		initiation(t, a, s.Initiation, s.Reference, s.ReferenceHeader, ours, s.Request)
	})
	t.Run("Collect", func(t *testing.T) {
		cases(t, "collect", s.Collect, func(c gateway.Connector, _ Case) (gateway.Status, error) { return c.Collect(ctx, s.Collection) })
	})
	t.Run("Status", func(t *testing.T) {
		cases(t, "status", s.Status, func(c gateway.Connector, k Case) (gateway.Status, error) {
			return c.CollectionStatus(ctx, refOf(k, s.StatusRef))
		})
	})
	t.Run("Transport", func(t *testing.T) {
		transport(t, s, "collect", func(c gateway.Connector) (gateway.Status, error) { return c.Collect(ctx, s.Collection) })
		transport(t, s, "status", func(c gateway.Connector) (gateway.Status, error) { return c.CollectionStatus(ctx, s.StatusRef) })
	})
	t.Run("Callbacks", func(t *testing.T) {
		_, conn := newFake(t)
		for _, c := range s.Callbacks {
			got, err := conn.CallbackReference(c.Header, c.Body.bytes(t))
			switch {
			case c.Err && err == nil:
				t.Errorf("%s: read %q; want it refused", c.Name, got)
			case !c.Err && (err != nil || got != c.Want):
				t.Errorf("%s: %q, %v; want %q", c.Name, got, err, c.Want)
			}
		}
		for _, junk := range []string{"", "{", "null"} {
			if got, err := conn.CallbackReference(http.Header{}, []byte(junk)); err == nil && got != "" {
				t.Errorf("callback %q read as %q; want refused", junk, got)
			}
		}
	})
	if k := s.Code; k != nil {
		submit := func(c gateway.Connector) (gateway.Status, error) {
			cs, ok := c.(gateway.CodeSubmitter)
			if !ok {
				t.Fatal("the connector has a code in its spec but takes none")
			}
			return cs.SubmitCode(ctx, k.Ref, k.Code)
		}
		t.Run("SubmitCode", func(t *testing.T) {
			cases(t, "code", k.Cases, func(c gateway.Connector, _ Case) (gateway.Status, error) { return submit(c) })
			a, conn := newFake(t)
			answer(t, a, k.Cases[0])
			submit(conn)
			initiation(t, a, k.Call, nil, "", "", k.Request)
		})
		t.Run("SubmitCodeTransport", func(t *testing.T) { transport(t, s, "submit code", submit) })
	}
	if s.TokenCall != "" {
		t.Run("TokenSingleFlight", func(t *testing.T) {
			a, conn := newFake(t)
			answer(t, a, s.Status[0])
			var wg sync.WaitGroup
			for range 20 {
				wg.Add(1)
				go func() { defer wg.Done(); conn.CollectionStatus(ctx, s.StatusRef) }()
			}
			wg.Wait()
			n := 0
			for _, c := range a.Calls() {
				if c == s.TokenCall {
					n++
				}
			}
			if n != 1 {
				t.Errorf("20 concurrent status reads asked for %d tokens; want 1", n)
			}
		})
	}
	if s.Payout == nil {
		return
	}
	p := s.Payout
	payer := func(c gateway.Connector) gateway.Payer {
		pc, ok := c.(gateway.Payer)
		if !ok {
			t.Fatal("the connector has payouts in its spec but sends no money")
		}
		return pc
	}
	t.Run("PayoutInitiation", func(t *testing.T) {
		a, conn := newFake(t)
		answer(t, a, p.Initiated)
		st, err := payer(conn).Payout(ctx, p.Payout)
		check(t, "payout initiated", st, err, p.Initiated)
		initiation(t, a, p.Initiation, p.Reference, p.ReferenceHeader, p.Payout.Reference, p.Request)
	})
	t.Run("Payout", func(t *testing.T) {
		cases(t, "payout", p.Sent, func(c gateway.Connector, _ Case) (gateway.Status, error) { return payer(c).Payout(ctx, p.Payout) })
	})
	t.Run("PayoutStatus", func(t *testing.T) {
		cases(t, "payout status", p.Status, func(c gateway.Connector, k Case) (gateway.Status, error) {
			return payer(c).PayoutStatus(ctx, refOf(k, p.StatusRef))
		})
	})
	t.Run("PayoutTransport", func(t *testing.T) {
		transport(t, s, "payout status", func(c gateway.Connector) (gateway.Status, error) { return payer(c).PayoutStatus(ctx, p.StatusRef) })
	})
	t.Run("NoSecondPayout", func(t *testing.T) {
		// The payout's answer is lost (5xx, then no answer): the service's
		// lifecycle (movement.Send) sends it again only to an aggregator
		// that keeps it idempotent, and never concludes "not sent".
		sends := p.Initiation
		if p.Sends != "" {
			sends = p.Sends
		}
		for _, fault := range []string{"5xx", "timeout"} {
			a, _ := newFake(t)
			answer(t, a, p.Initiated)
			if fault == "5xx" {
				a.Set(sends, http.StatusBadGateway, []byte("upstream unavailable"))
			} else {
				a.Delay(sends, 500*time.Millisecond)
			}
			pc := payer(s.New(a.URL, &http.Client{Timeout: 200 * time.Millisecond}))
			_, sent, err := movement.Send(func() (gateway.Status, error) { return pc.Payout(ctx, p.Payout) }, pc.IdempotentPayout())
			if sent == movement.NotSent {
				t.Errorf("%s: the payout counts as not sent (%v): the service would delete it and the merchant send it again", fault, err)
			}
			n := 0
			for _, c := range a.Calls() {
				if c == sends {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s: no %s call; calls: %v", fault, sends, a.Calls())
			}
			if max := 1; !pc.IdempotentPayout() && n > max || n > 2 {
				t.Errorf("%s: the payout was sent %d times (idempotent %v)", fault, n, pc.IdempotentPayout())
			}
		}
	})
}

// initiation holds the last initiation call received to the documented
// request, and to carrying our reference as the aggregator's id.
func initiation(t *testing.T, a *Answers, call string, reference func([]byte, string) string, header, ours, request string) {
	t.Helper()
	body, query, h := lastCall(a, call)
	if body == nil && query == "" && h == nil {
		t.Fatalf("no %s call; calls: %v", call, a.Calls())
	}
	if reference != nil {
		if got := reference(body, query); got != ours {
			t.Errorf("the aggregator keeps it as %q; want our reference %q (its idempotency id)", got, ours)
		}
	}
	if header != "" {
		if got := h.Get(header); got != ours {
			t.Errorf("%s = %q; want our reference %q", header, got, ours)
		}
	}
	if request != "" {
		documentedFields(t, body, request)
	}
}

// transport holds a call to the classification every connector owes:
// no connection is transient and not sent; no answer in time is transient
// and unknown; a 5xx is transient and answered; none of them is an
// outcome (a status read that failed is never "not found").
func transport(t *testing.T, s Spec, name string, call func(gateway.Connector) (gateway.Status, error)) {
	t.Helper()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if st, err := call(s.New(closed.URL, &http.Client{Timeout: time.Second})); !gateway.IsTransient(err) || gateway.ErrorOf(err) == nil ||
		!gateway.ErrorOf(err).NotSent || st.Outcome != "" {
		t.Errorf("%s with no connection: %+v, %v; want a transient error, not sent", name, st, err)
	}
	slow := NewAnswers(t)
	for call, r := range s.Setup {
		slow.Set(call, r.code(), r.bytes(t))
	}
	slow.Set("", http.StatusOK, []byte(`{}`))
	slow.Delay("", 500*time.Millisecond)
	for call := range s.Setup { // a token is had: the call itself gets no answer
		slow.Delay(call, 0)
	}
	if st, err := call(s.New(slow.URL, &http.Client{Timeout: 200 * time.Millisecond})); !gateway.IsTransient(err) ||
		gateway.ErrorOf(err).NotSent || gateway.ErrorOf(err).Answered || st.Outcome != "" {
		t.Errorf("%s with no answer: %+v, %v; want a transient error, neither sent-for-sure nor answered", name, st, err)
	}
	down := NewAnswers(t)
	for call, r := range s.Setup {
		down.Set(call, r.code(), r.bytes(t))
	}
	down.Set("", http.StatusServiceUnavailable, []byte("<html>503 Service Unavailable</html>"))
	if st, err := call(s.New(down.URL, &http.Client{Timeout: time.Second})); !gateway.IsTransient(err) ||
		gateway.ErrorOf(err).NotSent || st.Outcome != "" {
		t.Errorf("%s answered 503: %+v, %v; want a transient error, maybe started", name, st, err)
	}
}

// check compares a call's result with what the case wants.
func check(t *testing.T, label string, st gateway.Status, err error, c Case) {
	t.Helper()
	if c.Err != nil {
		e := gateway.ErrorOf(err)
		switch {
		case err == nil:
			t.Errorf("%s: %+v; want an error", label, st)
		case gateway.IsTransient(err) != c.Err.Transient:
			t.Errorf("%s: %v; want transient %v", label, err, c.Err.Transient)
		case c.Err.NotSent && (e == nil || !e.NotSent):
			t.Errorf("%s: %v; want not sent", label, err)
		case c.Err.Answered && (e == nil || !e.Answered || e.NotSent):
			t.Errorf("%s: %v; want answered (maybe started), not 'not sent'", label, err)
		case c.Err.MaybeSent && e != nil && e.NotSent:
			t.Errorf("%s: %v; want it maybe sent, never 'not sent'", label, err)
		case c.Err.Contains != "" && !strings.Contains(err.Error(), c.Err.Contains):
			t.Errorf("%s: %v; want it to say %q", label, err, c.Err.Contains)
		}
		return
	}
	w := c.Want
	switch {
	case err != nil:
		t.Errorf("%s: %v; want %+v", label, err, w)
	case c.Exact && st != w:
		t.Errorf("%s: %+v; want exactly %+v", label, st, w)
	case st.Outcome != w.Outcome:
		t.Errorf("%s: outcome %q (%+v); want %q", label, st.Outcome, st, w.Outcome)
	case w.ProviderRef != "" && st.ProviderRef != w.ProviderRef:
		t.Errorf("%s: provider ref %q; want %q", label, st.ProviderRef, w.ProviderRef)
	case w.RedirectURL != "" && st.RedirectURL != w.RedirectURL:
		t.Errorf("%s: redirect %q; want %q", label, st.RedirectURL, w.RedirectURL)
	case st.NeedsCode != w.NeedsCode:
		t.Errorf("%s: needs a code %v; want %v", label, st.NeedsCode, w.NeedsCode)
	case st.LowBalance != w.LowBalance:
		t.Errorf("%s: low balance %v; want %v", label, st.LowBalance, w.LowBalance)
	case !strings.Contains(st.Reason, w.Reason):
		t.Errorf("%s: reason %q; want it to say %q", label, st.Reason, w.Reason)
	case !strings.Contains(st.Instructions, w.Instructions):
		t.Errorf("%s: instructions %q; want them to say %q", label, st.Instructions, w.Instructions)
	}
}

// lastCall is the body, query and header of the last call named call.
func lastCall(a *Answers, call string) ([]byte, string, http.Header) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.calls) - 1; i >= 0; i-- {
		if a.calls[i] == call {
			return a.bodies[i], a.queries[i], a.headers[i]
		}
	}
	return nil, "", nil
}

// documentedFields holds a request body to every field of the documented
// request testdata/name: a JSON body, or a form (its fields as strings;
// a form whose data field holds JSON, as CinetPay's transfer API takes
// it, is held by that JSON, the first item of a list).
func documentedFields(t *testing.T, body []byte, name string) {
	t.Helper()
	var sent any
	if err := json.Unmarshal(body, &sent); err == nil {
		DocumentedFields(t, sent, name)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || len(form) == 0 {
		t.Fatalf("the request is neither JSON nor a form: %s", body)
	}
	if data := form.Get("data"); data != "" && json.Unmarshal([]byte(data), &sent) == nil {
		if list, ok := sent.([]any); ok && len(list) > 0 {
			sent = list[0]
		}
		DocumentedFields(t, sent, name)
		return
	}
	fields := map[string]string{}
	for k := range form {
		fields[k] = form.Get(k)
	}
	DocumentedFields(t, fields, name)
}

// Pending is the status of a payment that waits.
var Pending = gateway.Status{Outcome: gateway.Pending}

// Failed is the status of a refused or failed payment, its reason saying
// (at least) reason.
func Failed(reason string) gateway.Status {
	return gateway.Status{Outcome: gateway.Failed, Reason: reason}
}

// Fixture is the reply testdata/name, answered 200.
func Fixture(name string) Reply { return Reply{Fixture: name} }

// JSONField reads a string field of a JSON request body, for a Spec's
// Reference.
func JSONField(name string) func(body []byte, query string) string {
	return func(body []byte, _ string) string {
		var m map[string]any
		json.Unmarshal(body, &m)
		s, _ := m[name].(string)
		return s
	}
}
