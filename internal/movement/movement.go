// Package movement is the lifecycle every money movement goes through,
// whether it collects (a payment attempt, internal/checkout), pays out (a
// transfer, internal/transfer) or gives a collection back (a refund,
// internal/refund):
//
//  1. commit the movement, with our reference, before anything is sent;
//  2. call the aggregator (Send), and classify its answer: surely not sent,
//     answered, or unknown (an unreadable answer, no answer at all);
//  3. mark it initiated, so that from then on its status may be read;
//  4. learn the outcome: a callback (only a signal, always confirmed by a
//     status read), a status read asked by a page, or the reconciler;
//  5. finish it, with its event, in one transaction.
//
// The two uses keep their own rules (a payment fails over to another
// gateway; a transfer is never sent twice); what they share is here: the
// timing of every step (one table), building a gateway's connector
// (Connectors), classifying an aggregator's answer (Send), and failures
// that nobody is waiting for, logged with the movement's id and counted
// (Failures), never dropped.
//
// It imports the domain and the gateway package.
package movement

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/prometheus/client_golang/prometheus"
)

// The lifecycle's timing, for payments and transfers alike.
const (
	// StatusCheck: a pending movement is asked about at most this often,
	// across every node (SPEC section 3: at most once per 8 seconds).
	StatusCheck = 8 * time.Second
	// CallbackCheck: a callback is news, so it asks at once even right
	// after a status read, but at most this often per movement, however
	// many callbacks arrive.
	CallbackCheck = 2 * time.Second
	// CheckBackoffMax bounds the reconciler's backoff between two status
	// reads of a movement that stays pending.
	CheckBackoffMax = time.Hour
	// NotFoundIsFinal: an aggregator that still does not know a movement
	// this long after its initiation call returned never received it.
	NotFoundIsFinal = 2 * time.Minute
	// ReconcileBatch is how many movements one reconciler pass takes of
	// each kind.
	ReconcileBatch = 100
)

// InitiationDeadline bounds an initiation call (its 15 s timeouts, a
// resend and a status check included): a movement still not marked
// initiated this long after its creation was cut short by a crash, and the
// reconciler takes it as initiated then. A variable only so that the
// cluster test, whose nodes it kills, need not wait five minutes.
var InitiationDeadline = 5 * time.Minute

// Kind names the uses of the lifecycle in logs and metrics.
type Kind string

const (
	Payment  Kind = "payment"  // a payment attempt: a collection
	Transfer Kind = "transfer" // a transfer: a payout
	Refund   Kind = "refund"   // a refund: a collection given back
)

// Sent is what an initiation call tells of whether the aggregator received
// the movement.
type Sent int

const (
	// NotSent: the request surely never reached the aggregator (no
	// connection, credentials refused, a request the connector refused to
	// send), so nothing started and nothing can move money.
	NotSent Sent = iota
	// Answered: the aggregator answered; the Status is its answer (a
	// refusal is a Failed outcome, not an error).
	Answered
	// Unreadable: the aggregator answered something unusable (a 5xx, a body
	// it could not read): it may have started the movement.
	Unreadable
	// NoAnswer: no answer came (a timeout): it may still be processed.
	NoAnswer
)

// Send calls the aggregator and classifies its answer. An unreadable
// answer is sent once more with the same reference when the connector
// says a resend cannot move money twice (idempotent: pawaPay's ids). The
// first call reached the aggregator then, so a resend that does not (no
// connection, a refusal before sending) or that is refused (the refusal
// may be of a second movement, the first having been made) leaves the
// first call's classification, Unreadable: it may have started the
// movement, and only the aggregator's status can tell.
func Send(call func() (gateway.Status, error), idempotent bool) (gateway.Status, Sent, error) {
	st, err := call()
	sent := classify(err)
	if sent == Unreadable && idempotent {
		st2, err2 := call() // the same reference: at most one movement
		again := classify(err2)
		if again != NotSent && !(again == Answered && st2.Outcome == gateway.Failed) {
			return st2, again, err2
		}
	}
	return st, sent, err
}

