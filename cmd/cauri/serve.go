package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/partner"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/transfer"
	"github.com/cauri-pay/cauri/internal/web"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// keyPoll is how often the server reads the key cache's epoch unasked (0:
// the store's default); TestServe_KeyNudge lengthens it so that only a
// nudge can clear the cache.
var keyPoll time.Duration

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	// Benchmarks only: a flag, never an environment variable, so that it
	// cannot linger in a deployment's configuration.
	noLimits := fs.Bool("unsafe-no-rate-limits", false, "turn every rate limit off (benchmarks only; never in production)")
	cfg, _, err := parseFlags(fs, args, getenv, stderr)
	if err != nil {
		return err
	}
	// The CLI's nudges that keys changed, asked for before the lock that
	// tells the CLI which process to nudge.
	nudges, stopNudges := keyNudges()
	defer stopNudges()
	if kind, path, _ := config.ParseDatabaseURL(cfg.DatabaseURL); kind == config.SQLite {
		unlock, err := lockDatabase(path)
		if err != nil {
			return err
		}
		defer unlock()
	}
	var level slog.Level
	level.UnmarshalText([]byte(cfg.LogLevel))
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	if warning := cfg.AddrMismatch(); warning != "" {
		logger.Warn(warning)
	}
	var limiter ratelimit.Limiter = ratelimit.NewMemory(time.Now)
	limits := "memory"
	if *noLimits {
		logger.Warn("RATE LIMITS ARE OFF (--unsafe-no-rate-limits): for benchmarks only, never in production")
		limiter, limits = ratelimit.Unlimited{}, "off"
	}

	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()

	now := time.Now
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.RedisURL != "" && !*noLimits {
		shared, err := ratelimit.NewRedis(cfg.RedisURL, ratelimit.NewMemory(time.Now), logger)
		if err != nil {
			return fmt.Errorf("CAURI_REDIS_URL: %w", err)
		}
		defer shared.Close()
		local := prometheus.NewCounter(prometheus.CounterOpts{Name: "cauri_ratelimit_local_decisions_total",
			Help: "Rate-limit decisions taken by the node alone because Redis could not be reached."})
		reg.MustRegister(local)
		shared.Fallback = local.Inc
		limiter, limits = shared, "redis"
	}
	// The store's background work: the cache of keys, SQLite's checkpoints.
	background := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cauri_store_background_errors_total",
		Help: "Failures of the store's background work: key_cache (reading its epoch, listening for other nodes' changes; the cache is off or cleared meanwhile), checkpoint (SQLite's WAL), rollups (folding the overview's counts)."},
		[]string{"work"})
	reg.MustRegister(background)
	report := func(work string) func(error) {
		return func(err error) { background.WithLabelValues(work).Inc(); logger.Warn(work, "err", err) }
	}
	st.AwaitKeyCaches, st.NudgeKeyCaches = false, nil // this process is the server: its changes clear its cache at once
	if err := st.CacheKeys(ctx, keyPoll, report("key_cache")); err != nil {
		return fmt.Errorf("key cache: %w", err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-nudges:
				st.RecheckKeys()
			}
		}
	}()
	st.Checkpoints(ctx, report("checkpoint"))
	st.KeepRollups(ctx, rollupsEvery, report("rollups"))
	st.DeliveryAttempts = len(cfg.WebhookRetrySchedule)
	guard := delivery.NewGuard(cfg.WebhookAllowedCIDRs, nil)
	worker := &delivery.Worker{
		Store: st, Client: guard.Client(cfg.WebhookTimeout), Schedule: cfg.WebhookRetrySchedule,
		Timeout: cfg.WebhookTimeout, Now: now, Logger: logger,
	}
	router := &routing.Router{Engine: routing.New(now, uint64(time.Now().UnixNano())), Store: st, Logger: logger}
	draining := make(chan struct{}) // closed when the shutdown begins
	failures := movement.NewFailures(logger, reg)
	conns := &movement.Connectors{Store: st, Build: connectors.New, Observe: gatewayObserver(reg, router), Failures: failures}
	checkoutSvc := &checkout.Service{Store: st, PayURL: cfg.PayURL, CallbackURL: cfg.BaseURL + "/callbacks", Now: now, Committed: worker.Wake,
		Connectors: conns, Failures: failures, Platform: cfg.PlatformWorkspace, Route: router}
	transferSvc := &transfer.Service{Store: st, CallbackURL: cfg.BaseURL + "/callbacks", Now: now, Committed: worker.Wake,
		Connectors: conns, Failures: failures, Route: router}
	refundSvc := &refund.Service{Store: st, Transfers: transferSvc, Now: now, Connectors: conns, Failures: failures,
		PayURL: cfg.PayURL, CallbackURL: cfg.BaseURL + "/callbacks", Committed: worker.Wake}
	transferSvc.Ended = refundSvc.TransferEnded // a refund paid back by a transfer ends with it
	gatewaySvc := &gateways.Service{Store: st, Now: now}
	srv, err := web.New(web.Deps{
		Checkout:       checkoutSvc,
		Transfers:      transferSvc,
		Refunds:        refundSvc,
		Router:         router,
		Limiter:        limiter,
		Logger:         logger,
		PayURL:         cfg.PayURL,
		BaseURL:        cfg.BaseURL,
		Accounts:       &accounts.Service{Store: st, Now: now},
		Webhooks:       &delivery.Service{Store: st, Guard: guard, Worker: worker, Now: now},
		Gateways:       gatewaySvc,
		Reports:        &reports.Service{Store: st, Now: now},
		Health:         st,
		Partners:       &partner.Service{Store: st, Gateways: gatewaySvc, Guard: guard, Secret: cfg.PartnerSecret, Now: now},
		TrustedProxies: cfg.TrustedProxies,
		Now:            now,
		Registry:       reg,
		MetricsToken:   cfg.MetricsToken,
		Draining:       draining,
		Node:           nodeName(cfg.Addr),
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	httpSrv := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      time.Minute, // an initiation may wait on two aggregators' answers
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go housekeeping(ctx, st, logger, now, cfg.EventRetention)
	go router.Run(ctx)
	go reconcile(ctx, logger, checkoutSvc.Reconcile, transferSvc.Reconcile, refundSvc.Reconcile,
		func(ctx context.Context) (int, error) { return router.ProbeDown(ctx, checkoutSvc.Probe) })
	workerCtx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan struct{})
	go func() { worker.Run(workerCtx); close(workerDone) }()
	defer func() { stopWorker(); <-workerDone }() // attempts in flight finish first
	logger.Info("listening", "addr", ln.Addr().String(), "database", st.Kind(), "base_url", cfg.BaseURL, "pay_url", cfg.PayURL,
		"rate_limits", limits)

	if cfg.DebugAddr != "" {
		dln, err := net.Listen("tcp", cfg.DebugAddr)
		if err != nil {
			return fmt.Errorf("CAURI_DEBUG_ADDR: %w", err)
		}
		debug := &http.Server{Handler: debugHandler(), ReadHeaderTimeout: 10 * time.Second}
		defer debug.Close()
		go debug.Serve(dln)
		logger.Info("serving Go's profiles", "addr", dln.Addr().String())
	}

	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight")
	close(draining) // a batch starts nothing more and answers with what it did
	// The grace covers an aggregator call in flight (15 s) and the answer
	// after it.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// debugHandler serves Go's runtime profiles (CAURI_DEBUG_ADDR, a loopback
// address): CPU, heap, goroutines, execution traces. The command line is
// left out: it may hold a secret given as a flag.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// gatewayObserver counts and times the calls to aggregators, per provider,
// operation and outcome, in /metrics, and tells the routing engine whether
// each provider answered.
func gatewayObserver(reg *prometheus.Registry, router *routing.Router) func(provider, op, outcome string, d time.Duration) {
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cauri_gateway_calls_total", Help: "Calls to aggregators by provider, operation and outcome.",
	}, []string{"provider", "operation", "outcome"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "cauri_gateway_call_duration_seconds", Help: "Duration of calls to aggregators by provider and operation.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 15},
	}, []string{"provider", "operation"})
	reg.MustRegister(calls, latency)
	return func(provider, op, outcome string, d time.Duration) {
		calls.WithLabelValues(provider, op, outcome).Inc()
		latency.WithLabelValues(provider, op).Observe(d.Seconds())
		router.RecordCall(context.Background(), provider, outcome != "transient_error", d)
	}
}

