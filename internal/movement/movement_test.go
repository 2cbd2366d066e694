package movement

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestSend(t *testing.T) {
	refused := gateway.Status{Outcome: gateway.Failed, Reason: "insufficient funds"}
	tests := []struct {
		name       string
		answers    []error // one per call; nil: the Status answered
		idempotent bool
		accepted   bool // the Status answered is an acceptance, else a refusal
		want       Sent
		calls      int
	}{
		{name: "Answered", answers: []error{nil}, want: Answered, calls: 1},
		{name: "RefusedIsAnAnswer", answers: []error{nil}, want: Answered, calls: 1},
		{name: "NoConnection", answers: []error{&gateway.Error{Transient: true, NotSent: true, Message: "connection refused"}}, want: NotSent, calls: 1},
		{name: "CredentialsRefused", answers: []error{&gateway.Error{Message: "401"}}, want: NotSent, calls: 1},
		{name: "NotAGatewayError", answers: []error{errors.New("invalid phone")}, want: NotSent, calls: 1},
		{name: "Timeout", answers: []error{&gateway.Error{Transient: true, Message: "timeout"}}, want: NoAnswer, calls: 1},
		{name: "Unreadable", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"}}, want: Unreadable, calls: 1},
		{name: "UnreadableResentWhenIdempotent", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"}, nil},
			idempotent: true, accepted: true, want: Answered, calls: 2},
		{name: "UnreadableTwice", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"},
			&gateway.Error{Transient: true, Answered: true, Message: "502"}}, idempotent: true, want: Unreadable, calls: 2},
		// The first call reached the aggregator: a resend that could not
		// connect, or that is refused, never makes the movement "not sent".
		{name: "UnreadableThenNoConnection", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"},
			&gateway.Error{Transient: true, NotSent: true, Message: "connection refused"}}, idempotent: true, want: Unreadable, calls: 2},
		{name: "UnreadableThenRefusedCredentials", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"},
			&gateway.Error{Message: "401"}}, idempotent: true, want: Unreadable, calls: 2},
		{name: "UnreadableThenRefused", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"}, nil},
			idempotent: true, want: Unreadable, calls: 2},
		{name: "UnreadableThenTimeout", answers: []error{&gateway.Error{Transient: true, Answered: true, Message: "502"},
			&gateway.Error{Transient: true, Message: "timeout"}}, idempotent: true, want: NoAnswer, calls: 2},
		{name: "TimeoutNeverResent", answers: []error{&gateway.Error{Transient: true, Message: "timeout"}, nil}, idempotent: true,
			want: NoAnswer, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := refused
			if tt.accepted {
				answer = gateway.Status{Outcome: gateway.Pending, ProviderRef: "dep_1"}
			}
			calls := 0
			st, got, err := Send(func() (gateway.Status, error) {
				err := tt.answers[calls]
				calls++
				if err != nil {
					return gateway.Status{}, err
				}
				return answer, nil
			}, tt.idempotent)
			if got != tt.want || calls != tt.calls {
				t.Fatalf("Send = %v after %d calls; want %v after %d", got, calls, tt.want, tt.calls)
			}
			if (err == nil) != (got == Answered) {
				t.Errorf("err = %v with %v", err, got)
			}
			if got == Answered && st != answer {
				t.Errorf("status = %+v; want the aggregator's answer %+v", st, answer)
			}
		})
	}
}

func TestFailures_Record(t *testing.T) {
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	f := NewFailures(slog.New(slog.NewTextHandler(&logs, nil)), reg)
	ctx := context.Background()
	f.Record(ctx, Transfer, "check", "tr_1", nil)
	f.Record(ctx, Transfer, "check", "tr_2", errors.New("aggregator unreachable"))
	f.Record(ctx, Payment, "finish", "att_3", cauri.Errorf(cauri.EConflict, "settled"))
	if got := count(t, f, "transfer", "check"); got != 1 {
		t.Errorf("transfer check failures = %v; want 1 (nil is no failure)", got)
	}
	if got := count(t, f, "payment", "finish"); got != 1 {
		t.Errorf("payment finish failures = %v; want 1", got)
	}
	for _, want := range []string{"id=tr_2", "aggregator unreachable", "id=att_3", "code=conflict"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "tr_1") {
		t.Errorf("a nil error was logged:\n%s", logs.String())
	}
}

// TestConnectors_Problem: a gateway whose connector cannot be built is
// counted each time and its problem is recorded on the gateway (shown on
// the dashboard) until it can be built again.
func TestConnectors_Problem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		ws, _ := cauri.NewWorkspace("Dakar shop", now)
		list, _ := cauri.KeySet(ws.ID, now)
		if err := st.CreateWorkspace(ctx, ws, list); err != nil {
			t.Fatal(err)
		}
		g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: "pawapay", Name: "pawaPay", Collect: true,
			Enabled: true, CreatedAt: now}
		if err := st.CreateGateway(ctx, g, map[string]string{"api_token": "tok"}); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		f := NewFailures(slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
		broken := errors.New("credentials do not decrypt")
		c := &Connectors{Store: st, Failures: f, Build: func(*cauri.Gateway, map[string]string) (gateway.Connector, error) {
			return nil, broken
		}}
		reload := func() *cauri.Gateway {
			t.Helper()
			got, err := st.GatewayByID(ctx, g.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		for range 2 {
			if _, err := c.For(ctx, Payment, reload()); !errors.Is(err, broken) {
				t.Fatalf("For = %v; want %v", err, broken)
			}
		}
		if got := reload().Problem; !strings.Contains(got, "credentials do not decrypt") {
			t.Fatalf("problem = %q; want the cause", got)
		}
		if got := count(t, f, "payment", "connector"); got != 2 {
			t.Errorf("connector failures = %v; want 2", got)
		}
		if !strings.Contains(logs.String(), "id="+g.ID) {
			t.Errorf("the failure's log names no gateway:\n%s", logs.String())
		}
		c.Build = func(*cauri.Gateway, map[string]string) (gateway.Connector, error) { return stubConnector{}, nil }
		if _, err := c.For(ctx, Transfer, reload()); err != nil {
			t.Fatal(err)
		}
		if got := reload().Problem; got != "" {
			t.Errorf("problem once built = %q; want none", got)
		}
	})
}

type stubConnector struct{ gateway.Connector }

func count(t *testing.T, f *Failures, kind, step string) float64 {
	t.Helper()
	var m dto.Metric
	if err := f.count.WithLabelValues(kind, step).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
