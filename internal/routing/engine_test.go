package routing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newEngine() (*Engine, *clock) {
	c := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	return New(c.now, 1), c
}

var sn = Context{Country: "SN", Operator: "wave", Kind: Collect, Providers: []string{"pawapay", "cinetpay", "paystack"}}

func observe(e *Engine, p string, ok, ko int) {
	for range ok {
		e.Observe(Key{p, "SN", "wave", Collect}, Success, 100*time.Millisecond)
	}
	for range ko {
		e.Observe(Key{p, "SN", "wave", Collect}, Declined, 100*time.Millisecond)
	}
}

func TestRank_Shape(t *testing.T) {
	e, _ := newEngine()
	d := e.Rank(sn)
	if d.Provider != "pawapay" || len(d.Alternates) != 2 || !strings.HasPrefix(d.Reason, "cold_start_prior:") || d.Confidence < 0 || d.Confidence > 0.5 {
		t.Fatalf("cold start = %+v; want the first provider on the prior, low confidence", d)
	}
	for _, a := range d.Alternates {
		if a == d.Provider {
			t.Fatalf("alternates %v repeat the provider", d.Alternates)
		}
	}
	one := e.Rank(Context{Country: "SN", Operator: "wave", Kind: Collect, Providers: []string{"cinetpay", "cinetpay"}})
	if one.Provider != "cinetpay" || len(one.Alternates) != 0 || !strings.HasPrefix(one.Reason, "only_provider:") {
		t.Fatalf("one provider = %+v", one)
	}
	if none := e.Rank(Context{Country: "SN"}); none.Provider != "" || !strings.HasPrefix(none.Reason, "no_provider") {
		t.Fatalf("none = %+v", none)
	}
}

// TestRank_PriorAndEvidence: a provider with little data is neither trusted
// nor dismissed; evidence and margin raise the confidence.
func TestRank_PriorAndEvidence(t *testing.T) {
	e, _ := newEngine()
	observe(e, "pawapay", 90, 10) // 90% over 100
	observe(e, "cinetpay", 2, 0)  // 100% over 2: luck, mostly
	d := e.Rank(sn)
	// Two successes are worth a try, not trust: the prior pulls the rate
	// far below 100%, and the confidence stays low.
	if d.Ranked[0].Provider != "cinetpay" || d.Ranked[0].Rate >= 0.95 || d.Ranked[0].Rate <= 0.9 || d.Confidence > 0.3 {
		t.Fatalf("decision = %+v; want cinetpay just ahead on the prior, with little confidence", d)
	}
	thin := d.Confidence
	observe(e, "cinetpay", 30, 20) // now 64% over 52
	d = e.Rank(sn)
	if d.Provider != "pawapay" || d.Confidence <= thin || !strings.HasPrefix(d.Reason, "success_rate:") {
		t.Fatalf("after more evidence = %+v; want pawapay with more confidence than %v", d, thin)
	}
}

// TestRank_Decay: recent outcomes weigh more; with an injected clock, a
// provider that was worse hours ago and better now leads.
func TestRank_Decay(t *testing.T) {
	e, c := newEngine()
	observe(e, "pawapay", 95, 5)
	observe(e, "cinetpay", 70, 30)
	if e.Rank(sn).Provider != "pawapay" {
		t.Fatal("pawapay should lead")
	}
	c.t = c.t.Add(24 * time.Hour) // both memories fade
	observe(e, "pawapay", 60, 40)
	observe(e, "cinetpay", 95, 5)
	if d := e.Rank(sn); d.Provider != "cinetpay" {
		t.Fatalf("a day later = %+v; want the recent outcomes to decide", d)
	}
}

