package main

import (
	"context"
	"io"
	"time"

	"fortio.org/fortio/periodic"
)

// result is one measured phase.
type result struct {
	RPS           float64
	P50, P90, P99 time.Duration
	Count, Errors int64
}

// call is one request of a phase; it reports success.
type call func(ctx context.Context) bool

type runnable call

func (r runnable) Run(ctx context.Context, _ periodic.ThreadID) (bool, string) {
	if call(r)(ctx) {
		return true, "ok"
	}
	return false, "error"
}

// load runs fn from concurrency goroutines for d, as fast as it goes when
// qps is 0, else at qps in all, with Fortio's periodic runner (pacing,
// histograms and percentiles).
func load(fn call, concurrency int, d time.Duration, qps float64) result {
	if qps <= 0 {
		qps = -1 // Fortio's "max speed"
	}
	opts := periodic.RunnerOptions{
		QPS: qps, Duration: d, NumThreads: concurrency, Percentiles: []float64{50, 90, 99},
		Out: io.Discard, Uniform: true,
	}
	pr := periodic.NewPeriodicRunner(&opts)
	pr.Options().MakeRunners(runnable(fn)) // after the runner settles its thread count
	res := pr.Run()
	h := res.DurationHistogram
	r := result{RPS: res.ActualQPS, Count: h.Count}
	if res.ErrorsDurationHistogram != nil {
		r.Errors = res.ErrorsDurationHistogram.Count
	}
	for _, p := range h.Percentiles {
		v := time.Duration(p.Value * float64(time.Second))
		switch p.Percentile {
		case 50:
			r.P50 = v
		case 90:
			r.P90 = v
		case 99:
			r.P99 = v
		}
	}
	return r
}
