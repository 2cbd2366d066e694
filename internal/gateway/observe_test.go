package gateway

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// flaky answers the scripted errors in turn, then pending.
type flaky struct {
	errs  []error
	calls int
}

func (f *flaky) Collect(context.Context, Collection) (Status, error) {
	f.calls++
	return Status{}, &Error{Transient: true, Message: "down"}
}

func (f *flaky) CollectionStatus(context.Context, Ref) (Status, error) {
	f.calls++
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return Status{}, err
	}
	return Status{Outcome: Pending}, nil
}

func (f *flaky) CallbackReference(http.Header, []byte) (string, error) { return "", nil }

func TestObserve(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	obs := func(provider, op, outcome string, _ time.Duration) {
		mu.Lock()
		seen[provider+"/"+op+"/"+outcome]++
		mu.Unlock()
	}
	f := &flaky{errs: []error{&Error{Transient: true, Message: "503"}, &Error{Transient: true, Message: "timeout"}}}
	c := Observe(f, "pawapay", obs)
	st, err := c.CollectionStatus(context.Background(), Ref{Reference: "ref"})
	if err != nil || st.Outcome != Pending || f.calls != 3 {
		t.Fatalf("status = %+v, %v after %d calls; want pending on the third", st, err, f.calls)
	}
	f.calls = 0
	f.errs = []error{&Error{Message: "bad token"}}
	if _, err := c.CollectionStatus(context.Background(), Ref{Reference: "ref"}); err == nil || f.calls != 1 {
		t.Fatalf("a lasting error was retried (%d calls)", f.calls)
	}
	f.calls = 0
	if _, err := c.Collect(context.Background(), Collection{}); !IsTransient(err) || f.calls != 1 {
		t.Fatalf("collect was retried (%d calls)", f.calls)
	}
	want := map[string]int{"pawapay/status/transient_error": 2, "pawapay/status/pending": 1, "pawapay/status/error": 1, "pawapay/collect/transient_error": 1}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("%s observed %d times; want %d (all: %v)", k, seen[k], n, seen)
		}
	}
}

// namer answers the scripted names and errors in turn.
type namer struct {
	flaky
	answers []error
	looked  int
}

func (n *namer) AccountHolderName(_ context.Context, country, operator, phone string) (string, error) {
	n.looked++
	if len(n.answers) > 0 {
		err := n.answers[0]
		n.answers = n.answers[1:]
		if err != nil {
			return "", err
		}
	}
	return "Awa Diop", nil
}

// TestObserve_AccountHolderName: a connector that can look names up is
// asked through the observed one, retried on a transient error only, and
// its "unknown" kept; one that cannot answers ErrNoNameLookup unasked.
func TestObserve_AccountHolderName(t *testing.T) {
	seen := map[string]int{}
	obs := func(provider, op, outcome string, _ time.Duration) { seen[provider+"/"+op+"/"+outcome]++ }
	ctx := context.Background()
	if _, err := Observe(&flaky{}, "pawapay", obs).(NameLooker).AccountHolderName(ctx, "SN", "WAVE", "+221771234567"); err != ErrNoNameLookup {
		t.Fatalf("a connector without a lookup answered %v; want ErrNoNameLookup", err)
	}
	n := &namer{answers: []error{&Error{Transient: true, Message: "503"}, nil}}
	c := Observe(n, "mtnmomo", obs).(NameLooker)
	if name, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505123456"); err != nil || name != "Awa Diop" || n.looked != 2 {
		t.Fatalf("name = %q, %v after %d calls; want Awa Diop on the second", name, err, n.looked)
	}
	n.looked, n.answers = 0, []error{ErrNameUnknown}
	if _, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505123456"); err != ErrNameUnknown || n.looked != 1 {
		t.Fatalf("unknown holder = %v after %d calls; want ErrNameUnknown at once", err, n.looked)
	}
	n.looked, n.answers = 0, []error{&Error{Message: "refused"}}
	if _, err := c.AccountHolderName(ctx, "CI", "mtnivorycoast", "+2250505123456"); ErrorOf(err) == nil || n.looked != 1 {
		t.Fatalf("a lasting error = %v after %d calls; want it at once", err, n.looked)
	}
	want := map[string]int{"mtnmomo/account_holder_name/transient_error": 1, "mtnmomo/account_holder_name/succeeded": 1,
		"mtnmomo/account_holder_name/not_found": 1, "mtnmomo/account_holder_name/error": 1}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("%s observed %d times; want %d (all: %v)", k, seen[k], v, seen)
		}
	}
}