// TestRank_Outage: a provider failing to answer is ranked last at once
// (never chosen for a real payment while down) and comes back when it
// answers again.
func TestRank_Outage(t *testing.T) {
	e, c := newEngine()
	observe(e, "pawapay", 95, 5)
	observe(e, "cinetpay", 80, 20)
	for range e.Knobs.DownAfter {
		e.Observe(Key{"pawapay", "SN", "wave", Collect}, Technical, 15*time.Second)
	}
	d := e.Rank(sn)
	if d.Provider == "pawapay" || d.Ranked[len(d.Ranked)-1].Provider != "pawapay" || !d.Ranked[len(d.Ranked)-1].Down {
		t.Fatalf("during the outage = %+v; want pawapay last, down", d)
	}
	for range 2000 {
		if e.Choose(sn).Provider == "pawapay" {
			t.Fatal("a real payment was sent to a provider that is down")
		}
	}
	c.t = c.t.Add(10 * time.Minute)
	if !e.Down("pawapay") {
		t.Fatal("a provider stays down until it answers")
	}
	e.Call("pawapay", true) // the prober's check answered
	if d := e.Rank(sn); d.Provider != "pawapay" {
		t.Fatalf("after it answered = %+v", d)
	}
}

// TestRouter_SharedThroughTheStore: what one node records, another learns
// at its next refresh, on both stores.
func TestRouter_SharedThroughTheStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		c := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
		a := &Router{Engine: New(c.now, 1), Store: st}
		b := &Router{Engine: New(c.now, 2), Store: st}
		ctx := context.Background()
		for range 40 {
			a.Record(ctx, Key{"cinetpay", "SN", "wave", Collect}, Success, 200*time.Millisecond)
		}
		for range 20 {
			a.Record(ctx, Key{"pawapay", "SN", "wave", Collect}, Declined, 0)
			a.Record(ctx, Key{"pawapay", "SN", "wave", Collect}, Success, 0)
		}
		c.t = c.t.Add(time.Minute)
		if err := b.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if d := b.Rank(sn); d.Ranked[0].Evidence > 0 {
			t.Fatalf("node b learnt %+v before node a wrote its counts", d)
		}
		if counts, _ := st.RoutingCounts(ctx, c.t.Add(-time.Hour), c.t.Add(time.Hour), time.Minute); len(counts) != 0 {
			t.Fatalf("%d rows written on the request path; want none before a flush", len(counts))
		}
		if err := a.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if counts, _ := st.RoutingCounts(ctx, c.t.Add(-time.Hour), c.t.Add(time.Hour), time.Minute); len(counts) != 2 {
			t.Fatalf("%d rows after one flush of 80 outcomes; want 2 (one per key and minute)", len(counts))
		}
		if err := b.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		d := b.Rank(sn)
		if d.Provider != "cinetpay" || d.Ranked[0].Evidence < 39 || d.Ranked[0].LatencyMS != 200 {
			t.Fatalf("node b after refresh = %+v", d)
		}
		for range 3 {
			a.RecordCall(ctx, "cinetpay", false, 15*time.Second)
		}
		a.Flush(ctx)
		b.Refresh(ctx)
		if !b.Down("cinetpay") || b.Rank(sn).Provider == "cinetpay" {
			t.Fatal("node b did not learn that cinetpay stopped answering")
		}
		b.RecordCall(ctx, "cinetpay", true, time.Second)
		if b.Down("cinetpay") {
			t.Fatal("an answer did not bring cinetpay back")
		}
		c.t = c.t.Add(Memory + time.Hour)
		if n, err := st.PurgeRoutingOutcomes(ctx, c.t.Add(-Memory)); err != nil || n == 0 {
			t.Fatalf("purge = %d, %v", n, err)
		}
	})
}

// BenchmarkChoose is one decision among three providers with data.
func BenchmarkChoose(b *testing.B) {
	e, _ := newEngine()
	observe(e, "pawapay", 90, 10)
	observe(e, "cinetpay", 80, 20)
	observe(e, "paystack", 50, 5)
	b.ReportAllocs()
	for b.Loop() {
		e.Choose(sn)
	}
}