// reconcile runs the payments', the transfers' and the refunds' reconcilers, and the
// probe of providers marked down, every 10 seconds.
// reconcileEvery is how often a node's reconcilers pass (a variable only
// so that the cluster test can make its nodes pass sooner).
var reconcileEvery = 10 * time.Second

// rollupsEvery is how often a node folds the overview's counts (a variable
// only for the crash test, which holds them back).
var rollupsEvery = store.RollupsEvery

func reconcile(ctx context.Context, logger *slog.Logger, passes ...func(context.Context) (int, error)) {
	tick := time.NewTicker(reconcileEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, pass := range passes {
			if _, err := pass(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("reconcile", "err", err)
			}
		}
	}
}

// housekeeping forgets expired idempotency keys (hourly), purges test
// data older than 90 days (daily) and the webhook log older than
// retention (daily; 0: kept). Every node asks hourly; the store lets one
// node run each job per period (ClaimJob), so several nodes never run the
// same purge at once.
func housekeeping(ctx context.Context, st *store.Store, logger *slog.Logger, now func() time.Time, retention time.Duration) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		for _, job := range []struct {
			name  string
			every time.Duration
			purge func(context.Context, time.Time) (int64, error)
			age   time.Duration
		}{
			{"expired idempotency keys", time.Hour, st.PurgeIdempotencyKeys, cauri.IdempotencyKeyTTL},
			{"test data older than 90 days", 24 * time.Hour, st.PurgeTestData, cauri.TestDataRetention},
			{"webhook log past its retention", 24 * time.Hour, st.PurgeEventLog, retention},
		} {
			if job.age == 0 {
				continue // kept for ever (CAURI_EVENT_RETENTION=0)
			}
			mine, err := st.ClaimJob(ctx, job.name, now(), job.every)
			if !mine {
				if err != nil && ctx.Err() == nil {
					logger.Warn("purge "+job.name, "err", err)
				}
				continue
			}
			n, err := job.purge(ctx, now().Add(-job.age))
			if err != nil && ctx.Err() == nil {
				logger.Warn("purge "+job.name, "err", err)
			} else if n > 0 {
				logger.Info("purged "+job.name, "rows", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// nodeName names this process among the nodes: its host and listening
// address.
func nodeName(addr string) string {
	host, _ := os.Hostname()
	return host + addr
}
