package main

// Hookdeck Outpost beside Cauri (issue 18, point 5). When CAURI_BENCH_OUTPOST
// names Outpost's `outpost` binary (with `outpost-server` beside it or on the
// PATH), the harness runs Outpost's webhook pipeline on the same receiver
// with the same workload as Cauri's, adds its row, and puts each Cauri
// pipeline's rate as a ratio to Outpost's. Whoever runs the benchmark builds
// Outpost from its own repository (docs/benchmarks.md says how); none of its
// code is here, the harness only runs the binary and speaks its HTTP API.
//
// Outpost needs a Redis, a message queue and a log store of its own:
//
//	CAURI_BENCH_OUTPOST_REDIS     redis://127.0.0.1:6379/5 (a database number the tests do not use)
//	CAURI_BENCH_OUTPOST_RABBITMQ  amqp://guest:guest@127.0.0.1:5672/
//	CAURI_BENCH_OUTPOST_POSTGRES  postgres://postgres@127.0.0.1:5432/outpost_bench?sslmode=disable
//
// The harness makes a fresh schema in that PostgreSQL database for each run
// and drops it afterwards, creates its tenants under names of its own and
// deletes them at the end, and uses an exchange and queues named
// cauri-bench-outpost* on RabbitMQ.
//
// What the harness relies on, from Outpost's repository (v1.2.0-10-gf67ae011):
// the configuration by environment variables in internal/config/config.go,
// mqconfig_rabbitmq.go and docs/content/self-hosting/configuration.mdoc;
// `outpost migrate apply --yes` before `outpost serve` (cmd/outpost/migrate.go,
// internal/app/migration.go: the server refuses to start with migrations
// pending); the routes in internal/apirouter/router.go (PUT
// /api/v1/tenants/:tenant_id, POST /api/v1/tenants/:tenant_id/destinations,
// POST /api/v1/publish, all with the API key as a bearer token); and a webhook's
// body being the published event's data as it was sent
// (internal/destregistry/providers/destwebhook/destwebhook.go, and
// docs/content/destinations/webhook.mdoc), which is how the receiver reads the
// event's timestamp.

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// outpostTopic is the topic of the events published to Outpost.
const outpostTopic = "payment.completed"

// withOutpost measures Outpost's pipeline when CAURI_BENCH_OUTPOST is set and
// returns the rows with its row added and the Cauri pipelines' rates read
// against it, and the peaks with its own.
func withOutpost(rows []row, peaks []string, tmp string, rc *receiver, d time.Duration, concurrency int) ([]row, []string, error) {
	bin := os.Getenv("CAURI_BENCH_OUTPOST")
	if bin == "" {
		fmt.Fprintln(os.Stderr, "bench: Outpost skipped (set CAURI_BENCH_OUTPOST to its binary, see docs/benchmarks.md)")
		return rows, peaks, nil
	}
	fmt.Fprintln(os.Stderr, "bench: outpost")
	r, peak, err := benchOutpost(bin, tmp, rc, d, concurrency)
	if err != nil {
		return nil, nil, err
	}
	for i := range rows {
		if rows[i].Path == pipelinePath {
			rows[i].Outpost = r.RPS
		}
	}
	return append(rows, r), append(peaks, peak), nil
}

// outpost is the running Outpost.
type outpost struct {
	cmd  *exec.Cmd
	base string
	key  string
}

// benchOutpost starts Outpost, measures its webhook pipeline like Cauri's
// (8 tenants, each with a webhook destination on the receiver) and returns
// its row and its peak resident memory in MB.
func benchOutpost(bin, tmp string, rc *receiver, d time.Duration, concurrency int) (row, string, error) {
	pg, dropSchema, err := freshSchema(cmp.Or(os.Getenv("CAURI_BENCH_OUTPOST_POSTGRES"), "postgres://postgres@127.0.0.1:5432/outpost_bench?sslmode=disable"))
	if err != nil {
		return row{}, "", fmt.Errorf("the PostgreSQL log store: %w", err)
	}
	defer dropSchema()
	op, err := startOutpost(bin, filepath.Join(tmp, "outpost"), pg)
	if err != nil {
		return row{}, "", err
	}
	peaks := watchMemory(op.cmd.Process.Pid)
	defer peaks()
	defer stop(op.cmd)
	version := "Outpost"
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		version = strings.Replace(strings.TrimSpace(string(out)), "outpost version ", "Outpost ", 1)
	}

	c := client(concurrency)
	run := randHex(4)
	var tenants []string
	for i := range workspaces {
		id := fmt.Sprintf("cauri-bench-%s-%d", run, i)
		dest := fmt.Sprintf(`{"type": "webhook", "topics": [%q], "config": {"url": %q}, "credentials": {"secret": "whsec_bench_%d"}}`,
			outpostTopic, fmt.Sprintf("%s/ws/%d", rc.url, i), i)
		if !do(context.Background(), c, "PUT", op.base+"/api/v1/tenants/"+id, op.key, "", "", 201) ||
			!do(context.Background(), c, "POST", op.base+"/api/v1/tenants/"+id+"/destinations", op.key, "", dest, 201) {
			return row{}, "", fmt.Errorf("cannot create tenant %s and its webhook destination", id)
		}
		tenants = append(tenants, id)
	}
	defer func() {
		for _, id := range tenants {
			do(context.Background(), c, "DELETE", op.base+"/api/v1/tenants/"+id, op.key, "", "", 200)
		}
	}()

	// One event per tenant first, so that the phase does not time Outpost
	// opening its connections.
	before, _ := rc.arrived()
	for i := range tenants {
		op.publish(context.Background(), c, tenants[i], rc.size())
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n, _ := rc.arrived(); n >= before+len(tenants) {
			break
		}
	}

	full := op.pipeline(c, tenants, rc, d, concurrency, 0)
	half := op.pipeline(c, tenants, rc, d, concurrency, full.RPS/2)
	full.Store, full.Path, full.HalfP99 = version, "Outpost webhook pipeline (publish -> 2xx)", half.P99
	own, all := peaks()
	return full, peakMemory("Outpost's server", own, all), nil
}

