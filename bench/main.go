// Command bench measures Cauri's main paths under load, side by side with
// their limits measured in the same run on the same machine, and prints one
// table (and adds it to docs/benchmarks.md).
//
//	go run ./bench                      # embedded SQLite
//	CAURI_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test go run ./bench   # and PostgreSQL
//	CAURI_BENCH_OUTPOST=/path/to/outpost go run ./bench   # and Hookdeck Outpost's webhook pipeline (outpost.go)
//	go run ./bench -burst 0             # without the webhook drain of 100 000 (minutes per store)
//	CAURI_BENCH_PROFILE=/tmp/prof go run ./bench -only pipeline   # and the service's CPU profile of each pipeline phase (of the status reads with -only reads)
//
// It builds the binary, starts the service with rate limits off
// (--unsafe-no-rate-limits), starts the limits as processes of their own,
// and drives the load from this process over loopback with Fortio's
// periodic runner. Nothing leaves 127.0.0.1. Last, for each store, the
// history phase (history.go) reads a workspace's paths, and drains a burst
// of its webhooks, before and after bulk-loading a million sessions
// (-history: how many; 0: none).
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"fortio.org/log"
	_ "github.com/jackc/pgx/v5/stdlib"
)

func main() {
	if len(os.Args) > 2 && strings.HasPrefix(os.Args[1], "limit-") {
		if err := runLimit(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	duration := flag.Duration("duration", 5*time.Second, "length of each phase")
	concurrency := flag.Int("concurrency", 16, "requests in flight")
	out := flag.String("out", "docs/benchmarks.md", "file the results are added to (empty: none)")
	burst := flag.Int("burst", 100_000, "the large webhook burst drained, beside one of 1 000 (0: none)")
	storeName := flag.String("store", "", `one store only between full runs: "sqlite" or "postgres" (empty: both)`)
	only := flag.String("only", "", `a check between full runs: "history" (only the store preloaded with -history sessions), "drain" (only the webhook drains), "reads" (only the status reads and their limit) or "pipeline" (only the webhook pipeline and its limit, and Outpost's)`)
	flag.Parse()
	log.SetLogLevel(log.Warning)
	if *storeName != "" && *storeName != "sqlite" && *storeName != "postgres" {
		fmt.Fprintln(os.Stderr, `bench: -store takes "sqlite" or "postgres"`)
		os.Exit(2)
	}
	if *storeName == "postgres" && os.Getenv("CAURI_BENCH_DATABASE_URL") == "" {
		fmt.Fprintln(os.Stderr, "bench: -store postgres needs CAURI_BENCH_DATABASE_URL")
		os.Exit(2)
	}
	if *only != "" && *only != "history" && *only != "drain" && *only != "reads" && *only != "pipeline" {
		fmt.Fprintln(os.Stderr, `bench: -only takes "history", "drain", "reads" or "pipeline"`)
		os.Exit(2)
	}
	if err := run(*duration, *concurrency, *burst, *out, *only, *storeName); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runLimit is this program re-run as one of the limits.
func runLimit(which string, args []string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String()) // the parent reads the address
	size, _ := strconv.Atoi(args[0])
	switch which {
	case "limit-http":
		return serveLimitHTTP(ln, size)
	case "limit-db":
		return serveLimitDB(ln, args[1], size)
	}
	return fmt.Errorf("unknown limit %s", which)
}

// row is one line of the table.
type row struct {
	Store, Path string
	result
	HalfP99 time.Duration // p99 at half the path's maximum throughput
	History *grown        // the history phase's rows (history.go); nil on the others
	Limit   string
	LimitRS float64
	Target  float64 // the ratio the issue asks for; 0 for none
	Outpost float64 // Outpost's webhook pipeline rate, on the pipeline rows; 0 when not measured
	Note    string  // printed under the table
}

func (r row) ratio() float64 {
	if r.LimitRS == 0 {
		return 0
	}
	return r.RPS / r.LimitRS
}

func run(d time.Duration, concurrency, burst int, outFile, only, storeName string) error {
	tmp, err := os.MkdirTemp("", "cauri-bench-")
	if err != nil {
		return err
	}
	if os.Getenv("CAURI_BENCH_KEEP") == "" {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Fprintln(os.Stderr, "bench: keeping", tmp)
	}
	bin := filepath.Join(tmp, "cauri")
	fmt.Fprintln(os.Stderr, "bench: building cauri")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/cauri").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	stores := []struct{ name, url, limitURL string }{
		{"sqlite", "sqlite:" + filepath.Join(tmp, "sqlite", "cauri.db"), "sqlite:" + filepath.Join(tmp, "limit", "limit.db")},
	}
	if base := os.Getenv("CAURI_BENCH_DATABASE_URL"); base != "" && storeName != "sqlite" {
		u, cleanup, err := freshSchema(base)
		if err != nil {
			return err
		}
		defer cleanup()
		stores = append(stores, struct{ name, url, limitURL string }{"postgres", u, u})
	}
	rc := newReceiver()
	defer rc.close()
	var rows []row
	var peaks []string
	for _, st := range stores {
		if storeName != "" && st.name != storeName {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: %s\n", st.name)
		// What the previous store's phases left dirty is written now, not
		// in this store's measurements.
		syncDisk()
		if only != "" {
			var r []row
			switch only {
			case "drain":
				r, err = drainsOnly(bin, tmp, rc, st.name, st.url, concurrency, burst)
			case "reads":
				r, err = readsOnly(bin, tmp, rc, st.name, st.url, d, concurrency)
			case "pipeline":
				r, err = pipelineOnly(bin, tmp, rc, st.name, st.url, st.limitURL, d, concurrency)
			default:
				r, err = history(bin, tmp, st.name, d)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			rows = append(rows, r...)
			continue
		}
		r, peak, err := benchStore(bin, tmp, rc, st.name, st.url, st.limitURL, d, concurrency, burst)
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		rows = append(rows, r...)
		peaks = append(peaks, peak)
	}
	if only == "" || only == "pipeline" {
		if rows, peaks, err = withOutpost(rows, peaks, tmp, rc, d, concurrency); err != nil {
			return fmt.Errorf("outpost: %w", err)
		}
	}
	table := formatTable(rows, peaks, d, concurrency)
	fmt.Print(table)
	if outFile != "" {
		return record(outFile, table)
	}
	return nil
}

// freshSchema makes an empty schema on the PostgreSQL server, so that each
// run starts from nothing, and returns its URL.
func freshSchema(base string) (string, func(), error) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	schema := "bench_" + randHex(6)
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		db.Close()
		return "", nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() { db.Exec("DROP SCHEMA " + schema + " CASCADE"); db.Close() }, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

const masterKey = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="

// service is the running cauri process.
type service struct {
	cmd   *exec.Cmd
	base  string
	env   []string
	bin   string
	kind  string // "sqlite" or "postgres"
	debug string // the service's profiles (CAURI_DEBUG_ADDR) when CAURI_BENCH_PROFILE is set
}

func startService(bin, tmp, dbURL string) (*service, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &service{base: "http://" + addr, bin: bin, kind: "sqlite", env: append(os.Environ(),
		"CAURI_ADDR="+addr, "CAURI_BASE_URL=http://"+addr, "CAURI_DATABASE_URL="+dbURL, "CAURI_MASTER_KEY="+masterKey,
		"CAURI_WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32")}
	if strings.HasPrefix(dbURL, "postgres") {
		s.kind = "postgres"
	}
	if os.Getenv("CAURI_BENCH_PROFILE") != "" {
		dl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.debug = dl.Addr().String()
		dl.Close()
		s.env = append(s.env, "CAURI_DEBUG_ADDR="+s.debug)
	}
	logs, err := os.Create(filepath.Join(tmp, "service.log"))
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve", "--unsafe-no-rate-limits")
	s.cmd.Env, s.cmd.Stdout, s.cmd.Stderr = s.env, logs, logs
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(s.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s, nil
			}
		}
	}
	s.cmd.Process.Kill()
	return nil, fmt.Errorf("the service did not start; see %s", logs.Name())
}

// profile records the service's CPU profile for d into
// $CAURI_BENCH_PROFILE/<kind>-<name>.prof when profiling, in the
// background; wait waits for it to be written.
func (s *service) profile(name string, d time.Duration) (wait func()) {
	if s.debug == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.debug, max(1, int(d.Seconds()))))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: profile:", err)
			return
		}
		defer res.Body.Close()
		path := filepath.Join(os.Getenv("CAURI_BENCH_PROFILE"), s.kind+"-"+name+".prof")
		f, err := os.Create(path)
		if err == nil {
			_, err = io.Copy(f, res.Body)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: profile:", err)
			return
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", path)
	}()
	return func() { <-done }
}