func classify(err error) Sent {
	e := gateway.ErrorOf(err)
	switch {
	case err == nil:
		return Answered
	case e == nil || !e.Transient || e.NotSent:
		return NotSent
	case e.Answered:
		return Unreadable
	}
	return NoAnswer
}

// Failures logs and counts what went wrong in a movement's lifecycle where
// nobody waits for the answer (a reconciler pass, a callback already
// answered 200, the end of a call whose client left), with the movement's
// id, so that no error is dropped.
type Failures struct {
	Logger *slog.Logger
	count  *prometheus.CounterVec
}

// NewFailures counts into reg (nil: not counted) as
// cauri_movement_failures_total{kind, step}.
func NewFailures(logger *slog.Logger, reg prometheus.Registerer) *Failures {
	f := &Failures{Logger: logger, count: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cauri_movement_failures_total",
		Help: "Failures in payments' and transfers' lifecycle that no request answered, by kind and step.",
	}, []string{"kind", "step"})}
	if reg != nil {
		reg.MustRegister(f.count)
	}
	return f
}

// Record logs and counts err, unless it is nil. step says where (connector,
// check, finish, payout, cancel, ...); id is the movement's (or the
// gateway's, for a connector that cannot be built).
func (f *Failures) Record(ctx context.Context, kind Kind, step, id string, err error) {
	if err == nil || f == nil {
		return
	}
	f.count.WithLabelValues(string(kind), step).Inc()
	if f.Logger != nil {
		f.Logger.ErrorContext(ctx, "money movement step failed", "kind", string(kind), "step", step, "id", id,
			"code", string(cauri.ErrorCode(err)), "error", err.Error())
	}
}

// Store is what Connectors needs of the store.
type Store interface {
	GatewayCredentials(ctx context.Context, id string) (map[string]string, error)
	// SetGatewayProblem records why a gateway's connector cannot be built
	// ("" once it can), for the dashboard's gateways page.
	SetGatewayProblem(ctx context.Context, id, problem string) error
}

// BuildProblem begins a gateway's problem when its connector cannot be
// built; CredentialsProblem when the aggregator refused its credentials
// (a payout failed for them, or a token request): the transfer service
// sets it, and clears it when a payout through the gateway succeeds.
const (
	BuildProblem       = "The connector cannot be built: "
	CredentialsProblem = "The aggregator refused its credentials: "
)

// Connectors builds gateways' connectors, observed (every call recorded
// for the metrics and the routing engine). A gateway whose connector
// cannot be built (credentials that no longer decrypt, a field missing)
// is logged and counted each time, and recorded on the gateway, where the
// dashboard's gateways page shows it until it can be built again; never
// skipped silently.
type Connectors struct {
	Store    Store
	Build    func(g *cauri.Gateway, creds map[string]string) (gateway.Connector, error)
	Observe  gateway.Observer
	Failures *Failures
}

// For builds g's connector, for a movement of kind.
func (c *Connectors) For(ctx context.Context, kind Kind, g *cauri.Gateway) (gateway.Connector, error) {
	creds, err := c.Store.GatewayCredentials(ctx, g.ID)
	var conn gateway.Connector
	if err == nil {
		conn, err = c.Build(g, creds)
	}
	problem := ""
	if err != nil {
		problem = BuildProblem + err.Error()
		c.Failures.Record(ctx, kind, "connector", g.ID, err)
	}
	// Written when it changes, not on every call; a connector that builds
	// clears only its own problem (credentials the aggregator refused are
	// cleared by a payout they make, see CredentialsProblem).
	if problem != g.Problem && (problem != "" || strings.HasPrefix(g.Problem, BuildProblem)) {
		if serr := c.Store.SetGatewayProblem(context.WithoutCancel(ctx), g.ID, problem); serr != nil {
			c.Failures.Record(ctx, kind, "gateway_problem", g.ID, serr)
		}
	}
	if err != nil {
		return nil, err
	}
	return gateway.Observe(conn, g.Provider, c.Observe), nil
}
