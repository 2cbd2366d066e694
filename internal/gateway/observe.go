package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Observer records one call to an aggregator: its provider, operation
// (collect, status), outcome (pending, succeeded, failed, not_found,
// transient_error, error) and duration.
type Observer func(provider, operation, outcome string, d time.Duration)

// Observe wraps a connector so that every call is observed, and status
// reads (idempotent) are retried twice on a transient error. Initiations
// are not retried here: a transient failure is settled by a status check.
// A connector that can send money stays a Payer; one that can refund
// gives its Refunder through Refunds.
func Observe(c Connector, provider string, obs Observer) Connector {
	o := &observed{c: c, provider: provider, obs: obs}
	if p, ok := c.(Payer); ok {
		return &observedPayer{observed: o, p: p}
	}
	return o
}

type observedPayer struct {
	*observed
	p Payer
}

func (o *observedPayer) Payout(ctx context.Context, p Payout) (Status, error) {
	start := time.Now()
	st, err := o.p.Payout(ctx, p)
	o.record("payout", start, st, err)
	return st, err
}

func (o *observedPayer) PayoutStatus(ctx context.Context, ref Ref) (Status, error) {
	return o.status(ctx, "payout_status", func() (Status, error) { return o.p.PayoutStatus(ctx, ref) })
}

func (o *observedPayer) IdempotentPayout() bool { return o.p.IdempotentPayout() }

// refunder is the observed connector's Refunder, when it has one: every
// refund call observed, its status reads retried as the others.
func (o *observed) refunder() (Refunder, bool) {
	r, ok := o.c.(Refunder)
	if !ok {
		return nil, false
	}
	return &observedRefunder{observed: o, r: r}, true
}

type observedRefunder struct {
	*observed
	r Refunder
}

func (o *observedRefunder) Refund(ctx context.Context, r Refund) (Status, error) {
	start := time.Now()
	st, err := o.r.Refund(ctx, r)
	o.record("refund", start, st, err)
	return st, err
}

func (o *observedRefunder) RefundStatus(ctx context.Context, ref Ref) (Status, error) {
	return o.status(ctx, "refund_status", func() (Status, error) { return o.r.RefundStatus(ctx, ref) })
}

func (o *observedRefunder) IdempotentRefund() bool { return o.r.IdempotentRefund() }

func (o *observedRefunder) RefundsUnavailable() string { return RefundsUnavailable(o.r) }

func (o *observedRefunder) WholeRefundsOnly() bool { return WholeRefundsOnly(o.r) }

func (o *observedRefunder) CollectionUnrefundable(ref Ref) string {
	return CollectionUnrefundable(o.r, ref)
}

func (o *observed) paidReference(h http.Header, body []byte) (string, string) {
	return PaidReference(o.c, h, body)
}

type observed struct {
	c        Connector
	provider string
	obs      Observer
}

func (o *observed) record(op string, start time.Time, st Status, err error) {
	if o.obs == nil {
		return
	}
	outcome := string(st.Outcome)
	switch {
	case IsTransient(err):
		outcome = "transient_error"
	case err != nil:
		outcome = "error"
	}
	o.obs(o.provider, op, outcome, time.Since(start))
}

func (o *observed) Collect(ctx context.Context, c Collection) (Status, error) {
	start := time.Now()
	st, err := o.c.Collect(ctx, c)
	o.record("collect", start, st, err)
	return st, err
}

func (o *observed) CollectionStatus(ctx context.Context, ref Ref) (Status, error) {
	return o.status(ctx, "status", func() (Status, error) { return o.c.CollectionStatus(ctx, ref) })
}

// status reads a status (idempotent), retried twice on a transient error.
func (o *observed) status(ctx context.Context, op string, read func() (Status, error)) (Status, error) {
	var st Status
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return st, err
			case <-time.After(time.Duration(try) * 200 * time.Millisecond):
			}
		}
		start := time.Now()
		st, err = read()
		o.record(op, start, st, err)
		if !IsTransient(err) {
			break
		}
	}
	return st, err
}

func (o *observed) IdempotentCollect() bool {
	ic, ok := o.c.(IdempotentCollector)
	return ok && ic.IdempotentCollect()
}

func (o *observed) CallbackReference(h http.Header, body []byte) (string, error) {
	return o.c.CallbackReference(h, body)
}

// SubmitCode passes a customer's code to a connector that takes one;
// ErrNoCode from one that does not.
func (o *observed) SubmitCode(ctx context.Context, ref Ref, code string) (Status, error) {
	cs, ok := o.c.(CodeSubmitter)
	if !ok {
		return Status{}, ErrNoCode
	}
	start := time.Now()
	st, err := cs.SubmitCode(ctx, ref, code)
	o.record("submit_code", start, st, err)
	return st, err
}

// AccountHolderName asks a connector that can look names up (NameLooker),
// retried twice on a transient error like a status read (it moves
// nothing); ErrNoNameLookup from one that cannot, without a call.
func (o *observed) AccountHolderName(ctx context.Context, country, operator, phone string) (string, error) {
	nl, ok := o.c.(NameLooker)
	if !ok {
		return "", ErrNoNameLookup
	}
	var name string
	st, err := o.status(ctx, "account_holder_name", func() (Status, error) {
		var err error
		name, err = nl.AccountHolderName(ctx, country, operator, phone)
		switch {
		case errors.Is(err, ErrNameUnknown):
			return Status{Outcome: NotFound}, nil
		case err != nil:
			return Status{}, err
		}
		return Status{Outcome: Succeeded}, nil
	})
	switch {
	case err != nil:
		return "", err
	case st.Outcome == NotFound:
		return "", ErrNameUnknown
	}
	return name, nil
}
