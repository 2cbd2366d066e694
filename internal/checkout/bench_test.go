package checkout

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// BenchmarkSettleSandbox settles test sessions through the service, on
// each store, with a webhook address set so that each settlement writes
// its event and its delivery: the state change of the bench harness's
// webhook pipeline, in-process, for profiling (the harness measures it
// over the network against its limit).
func BenchmarkSettleSandbox(b *testing.B) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(c.name, func(b *testing.B) {
			st := c.open(b)
			ctx := context.Background()
			ws := storetest.Workspace(b, st, "Bench", true, time.Now())
			if _, err := st.UpdateWebhookConfig(ctx, ws.ID, func(c *cauri.WebhookConfig) error {
				c.TestURL = "http://127.0.0.1:1/hooks"
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			s := &Service{Store: st, PayURL: "http://127.0.0.1:1/pay", Now: time.Now}
			ids := make(chan string, b.N)
			for range b.N {
				sess, _, err := s.Create(ctx, ws, false, CreateParams{Amount: "15000", CustomerEmail: "a@example.com"})
				if err != nil {
					b.Fatal(err)
				}
				ids <- sess.ID
			}
			close(ids)
			b.ReportAllocs()
			cpu := cpuTime()
			b.ResetTimer()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.SettleSandbox(ctx, <-ids, IssueSuccess); err != nil {
						b.Error(err)
					}
				}
			})
			// CPU time per settlement, which a shared machine disturbs less
			// than the elapsed time.
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