// pipeline publishes events to the tenants in turn for d, as fast as it can
// when qps is 0, and measures their webhooks as Cauri's are.
func (op *outpost) pipeline(c *http.Client, tenants []string, rc *receiver, d time.Duration, concurrency int, qps float64) row {
	size := rc.size()
	var n atomic.Int64
	return rc.measure(func(ctx context.Context) bool {
		return op.publish(ctx, c, tenants[n.Add(1)%int64(len(tenants))], size)
	}, d, concurrency, qps)
}

// publish publishes one event whose webhook body is size bytes and carries
// the time of publishing as its timestamp.
func (op *outpost) publish(ctx context.Context, c *http.Client, tenant string, size int) bool {
	head := `{"timestamp":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z07:00") + `","pad":"`
	data := head + strings.Repeat("x", max(0, size-len(head)-2)) + `"}`
	body := fmt.Sprintf(`{"tenant_id": %q, "topic": %q, "data": %s}`, tenant, outpostTopic, data)
	return do(ctx, c, "POST", op.base+"/api/v1/publish", op.key, "", body, 202)
}

// startOutpost applies Outpost's migrations and starts `outpost serve` in
// dir, which holds its log and no configuration file of its own: Outpost
// reads .env and .outpost.yaml from its working directory.
func startOutpost(bin, dir, pgURL string) (*outpost, error) {
	if _, err := exec.LookPath(filepath.Join(filepath.Dir(bin), "outpost-server")); err != nil {
		if _, err := exec.LookPath("outpost-server"); err != nil {
			return nil, fmt.Errorf("%s runs outpost-server, which is neither beside it nor on the PATH", bin)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	redis, err := url.Parse(cmp.Or(os.Getenv("CAURI_BENCH_OUTPOST_REDIS"), "redis://127.0.0.1:6379/5"))
	if err != nil {
		return nil, fmt.Errorf("CAURI_BENCH_OUTPOST_REDIS: %w", err)
	}
	redisPassword, _ := redis.User.Password()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	op := &outpost{base: fmt.Sprintf("http://127.0.0.1:%d", port), key: randHex(16)}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		fmt.Sprint("API_PORT=", port), "API_KEY=" + op.key, "API_JWT_SECRET=" + randHex(16), "AES_ENCRYPTION_SECRET=" + randHex(16),
		"REDIS_HOST=" + redis.Hostname(), "REDIS_PORT=" + cmp.Or(redis.Port(), "6379"), "REDIS_PASSWORD=" + redisPassword,
		"REDIS_DATABASE=" + cmp.Or(strings.TrimPrefix(redis.Path, "/"), "0"),
		"RABBITMQ_SERVER_URL=" + cmp.Or(os.Getenv("CAURI_BENCH_OUTPOST_RABBITMQ"), "amqp://guest:guest@127.0.0.1:5672/"),
		"RABBITMQ_EXCHANGE=cauri-bench-outpost", "RABBITMQ_DELIVERY_QUEUE=cauri-bench-outpost-delivery",
		"RABBITMQ_LOG_QUEUE=cauri-bench-outpost-log",
		"POSTGRES_URL=" + pgURL,
		"TOPICS=" + outpostTopic,
		"DISABLE_TELEMETRY=true", // nothing leaves the machine
		// The defaults are 1 each; these are the settings of Outpost's own
		// load tests (loadtest/infra/local/kubernetes/values/outpost/small.yaml).
		"DELIVERY_MAX_CONCURRENCY=100", "LOG_MAX_CONCURRENCY=100",
	}
	logs, err := os.Create(filepath.Join(dir, "outpost.log"))
	if err != nil {
		return nil, err
	}
	migrate := exec.Command(bin, "migrate", "apply", "--yes")
	migrate.Dir, migrate.Env, migrate.Stdout, migrate.Stderr = dir, env, logs, logs
	if err := migrate.Run(); err != nil {
		return nil, fmt.Errorf("outpost migrate apply: %w; see %s", err, logs.Name())
	}
	// `outpost serve` replaces itself with outpost-server: the process to
	// stop and to read the memory of keeps its id.
	op.cmd = exec.Command(bin, "serve")
	op.cmd.Dir, op.cmd.Env, op.cmd.Stdout, op.cmd.Stderr = dir, env, logs, logs
	if err := op.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(op.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return op, nil
			}
		}
	}
	stop(op.cmd)
	return nil, fmt.Errorf("the Outpost server did not start; see %s", logs.Name())
}
