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