// workspace creates a workspace with the CLI and returns its test secret key.
func (s *service) workspace(name string) (string, error) {
	cmd := exec.Command(s.bin, "workspace", "create", "--name", name)
	cmd.Env = s.env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("workspace create: %w", err)
	}
	var ws struct{ Keys map[string]string }
	if err := json.Unmarshal(out, &ws); err != nil {
		return "", err
	}
	return ws.Keys["test_secret"], nil
}

// transferKey sets up what a transfer needs: a verified workspace with a
// live pawaPay gateway pointed at a simulator run as `cauri simulate`, and
// a daily cap no run reaches. It returns the workspace's live secret key and
// the simulator, to stop.
func (s *service) transferKey(tmp string) (string, *exec.Cmd, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	simAddr := ln.Addr().String()
	ln.Close()
	sim := exec.Command(s.bin, "simulate", "--addr", simAddr, "--token", "bench-token", "--settle-after", "0", "pawapay")
	sim.Env = s.env
	if err := sim.Start(); err != nil {
		return "", nil, err
	}
	cli := func(stdin string, args ...string) ([]byte, error) {
		cmd := exec.Command(s.bin, args...)
		cmd.Env, cmd.Stdin = s.env, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("cauri %s: %w", args[0], err)
		}
		return out, nil
	}
	var ws struct {
		ID   string
		Keys map[string]string
	}
	out, err := cli("", "workspace", "create", "--name", "bench-transfers", "--verified")
	if err == nil {
		err = json.Unmarshal(out, &ws)
	}
	if err == nil {
		_, err = cli(`{"api_token": "bench-token"}`, "gateway", "add", "--workspace", ws.ID, "--provider", "pawapay", "--name", "pawaPay",
			"--countries", "SN", "--live", "--credentials", "-", "--api-url", "http://"+simAddr)
	}
	if err == nil {
		_, err = cli("", "workspace", "set-daily-cap", ws.ID, "1000000000")
	}
	if err != nil {
		stop(sim)
		return "", nil, err
	}
	return ws.Keys["live_secret"], sim, nil
}

// routeBody is a typical routing question: a country, an amount, the
// merchant's providers and the customer's number (operator detection).
const routeBody = `{"country": "CI", "amount": 15000, "availableProviders": ["pawapay", "cinetpay", "fedapay"], "phone": "07 07 12 34 56"}`

// transferBody is a typical transfer: an amount, a recipient's number.
const transferBody = `{"amount": 5000, "country": "SN", "operator": "wave", "phone": "77 123 45 67", "recipient_name": "Awa Diop", "description": "Salaire novembre"}`

// memory is a process's resident memory now, in MB: its own (RssAnon and
// RssShmem: its heap, stacks, SQLite's page caches) and all of it (VmRSS:
// with the pages of the files it maps, its binary's and, on SQLite, the
// database's, which are the operating system's cache of the file, given
// back when the kernel needs them: docs/operations.md, "Memory").
func memory(pid int) (own, all float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		switch name {
		case "RssAnon", "RssShmem":
			own += kb / 1024
		case "VmRSS":
			all = kb / 1024
		}
	}
	return own, all
}

// watchMemory samples a process's memory every 2 ms until the function it
// returns is called (once; later calls return the same), which returns the
// peaks of its own and of all.
func watchMemory(pid int) func() (own, all float64) {
	done, peaks := make(chan struct{}), make(chan [2]float64)
	go func() {
		var top [2]float64
		sample := func() {
			own, all := memory(pid)
			top = [2]float64{max(top[0], own), max(top[1], all)}
		}
		sample()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				sample()
				peaks <- top
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return sync.OnceValues(func() (float64, float64) {
		close(done)
		top := <-peaks
		return top[0], top[1]
	})
}

// peakMemory formats a process's peaks as the table's line reads them.
func peakMemory(name string, own, all float64) string {
	return fmt.Sprintf("%s %.0f MB of its own (%.0f MB with the files it maps)", name, own, all)
}

// startLimit runs this program as a limit and returns its address.
func startLimit(which string, args ...string) (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(self, append([]string{which}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, "", fmt.Errorf("%s did not start: %w", which, err)
	}
	return cmd, "http://" + strings.TrimSpace(addr), nil
}

func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// client is the load's HTTP client: keep-alive connections, one per goroutine.
func client(concurrency int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 4 * concurrency, MaxIdleConnsPerHost: 4 * concurrency, IdleConnTimeout: time.Minute,
	}}
}

// do sends one request and reports whether the status was want.
func do(ctx context.Context, c *http.Client, method, u, key, idem, body string, want int) bool {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return false
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	res, err := c.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == want
}

// createSession returns the id of a new test session, or "".
func createSession(c *http.Client, base, key string) string {
	req, _ := http.NewRequest("POST", base+"/v1/checkout/sessions", strings.NewReader(sessionBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := c.Do(req)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	var s struct{ ID string }
	json.NewDecoder(res.Body).Decode(&s)
	return s.ID
}

// sessionBody is a typical create request: an amount, a customer, an order.
const sessionBody = `{"amount": 15000, "currency": "XOF", "description": "2 pagnes wax", "customer_name": "Awa Diop",
 "customer_email": "awa@example.com", "customer_phone": "+2250707123456", "metadata": {"order_id": "1042"},
 "success_url": "https://shop.example/merci"}`

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p/100))]
}
