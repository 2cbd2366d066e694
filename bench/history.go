package main

// The cost of a history (issue 18, point 4). A measured workspace, created
// with the CLI like a merchant's, with a dashboard user signed in through
// the sign-in form, holds a merchant's share of rows: 11 000 sessions over
// 90 days (1 000 of its own share, 10 000 more for a full export), their
// attempts and events, the webhook deliveries of its last 1 000 sessions,
// 100 transfers. Its read paths are measured on a store that holds nothing
// else ("empty"), then again once the history of 999 other workspaces is
// loaded (-history sessions, about as many deliveries, a tenth as many
// transfers), then once more after ANALYZE. Each path's p50 with the
// history should stay within 1.5 times its p50 on the empty store, and the
// service's memory under 100 MB while it streams the export. In each state
// a burst of webhook deliveries to the workspace's address is drained too
// (drain.go), and its rate should stay within 1.5 times the empty store's.
//
// The rows are written by SQL from this process, straight into the running
// service's database (not through the API, which would take hours): a
// recursive CTE numbers them and every column is computed from the number,
// in the shapes the store writes (ids of cauri.IsID's shape, times in
// microseconds, the same statuses, events and deliveries). Before the
// history goes in, the measured workspace's rows are taken out and loaded
// again with it, all of them in the order of their time: the workspace's
// rows then lie among the others' pages as in a store that grew over
// months, not packed together at its start.
//
// The phase runs a service of its own on a store of its own (a new SQLite
// file, a new PostgreSQL schema), so that nothing of the other phases is in
// it.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/config"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/vault"
)

var historySize = flag.Int64("history", 1_000_000,
	"sessions of the history phase's 999 other workspaces, with about as many webhook deliveries and a tenth as many transfers (0: no history phase)")

const (
	historyWorkspaces  = 999 // beside the measured one
	historyClients     = 4   // requests in flight while a path is measured
	historyChunk       = 100_000
	historySpan        = 90 * 24 * time.Hour
	historyTarget      = 1.5 // p50 with the history over p50 on the empty store
	exportTargetMB     = 100
	measuredSessions   = 11_000
	measuredDeliveries = 1_000 // its last sessions' deliveries (and every transfer's)
	measuredTransfers  = 100
	exportRows         = 10_000
	exports            = 7     // full exports timed in each state (the median of 3 moved by 1.5x between runs)
	historyBurst       = 2_000 // deliveries drained in each state (issue 24's burst)
	benchPassword      = "correct horse battery staple of the bench"
)

// grown is a path of the history phase: its figures on the empty store
// (row.result holds them with the history loaded) and after ANALYZE.
type grown struct {
	Run      *historyRun
	Empty    result
	Analyzed result
	// BeforeMB and PeakMB are the service's resident memory before the
	// exports and its peak while it streamed them, in each state (the
	// export's row only).
	BeforeMB, PeakMB, PeakAllMB [3]float64
	// Drain is the webhook drain's burst in each state (its row only,
	// whose result and Empty hold no latencies).
	Drain *[3]drained
}

// historyRun is one store's history phase.
type historyRun struct {
	Store   string
	Loaded  string        // what the history holds
	Load    time.Duration // loading it
	Analyze time.Duration
	Note    string
	Empty   float64 // the store's size on disk in MB, before the history and with it
	Full    float64
	// Idle is the service's CPU with no request, in % of a core over
	// idleWindow: on the empty store, with the history, after ANALYZE.
	Idle [3]float64
}

// idleWindow is how long the service's CPU is read with no request.
const idleWindow = 30 * time.Second

// idleCPU is pid's CPU use over idleWindow, in % of a core
// (/proc/<pid>/stat's utime and stime, in clock ticks of 1/100 s).
func idleCPU(pid int) float64 {
	ticks := func() float64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return 0
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		k, _ := strconv.ParseFloat(f[12], 64)
		return u + k
	}
	before := ticks()
	time.Sleep(idleWindow)
	return (ticks() - before) / idleWindow.Seconds() // ticks/s of 100 a second: % of a core
}

// history runs the phase on a new store of the kind named (sqlite or
// postgres) and returns its rows.
func history(bin, tmp, kind string, d time.Duration) ([]row, error) {
	if *historySize <= 0 {
		return nil, nil
	}
	fmt.Fprintf(os.Stderr, "bench: %s: history of %d sessions\n", kind, *historySize)
	ctx := context.Background()
	dir := filepath.Join(tmp, "history-"+kind)
	dbURL := "sqlite:" + filepath.Join(dir, "cauri.db")
	if kind == "postgres" {
		u, cleanup, err := freshSchema(os.Getenv("CAURI_BENCH_DATABASE_URL"))
		if err != nil {
			return nil, err
		}
		defer cleanup()
		dbURL = u
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if os.Getenv("CAURI_BENCH_KEEP") == "" {
		// Gone with the phase (after its service stops, deferred below): a
		// SQLite history left for the end of the run is gigabytes the
		// kernel may write back while the next store is measured (the
		// PostgreSQL drain after it waited 17.7 s between two answers
		// once; 84 to 107 ms run alone).
		defer os.RemoveAll(dir)
	}
	svc, err := startService(bin, dir, dbURL)
	if err != nil {
		return nil, err
	}
	defer func() {
		if svc != nil {
			stop(svc.cmd) // the service of the moment: it is restarted after ANALYZE
		}
	}()
	// The measured workspace's webhooks go to a receiver of the phase's
	// own; the other workspaces' addresses are names that resolve nowhere,
	// and none of their deliveries comes due during the phase (strayDue).
	rc := newReceiver()
	defer rc.close()
	m, err := newMeasured(svc, rc.url+"/measured")
	if err != nil {
		return nil, err
	}
	l, err := newLoader(ctx, dbURL, time.Now())
	if err != nil {
		return nil, err
	}
	defer l.close()
	dr := &drainer{db: l.db, kind: kind, rc: rc, workspaceID: m.id, url: m.hook}
	var drains [3]drained
	mine := m.source()
	if _, err := l.chunk(ctx, []source{mine}, 0, 1); err != nil {
		return nil, fmt.Errorf("load the measured workspace: %w", err)
	}
	// Rows loaded by SQL have no counts for the overview: the command an
	// operator runs after an import recounts them.
	if _, err := m.cli("", "overview", "rebuild"); err != nil {
		return nil, err
	}
	paths := m.paths(l.now)
	run := &historyRun{Store: kind}
	if run.Empty, err = l.sizeMB(ctx, dir); err != nil {
		return nil, err
	}
	empty, err := m.measure(paths, d)
	if err != nil {
		return nil, fmt.Errorf("empty store: %w", err)
	}
	run.Idle[0] = idleCPU(svc.cmd.Process.Pid)
	if drains[0], err = m.drain(dr); err != nil {
		return nil, fmt.Errorf("empty store: %w", err)
	}

	fmt.Fprintf(os.Stderr, "bench: %s: loading the history\n", kind)
	start := time.Now()
	counts, err := l.loadHistory(ctx, mine, *historySize)
	if err != nil {
		return nil, fmt.Errorf("load the history: %w", err)
	}
	if _, err := m.cli("", "overview", "rebuild"); err != nil {
		return nil, err
	}
	run.Load = time.Since(start)
	run.Loaded = counts
	if run.Full, err = l.sizeMB(ctx, dir); err != nil {
		return nil, err
	}
	loaded, err := m.measure(paths, d)
	if err != nil {
		return nil, fmt.Errorf("with the history: %w", err)
	}
	run.Idle[1] = idleCPU(svc.cmd.Process.Pid)
	if drains[1], err = m.drain(dr); err != nil {
		return nil, fmt.Errorf("with the history: %w", err)
	}
	if l.pg {
		run.Note = l.autoAnalyzed(ctx)
	}

	start = time.Now()
	if err := l.analyze(ctx); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	run.Analyze = time.Since(start)
	// SQLite's connections read the statistics when they open: the
	// service's, opened before, would never see them.
	stop(svc.cmd)
	if err := os.MkdirAll(filepath.Join(dir, "analyzed"), 0o700); err != nil {
		return nil, err
	}
	if svc, err = startService(bin, filepath.Join(dir, "analyzed"), dbURL); err != nil {
		return nil, err
	}
	m.svc = svc
	analyzed, err := m.measure(paths, d)
	if err != nil {
		return nil, fmt.Errorf("after analyze: %w", err)
	}
	run.Idle[2] = idleCPU(svc.cmd.Process.Pid)
	if drains[2], err = m.drain(dr); err != nil {
		return nil, fmt.Errorf("after analyze: %w", err)
	}

	var rows []row
	for i, p := range paths {
		rows = append(rows, row{Store: kind, Path: "history: " + p.name, result: loaded[i].result,
			History: &grown{Run: run, Empty: empty[i].result, Analyzed: analyzed[i].result,
				BeforeMB:  [3]float64{empty[i].beforeMB, loaded[i].beforeMB, analyzed[i].beforeMB},
				PeakMB:    [3]float64{empty[i].peakMB, loaded[i].peakMB, analyzed[i].peakMB},
				PeakAllMB: [3]float64{empty[i].peakAllMB, loaded[i].peakAllMB, analyzed[i].peakAllMB}}})
	}
	w := drains[1]
	rows = append(rows, row{Store: kind, Path: fmt.Sprintf("history: webhook drain, burst of %s to its address", thousands(historyBurst)),
		result: result{RPS: w.rate, Count: int64(w.got), Errors: int64(w.want - w.got)}, History: &grown{Run: run, Drain: &drains}})
	return rows, nil
}

// drain settles one test session of the measured workspace through the
// API, as the pipeline does, and drains a burst of historyBurst copies of
// its delivery (test data: no measured path reads it) to the workspace's
// address. It fails if a delivery to another address is due before or
// after: the burst would share the worker with it.
func (m *measured) drain(dr *drainer) (drained, error) {
	dr.pid = m.svc.cmd.Process.Pid // a new process after ANALYZE
	dr.session = func() string { return createSession(m.c, m.svc.base, m.testKey) }
	dr.nudge = func(id string) bool { return id != "" && m.settle(id) }
	id := dr.session()
	if id == "" || !m.settle(id) {
		return drained{}, errors.New("drain: cannot pay a test session")
	}
	tp, err := readTemplate(dr.db, dr.kind, "d.transaction_id = ?", id)
	if err != nil {
		return drained{}, fmt.Errorf("drain: %w", err)
	}
	if err := strayDue(dr); err != nil {
		return drained{}, err
	}
	fmt.Fprintf(os.Stderr, "bench: %s: drain, burst of %s\n", dr.kind, thousands(historyBurst))
	d, err := dr.burst(historyBurst, []drainTemplate{tp})
	if err != nil {
		return d, fmt.Errorf("drain: %w", err)
	}
	return d, strayDue(dr)
}

// settle pays a test session through the sandbox, as a customer would.
func (m *measured) settle(id string) bool {
	return do(context.Background(), m.c, "POST", m.svc.base+"/checkout/sandbox", "", "",
		fmt.Sprintf(`{"transactionId": %q, "issue": "succes"}`, id), 200)
}

// strayDue fails when a delivery to another address than the receiver is
// pending and due: the history's are loaded hours away (deliveryOf), and
// the other workspaces' addresses resolve nowhere.
func strayDue(dr *drainer) error {
	var n int
	err := dr.db.QueryRow(store.Rebind(dr.kind, `SELECT COUNT(*) FROM webhook_deliveries WHERE status = ? AND next_attempt_at <= ? AND url <> ?`),
		string(cauri.DeliveryPending), time.Now().UnixMicro(), dr.url).Scan(&n)
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("drain: %d deliveries to other addresses are due: the history's came due during the phase", n)
	}
	return nil
}

// measured is the workspace whose paths are measured: its live secret key
// and its dashboard user's session.
type measured struct {
	svc       *service
	id, gw    string
	key       string
	testKey   string // for the drain's test sessions
	hook      string // its webhook address: the phase's receiver
	cookie    string // the dashboard session's cookie, as a Cookie header
	c         *http.Client
	statusIDs []string
	cli       func(stdin string, args ...string) ([]byte, error) // the service's command line
}

// newMeasured creates the workspace with the CLI (verified: its data is
// live), a live gateway its attempts and transfers name (at an address
// nothing answers: no call is made), and a dashboard user, signs the user
// in through the sign-in form, and sets its webhook address to hook with
// its live key (test events go there too).
func newMeasured(svc *service, hook string) (*measured, error) {
	cli := func(stdin string, args ...string) ([]byte, error) {
		cmd := exec.Command(svc.bin, args...)
		cmd.Env, cmd.Stdin = svc.env, strings.NewReader(stdin)
		out, err := cmd.Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("cauri %s: %w: %s", strings.Join(args, " "), err, exit.Stderr)
		}
		return out, err
	}
	var ws struct {
		ID   string
		Keys map[string]string
	}
	out, err := cli("", "workspace", "create", "--name", "Boutique Mesurée", "--verified")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &ws); err != nil {
		return nil, err
	}
	var gw struct{ ID string }
	out, err = cli(`{"api_token": "bench-token"}`, "gateway", "add", "--workspace", ws.ID, "--provider", "pawapay",
		"--name", "pawaPay", "--countries", "CI,SN", "--live", "--credentials", "-", "--api-url", "http://127.0.0.1:9")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &gw); err != nil {
		return nil, err
	}
	// Every value the bulk SQL takes as a literal has an id's shape.
	if !cauri.IsID("ws_", ws.ID) || !cauri.IsID("gw_", gw.ID) {
		return nil, fmt.Errorf("unexpected ids %q, %q", ws.ID, gw.ID)
	}
	const email = "mesure@example.com"
	if _, err := cli(benchPassword+"\n", "user", "create", "--email", email, "--workspace", ws.ID); err != nil {
		return nil, err
	}
	m := &measured{svc: svc, id: ws.ID, gw: gw.ID, key: ws.Keys["live_secret"], testKey: ws.Keys["test_secret"], hook: hook,
		c: client(historyClients), cli: cli}
	if !do(context.Background(), m.c, "PATCH", svc.base+"/v1/config/webhook", m.key, "", fmt.Sprintf(`{"webhookUrl": %q}`, hook), 200) {
		return nil, errors.New("cannot set the measured workspace's webhook address")
	}
	if m.cookie, err = signIn(svc.base, email, benchPassword); err != nil {
		return nil, err
	}
	return m, nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in through the dashboard's form (its CSRF token read from
// the page) and returns the session's cookie.
func signIn(base, email, password string) (string, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/dashboard/login")
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	token := csrfField.FindSubmatch(page)
	if token == nil {
		return "", errors.New("sign-in: no CSRF token on the page")
	}
	res, err = c.PostForm(base+"/dashboard/login", url.Values{"csrf": {string(token[1])}, "email": {email}, "password": {password}})
	if err != nil {
		return "", err
	}
	res.Body.Close()
	u, _ := url.Parse(base)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "cauri_session" {
			return ck.Name + "=" + ck.Value, nil
		}
	}
	return "", fmt.Errorf("sign-in: answered %s without a session", res.Status)
}

// source is the measured workspace's rows.
func (m *measured) source() source {
	lit := func(s string) func(string) string { return func(string) string { return "'" + s + "'" } }
	return source{tag: "m", ttag: "n", refTag: "0000000a", ws: lit(m.id), gw: lit(m.gw),
		url: lit("https://boutique.example/webhooks/cauri"), sessions: measuredSessions, deliveries: measuredDeliveries,
		transfers: measuredTransfers}
}

// historyPath is one measured path: a GET with the API key or the
// dashboard session, and what its answer must hold.
type historyPath struct {
	name     string
	path     func() string
	key      bool
	want     func(body []byte) error
	isExport bool
}

// paths are the measured paths. Status reads ask for SUCCESS sessions (a
// live session still payable is refreshed from its aggregator first).
func (m *measured) paths(now time.Time) []historyPath {
	for i := int64(0); i < measuredSessions; i += 20 {
		j := i + (i/20)%14 // status SUCCESS (sessionsOf: i % 20 < 14), over every day
		m.statusIDs = append(m.statusIDs, bulkID("cs_", "m", j))
	}
	var n atomic.Int64
	list := func(field string, least int) func([]byte) error {
		return func(b []byte) error {
			var l struct{ Count int }
			if err := json.Unmarshal(b, &l); err != nil {
				return err
			}
			if l.Count < least {
				return fmt.Errorf("%d %s; want at least %d", l.Count, field, least)
			}
			return nil
		}
	}
	contains := func(s string) func([]byte) error {
		return func(b []byte) error {
			if !strings.Contains(string(b), s) {
				return fmt.Errorf("no %q in the page", s)
			}
			return nil
		}
	}
	day := func(t time.Time) string { return t.UTC().Format("2006-01-02") }
	export := fmt.Sprintf("/v1/transactions/export?from=%s&to=%s", day(now.Add(-89*24*time.Hour)), day(now))
	return []historyPath{
		{name: "GET session status", key: true, path: func() string {
			return "/v1/checkout/sessions/" + m.statusIDs[n.Add(1)%int64(len(m.statusIDs))] + "/status"
		}, want: contains(`"status":"SUCCESS"`)},
		{name: "GET deliveries ?status=failed", key: true, path: func() string { return "/v1/webhooks/deliveries?status=failed" },
			want: list("failed deliveries", 10)},
		{name: "GET deliveries ?event=payment.failed", key: true, path: func() string { return "/v1/webhooks/deliveries?event=payment.failed" },
			want: list("deliveries of payment.failed", 50)},
		{name: "GET transfers", key: true, path: func() string { return "/v1/transfers" }, want: list("transfers", 50)},
		{name: "GET /dashboard (overview, 30 days)", path: func() string { return "/dashboard" }, want: contains("<svg")},
		{name: "GET /dashboard/transactions", path: func() string { return "/dashboard/transactions" }, want: contains("cs_")},
		{name: "search, no match", path: func() string { return "/dashboard/transactions?search=nobody-here" },
			want: contains(`id="empty"`)},
		{name: "search, a phone number as typed", path: func() string { return "/dashboard/transactions?search=07+07+00+42+42" },
			want: contains(bulkID("cs_", "m", 4242))},
		{name: "search, an e-mail's start", path: func() string { return "/dashboard/transactions?search=client4242%40" },
			want: contains(bulkID("cs_", "m", 4242))},
		{name: fmt.Sprintf("search, a word all %s customers share", spacedCount(measuredSessions)),
			path: func() string { return "/dashboard/transactions?search=client" }, want: contains("cs_")},
		{name: "GET /dashboard/webhooks (notifications)", path: func() string { return "/dashboard/webhooks" }, want: contains("<table")},
		{name: fmt.Sprintf("export of %d rows (CSV)", exportRows), path: func() string { return export }, isExport: true},
	}
}

// get sends one GET of the path with its credential.
func (m *measured) get(ctx context.Context, p historyPath) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", m.svc.base+p.path(), nil)
	if err != nil {
		return nil, err
	}
	if p.key {
		req.Header.Set("Authorization", "Bearer "+m.key)
	} else {
		req.Header.Set("Cookie", m.cookie)
	}
	return m.c.Do(req)
}

// measurement is one path measured in one state.
type measurement struct {
	result
	// The service's memory of its own before the exports, and its peak
	// during them; peakAllMB with the files it maps (memory).
	beforeMB, peakMB, peakAllMB float64
}

// measure checks each path's answer, warms it up, then measures it: the
// requests from historyClients clients for d as fast as they go; the
// export, exports times one after another, with the service's memory
// sampled meanwhile.
func (m *measured) measure(paths []historyPath, d time.Duration) ([]measurement, error) {
	ctx := context.Background()
	var out []measurement
	for _, p := range paths {
		if p.isExport {
			e, err := m.measureExport(ctx, p, m.svc.cmd.Process.Pid)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			continue
		}
		for i := range 20 {
			res, err := m.get(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				return nil, fmt.Errorf("%s: %s: %.300s", p.name, res.Status, body)
			}
			if i == 0 && p.want != nil {
				if err := p.want(body); err != nil {
					return nil, fmt.Errorf("%s: %w", p.name, err)
				}
			}
		}
		r := load(func(ctx context.Context) bool {
			res, err := m.get(ctx, p)
			if err != nil {
				return false
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res.StatusCode == 200
		}, historyClients, d, 0)
		out = append(out, measurement{result: r})
	}
	return out, nil
}

// measureExport times exports full exports, one at a time, while a
// goroutine samples the service's resident memory every 2 ms: p50 and p99
// are the median and the slowest export, peakMB the highest sample.
func (m *measured) measureExport(ctx context.Context, p historyPath, pid int) (measurement, error) {
	var took []time.Duration
	before, _ := memory(pid)
	var peak, peakAll float64
	for range exports {
		peaks := watchMemory(pid)
		start := time.Now()
		res, err := m.get(ctx, p)
		lines := 0
		if err == nil {
			lines, err = countLines(res.Body)
			res.Body.Close()
		}
		took = append(took, time.Since(start))
		own, all := peaks()
		peak, peakAll = max(peak, own), max(peakAll, all)
		if err != nil {
			return measurement{}, fmt.Errorf("export: %w", err)
		}
		if res.StatusCode != 200 || lines != exportRows+1 {
			return measurement{}, fmt.Errorf("export: %s with %d lines; want 200 with %d rows and the header", res.Status, lines, exportRows)
		}
	}
	slices.Sort(took)
	r := result{P50: took[len(took)/2], P90: took[len(took)-1], P99: took[len(took)-1], Count: int64(len(took))}
	return measurement{result: r, beforeMB: before, peakMB: peak, peakAllMB: peakAll}, nil
}

func countLines(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			n++
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return n, err
		}
	}
}

// bulkID is the id of row n of a table's rows tagged tag (one letter): the
// prefix, n scrambled (times 3^18, a bijection modulo 10^12, so that rows
// of one workspace spread over the whole of an id index as random ids do)
// as 12 letters a-j, the tag, and z up to cauri.IsID's 32 characters.
// loader.id is the same in SQL.
func bulkID(prefix, tag string, n int64) string {
	digits := fmt.Sprintf("%012d", n*idFactor%idModulo)
	return prefix + strings.Map(func(r rune) rune { return 'a' + r - '0' }, digits) + tag + strings.Repeat("z", 19)
}

const (
	idFactor = 387_420_489 // 3^18: prime to 10^12
	idModulo = 1_000_000_000_000
)

// source is one kind of workspace's rows, computed in SQL from their
// number i: the sessions (0 the oldest, spread evenly over the 90 days
// before now), the attempts of those that reached the aggregator, the
// events of those that ended, the deliveries of the last `deliveries`
// sessions' events; the transfers (spread likewise), each with its event
// and its delivery.
type source struct {
	tag, ttag   string                // the ids' tags: rows made from sessions; from transfers
	refTag      string                // 8 hex digits: the first group of its references (UUIDs)
	ws, gw, url func(i string) string // SQL of row i's workspace, gateway and webhook address
	sessions    int64
	deliveries  int64
	transfers   int64
}

// loader writes rows straight into the service's database.
type loader struct {
	db   *sql.DB
	conn *sql.Conn
	pg   bool
	now  time.Time
	us   int64 // now in microseconds
}

// newLoader opens the database as the store does (store.OpenDB: SQLite's
// WAL, busy timeout and durable commits) on one connection, whose page
// cache is made large (SQLite) and its sort memory (PostgreSQL): a bulk
// load's own settings, which the service's connections do not share.
func newLoader(ctx context.Context, dbURL string, now time.Time) (*loader, error) {
	db, kind, err := store.OpenDB(dbURL)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	l := &loader{db: db, conn: conn, pg: kind == config.Postgres, now: now.UTC(), us: now.UTC().UnixMicro()}
	set := `PRAGMA cache_size = -262144`
	if l.pg {
		set = `SET work_mem = '64MB'`
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// sizeMB is the store's size on disk: SQLite's files in dir (the
// database and its WAL), or the tables and indexes of PostgreSQL's schema.
func (l *loader) sizeMB(ctx context.Context, dir string) (float64, error) {
	if l.pg {
		var b int64
		err := l.conn.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&b)
		return float64(b) / 1e6, err
	}
	var b int64
	for _, f := range []string{"cauri.db", "cauri.db-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
			b += fi.Size()
		}
	}
	return float64(b) / 1e6, nil
}

func (l *loader) close() {
	l.conn.Close()
	l.db.Close()
}

// letters is SQL writing x (0 to 10^12 - 1) as 12 letters a-j.
func (l *loader) letters(x string) string {
	if l.pg {
		return `translate(lpad(CAST(` + x + ` AS TEXT), 12, '0'), '0123456789', 'abcdefghij')`
	}
	s := `printf('%012d', ` + x + `)`
	for d := '0'; d <= '9'; d++ {
		s = fmt.Sprintf(`replace(%s, '%c', '%c')`, s, d, 'a'+d-'0')
	}
	return s
}

// id is bulkID in SQL, of the row numbered by the SQL n.
func (l *loader) id(prefix, tag, n string) string {
	return fmt.Sprintf(`'%s' || %s || '%s%s'`, prefix, l.letters(fmt.Sprintf("((%s) * %d) %% %d", n, idFactor, idModulo)), tag, strings.Repeat("z", 19))
}

// pad is SQL writing x in decimal on width digits, zeros in front.
func (l *loader) pad(x string, width int) string {
	if l.pg {
		return fmt.Sprintf(`lpad(CAST(%s AS TEXT), %d, '0')`, x, width)
	}
	return fmt.Sprintf(`printf('%%0%dd', %s)`, width, x)
}

// iso is SQL writing the microseconds x as cauri.TimeFormat does.
func (l *loader) iso(x string) string {
	if l.pg {
		return `to_char(to_timestamp((` + x + `) / 1000000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
	}
	return `strftime('%Y-%m-%dT%H:%M:%fZ', (` + x + `) / 1000000.0, 'unixepoch')`
}

func text(x string) string { return "CAST(" + x + " AS TEXT)" }

// sessionsOf is the sessions of s numbered by the CTE cte, as s(i, t,
// status, amount): 70 % SUCCESS, 15 % FAILED, the rest CANCELLED, but
// those of the last 20 hours PENDING (younger than the day after which
// the service cancels an abandoned session).
func (l *loader) sessionsOf(s source, cte string) string {
	span := int64(historySpan / time.Microsecond)
	return fmt.Sprintf(`(SELECT i, t, amount, CASE WHEN k < 14 THEN 'SUCCESS' WHEN k < 17 THEN 'FAILED'
		WHEN k = 19 AND t > %d THEN 'PENDING' ELSE 'CANCELLED' END AS status
		FROM (SELECT i, %d + i * %d AS t, i %% 20 AS k, 1000 + (i * 37 %% 200) * 500 AS amount FROM %s) a) s`,
		l.us-int64(20*time.Hour/time.Microsecond), l.us-60_000_000-span, span/s.sessions, cte)
}

// transfersOf is the transfers of s numbered by cte, as s(i, t, status,
// amount): one in ten failed.
func (l *loader) transfersOf(s source, cte string) string {
	span := int64(historySpan / time.Microsecond)
	return fmt.Sprintf(`(SELECT i, t, amount, CASE WHEN i %% 10 = 7 THEN 'failed' ELSE 'succeeded' END AS status
		FROM (SELECT i, %d + i * %d AS t, 5000 + (i * 13 %% 100) * 250 AS amount FROM %s) a) s`,
		l.us-60_000_000-span, span/max(s.transfers, 1), cte)
}

// A table's rows from one source, numbered by a CTE.
type rowsOf func(l *loader, s source, cte string) string

var sessionColumns = `id, workspace_id, livemode, status, amount, currency, customer_name, customer_email,
	customer_phone, description, success_url, cancel_url, merchant_name, merchant_logo, metadata, provider,
	created_at, updated_at, completed_at, link_id, expires_at`

func sessionRows(l *loader, s source, cte string) string {
	return `SELECT ` + l.id("cs_", s.tag, "i") + ` AS id, ` + s.ws("i") + ` AS workspace_id, TRUE AS livemode, status, amount,
		'XOF' AS currency, 'Client ' || ` + text("i") + ` AS customer_name, 'client' || ` + text("i") + ` || '@example.com' AS customer_email,
		'+2250707' || ` + l.pad("i % 1000000", 6) + ` AS customer_phone, 'Commande ' || ` + text("i") + ` AS description,
		'https://boutique.example/merci' AS success_url, '' AS cancel_url, '' AS merchant_name, '' AS merchant_logo,
		'{"order_id":"' || ` + text("i") + ` || '"}' AS metadata,
		CASE WHEN status IN ('SUCCESS', 'FAILED') THEN 'pawapay' ELSE '' END AS provider,
		t AS created_at, CASE WHEN status = 'PENDING' THEN t ELSE t + 60000000 END AS updated_at,
		CASE WHEN status = 'PENDING' THEN CAST(NULL AS BIGINT) ELSE t + 60000000 END AS completed_at, '' AS link_id,
		t + 86400000000 AS expires_at
		FROM ` + l.sessionsOf(s, cte)
}

// searchTermRows: each session's search terms as the store writes them
// (internal/search): its customer's whole name and its two words (the
// second is the order id too), e-mail, and phone number's national
// significant number, each with the session's creation time.
func searchTermRows(l *loader, s source, cte string) string {
	var parts []string
	for _, term := range []string{`'client ' || ` + text("i"), `'client'`, text("i"), `'client' || ` + text("i") + ` || '@example.com'`,
		`'0707' || ` + l.pad("i % 1000000", 6)} {
		parts = append(parts, `SELECT `+s.ws("i")+` AS workspace_id, TRUE AS livemode, `+term+` AS term, t AS created_at,
		`+l.id("cs_", s.tag, "i")+` AS session_id FROM `+l.sessionsOf(s, cte))
	}
	return strings.Join(parts, " UNION ALL ")
}

var attemptColumns = `id, session_id, gateway_id, provider, reference, country, operator, operator_code, phone, status,
	reason, provider_ref, created_at, updated_at, checked_at, initiated_at, callback_checked_at, redirect_url, route_reason,
	needs_code, instructions`

// attemptRows: one attempt for each session that succeeded or failed.
func attemptRows(l *loader, s source, cte string) string {
	return `SELECT ` + l.id("att_", s.tag, "i") + ` AS id, ` + l.id("cs_", s.tag, "i") + ` AS session_id, ` + s.gw("i") + ` AS gateway_id,
		'pawapay' AS provider, '` + s.refTag + `-0000-4000-8000-' || ` + l.pad("i", 12) + ` AS reference, 'CI' AS country,
		CASE i % 4 WHEN 0 THEN 'orange_money' WHEN 1 THEN 'mtn_momo' WHEN 2 THEN 'moov_money' ELSE 'wave' END AS operator,
		CASE i % 4 WHEN 0 THEN 'ORANGE_CIV' WHEN 1 THEN 'MTN_MOMO_CIV' WHEN 2 THEN 'MOOV_CIV' ELSE 'WAVE_CIV' END AS operator_code,
		'+2250707' || ` + l.pad("i % 1000000", 6) + ` AS phone,
		CASE WHEN status = 'SUCCESS' THEN 'succeeded' ELSE 'failed' END AS status,
		CASE WHEN status = 'SUCCESS' THEN '' ELSE 'INSUFFICIENT_BALANCE' END AS reason,
		'` + s.refTag + `-' || ` + text("i") + ` AS provider_ref, t + 10000000 AS created_at, t + 55000000 AS updated_at,
		t + 55000000 AS checked_at, t + 11000000 AS initiated_at, CAST(NULL AS BIGINT) AS callback_checked_at, '' AS redirect_url,
		'highest success rate' AS route_reason, FALSE AS needs_code, '' AS instructions
		FROM ` + l.sessionsOf(s, cte) + ` WHERE status IN ('SUCCESS', 'FAILED')`
}

const eventColumns = `id, workspace_id, livemode, type, session_id, transfer_id, data, created_at`

const sessionEvent = `CASE status WHEN 'SUCCESS' THEN 'payment.completed' WHEN 'FAILED' THEN 'payment.failed' ELSE 'payment.cancelled' END`

// sessionEventRows: the event of each session that ended, its data the
// session's object.
func sessionEventRows(l *loader, s source, cte string) string {
	id := l.id("cs_", s.tag, "i")
	data := `'{"id":"' || ` + id + ` || '","object":"checkout.session","url":"https://pay.example/pay/' || ` + id + `
		|| '","livemode":true,"status":"' || status || '","paid":' || CASE WHEN status = 'SUCCESS' THEN 'true' ELSE 'false' END
		|| ',"amount":' || ` + text("amount") + ` || ',"currency":"XOF","order_id":"' || ` + text("i") + `
		|| '","customer_name":"Client ' || ` + text("i") + ` || '","customer_email":"client' || ` + text("i") + `
		|| '@example.com","customer_phone":"+2250707' || ` + l.pad("i % 1000000", 6) + ` || '","description":"Commande ' || ` + text("i") + `
		|| '","success_url":"https://boutique.example/merci","cancel_url":null,"merchant_name":null,"merchant_logo":null,"metadata":{"order_id":"'
		|| ` + text("i") + ` || '"},"provider":"pawapay","created_at":"' || ` + l.iso("t") + ` || '","updated_at":"' || ` + l.iso("t + 60000000") + `
		|| '","completed_at":"' || ` + l.iso("t + 60000000") + ` || '"}'`
	return `SELECT ` + l.id("evt_", s.tag, "i") + ` AS id, ` + s.ws("i") + ` AS workspace_id, TRUE AS livemode, ` + sessionEvent + ` AS type,
		` + id + ` AS session_id, CAST(NULL AS TEXT) AS transfer_id, ` + data + ` AS data, t + 60000000 AS created_at
		FROM ` + l.sessionsOf(s, cte) + ` WHERE status <> 'PENDING'`
}

var deliveryColumns = `id, workspace_id, event_id, event, livemode, url, status, attempts, auto_attempts, max_attempts,
	next_attempt_at, locked_until, lease_token, last_status_code, last_error, response_ms, transaction_id, transfer_id,
	created_at, delivered_at`

// deliveryOf is the columns of a delivery whose state is in d.dstatus: one
// in 23 failed after its ten attempts; one in a hundred of the last day's
// still pending, its next attempt hours away; the others delivered, most
// at the first attempt.
func (l *loader) deliveryOf(s source, tag, event, transaction, transfer string) string {
	return l.id("whd_", tag, "i") + ` AS id, ` + s.ws("i") + ` AS workspace_id, ` + l.id("evt_", tag, "i") + ` AS event_id,
		` + event + ` AS event, TRUE AS livemode, ` + s.url("i") + ` AS url, dstatus AS status,
		CASE dstatus WHEN 'failed' THEN 10 WHEN 'pending' THEN 3 ELSE 1 + CASE WHEN i % 7 = 0 THEN 1 ELSE 0 END END AS attempts,
		CASE dstatus WHEN 'failed' THEN 10 WHEN 'pending' THEN 3 ELSE 1 + CASE WHEN i % 7 = 0 THEN 1 ELSE 0 END END AS auto_attempts,
		10 AS max_attempts, CASE WHEN dstatus = 'pending' THEN ` + strconv.FormatInt(l.us+int64(6*time.Hour/time.Microsecond), 10) + `
		ELSE CAST(NULL AS BIGINT) END AS next_attempt_at, CAST(NULL AS BIGINT) AS locked_until, CAST(NULL AS TEXT) AS lease_token,
		CASE dstatus WHEN 'delivered' THEN 200 WHEN 'pending' THEN 503 ELSE 500 END AS last_status_code,
		CASE dstatus WHEN 'delivered' THEN CAST(NULL AS TEXT) ELSE 'HTTP 5xx: not an acknowledgement' END AS last_error,
		20 + i % 300 AS response_ms, ` + transaction + ` AS transaction_id, ` + transfer + ` AS transfer_id, created_at,
		CASE WHEN dstatus = 'delivered' THEN created_at + 1000000 ELSE CAST(NULL AS BIGINT) END AS delivered_at`
}

func (l *loader) dstatus(created string) string {
	return `CASE WHEN i % 23 = 3 THEN 'failed' WHEN i % 100 = 50 AND ` + created + ` > ` +
		strconv.FormatInt(l.us-int64(24*time.Hour/time.Microsecond), 10) + ` THEN 'pending' ELSE 'delivered' END`
}

// sessionDeliveryRows: the deliveries of the last s.deliveries sessions'
// events.
func sessionDeliveryRows(l *loader, s source, cte string) string {
	return `SELECT ` + l.deliveryOf(s, s.tag, sessionEvent, l.id("cs_", s.tag, "i"), "CAST(NULL AS TEXT)") + `
		FROM (SELECT i, status, t + 60000000 AS created_at, ` + l.dstatus("t") + ` AS dstatus FROM ` + l.sessionsOf(s, cte) + `
		WHERE status <> 'PENDING' AND i >= ` + strconv.FormatInt(s.sessions-s.deliveries, 10) + `) d`
}

var transferColumns = `id, workspace_id, livemode, reference, status, amount, currency, country, operator, provider_operator,
	phone, recipient_name, description, gateway_id, provider, provider_ref, failure_code, failure_message,
	created_at, updated_at, completed_at, initiated_at, checked_at, callback_checked_at`

func transferRows(l *loader, s source, cte string) string {
	return `SELECT ` + l.id("tr_", s.ttag, "i") + ` AS id, ` + s.ws("i") + ` AS workspace_id, TRUE AS livemode,
		'` + s.refTag + `-0000-4000-9000-' || ` + l.pad("i", 12) + ` AS reference, status, amount, 'XOF' AS currency, 'SN' AS country,
		'wave' AS operator, 'WAVE_SEN' AS provider_operator, '+22177' || ` + l.pad("i % 10000000", 7) + ` AS phone,
		'Bénéficiaire ' || ` + text("i") + ` AS recipient_name, 'Salaire' AS description, ` + s.gw("i") + ` AS gateway_id,
		'pawapay' AS provider, 'po-` + s.refTag + `-' || ` + text("i") + ` AS provider_ref,
		CASE WHEN status = 'failed' THEN 'rejected' ELSE '' END AS failure_code,
		CASE WHEN status = 'failed' THEN 'The aggregator refused the transfer' ELSE '' END AS failure_message,
		t AS created_at, t + 30000000 AS updated_at, t + 30000000 AS completed_at, t + 2000000 AS initiated_at,
		t + 30000000 AS checked_at, CAST(NULL AS BIGINT) AS callback_checked_at
		FROM ` + l.transfersOf(s, cte)
}

const transferEvent = `CASE status WHEN 'succeeded' THEN 'transfer.succeeded' ELSE 'transfer.failed' END`

func transferEventRows(l *loader, s source, cte string) string {
	id := l.id("tr_", s.ttag, "i")
	data := `'{"id":"' || ` + id + ` || '","object":"transfer","livemode":true,"status":"' || status || '","amount":' || ` + text("amount") + `
		|| ',"currency":"XOF","country":"SN","operator":"wave","phone":"+22177' || ` + l.pad("i % 10000000", 7) + `
		|| '","recipient_name":"Bénéficiaire ' || ` + text("i") + ` || '","description":"Salaire","created_at":"' || ` + l.iso("t") + `
		|| '","completed_at":"' || ` + l.iso("t + 30000000") + ` || '"}'`
	return `SELECT ` + l.id("evt_", s.ttag, "i") + ` AS id, ` + s.ws("i") + ` AS workspace_id, TRUE AS livemode, ` + transferEvent + ` AS type,
		CAST(NULL AS TEXT) AS session_id, ` + id + ` AS transfer_id, ` + data + ` AS data, t + 30000000 AS created_at
		FROM ` + l.transfersOf(s, cte)
}

func transferDeliveryRows(l *loader, s source, cte string) string {
	return `SELECT ` + l.deliveryOf(s, s.ttag, transferEvent, "CAST(NULL AS TEXT)", l.id("tr_", s.ttag, "i")) + `
		FROM (SELECT i, status, t + 30000000 AS created_at, ` + l.dstatus("t") + ` AS dstatus FROM ` + l.transfersOf(s, cte) + `) d`
}

// tables are the tables loaded, in the order their references need; each
// numbers its rows by sessions or by transfers.
var tables = []struct {
	name, columns string
	rows          rowsOf
	transfers     bool
}{
	{"checkout_sessions", sessionColumns, sessionRows, false},
	{"search_terms", "workspace_id, livemode, term, created_at, session_id", searchTermRows, false},
	{"payment_attempts", attemptColumns, attemptRows, false},
	{"events", eventColumns, sessionEventRows, false},
	{"webhook_deliveries", deliveryColumns, sessionDeliveryRows, false},
	{"transfers", transferColumns, transferRows, true},
	{"events", eventColumns, transferEventRows, true},
	{"webhook_deliveries", deliveryColumns, transferDeliveryRows, true},
}

// chunk loads part k of n of every source's rows, in one transaction:
// each table's rows of all the sources in one statement, in the order of
// their time. It returns how many rows each table got.
func (l *loader) chunk(ctx context.Context, srcs []source, k, n int64) (map[string]int64, error) {
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	counts := map[string]int64{}
	for _, t := range tables {
		var ctes, sels []string
		for j, s := range srcs {
			size := s.sessions
			if t.transfers {
				size = s.transfers
			}
			lo, hi := size*k/n, size*(k+1)/n
			if lo >= hi {
				continue
			}
			cte := fmt.Sprintf("n%d", j)
			ctes = append(ctes, fmt.Sprintf(`%s(i) AS (SELECT CAST(%d AS BIGINT) UNION ALL SELECT i + 1 FROM %s WHERE i + 1 < %d)`, cte, lo, cte, hi))
			sels = append(sels, t.rows(l, s, cte))
		}
		if len(sels) == 0 {
			continue
		}
		order := ` ORDER BY created_at`
		if !strings.Contains(t.columns, "created_at") {
			order = ""
		}
		q := `WITH RECURSIVE ` + strings.Join(ctes, ", ") + ` INSERT INTO ` + t.name + ` (` + t.columns + `)
			SELECT * FROM (` + strings.Join(sels, " UNION ALL ") + `) u` + order
		res, err := tx.ExecContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		c, _ := res.RowsAffected()
		counts[t.name] += c
	}
	return counts, tx.Commit()
}

// loadHistory takes the measured workspace's rows out, adds the other
// workspaces (with their keys and gateways, as the CLI makes them), and
// loads everyone's rows in chunks of about historyChunk sessions, each
// chunk the next stretch of time. It returns what was loaded.
func (l *loader) loadHistory(ctx context.Context, mine source, size int64) (string, error) {
	ws := mine.ws("")
	for _, q := range []string{
		`DELETE FROM webhook_deliveries WHERE workspace_id = ` + ws,
		`DELETE FROM events WHERE workspace_id = ` + ws,
		`DELETE FROM refunds WHERE workspace_id = ` + ws,
		`DELETE FROM payment_attempts WHERE session_id IN (SELECT id FROM checkout_sessions WHERE workspace_id = ` + ws + `)`,
		`DELETE FROM search_terms WHERE workspace_id = ` + ws,
		`DELETE FROM checkout_sessions WHERE workspace_id = ` + ws,
		`DELETE FROM transfers WHERE workspace_id = ` + ws,
	} {
		if _, err := l.conn.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	if l.pg {
		// Without it the workspace's reads would step over its deleted
		// rows too (until autovacuum, if it runs, removes them). VACUUM
		// leaves no statistics behind, as ANALYZE would.
		if _, err := l.conn.ExecContext(ctx, `VACUUM checkout_sessions, payment_attempts, events, webhook_deliveries, transfers`); err != nil {
			return "", err
		}
	}
	if err := l.workspaces(ctx); err != nil {
		return "", err
	}
	byWorkspace := func(prefix string) func(string) string {
		return func(i string) string { return l.id(prefix, "h", i+" % "+strconv.Itoa(historyWorkspaces)) }
	}
	others := source{tag: "h", ttag: "g", refTag: "0000000b", ws: byWorkspace("ws_"), gw: byWorkspace("gw_"),
		url: func(i string) string {
			return `'https://boutique' || ` + text(i+" % "+strconv.Itoa(historyWorkspaces)) + ` || '.example/webhooks/cauri'`
		}, sessions: size, deliveries: size, transfers: size / 10}
	n := max(1, (size+historyChunk-1)/historyChunk)
	total := map[string]int64{}
	start := time.Now()
	for k := range n {
		counts, err := l.chunk(ctx, []source{mine, others}, k, n)
		if err != nil {
			return "", err
		}
		for t, c := range counts {
			total[t] += c
		}
		fmt.Fprintf(os.Stderr, "bench: loaded %d/%d (%.0f s)\n", k+1, n, time.Since(start).Seconds())
	}
	if !l.pg {
		// The service checkpoints in the background too; this leaves the
		// WAL empty, as a store that grew slowly would have it.
		l.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	return fmt.Sprintf("%s sessions, %s attempts, %s events, %s deliveries, %s transfers in %d workspaces",
		spacedCount(total["checkout_sessions"]), spacedCount(total["payment_attempts"]), spacedCount(total["events"]),
		spacedCount(total["webhook_deliveries"]), spacedCount(total["transfers"]), historyWorkspaces+1), nil
}

// workspaces adds the history's workspaces as the CLI creates them
// (verified, with their four keys sealed under the master key and their
// webhook address), each with a live pawaPay gateway, in one transaction.
func (l *loader) workspaces(ctx context.Context) error {
	key, err := vault.ParseKey(masterKey)
	if err != nil {
		return err
	}
	v, err := vault.New(key)
	if err != nil {
		return err
	}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ph := func(n int) string {
		p := make([]string, n)
		for i := range p {
			p[i] = "?"
			if l.pg {
				p[i] = "$" + strconv.Itoa(i+1)
			}
		}
		return strings.Join(p, ", ")
	}
	routes, _ := json.Marshal([]cauri.GatewayRoute{{Country: "CI", Operator: "orange_money", Code: "ORANGE_CIV", Enabled: true},
		{Country: "CI", Operator: "mtn_momo", Code: "MTN_MOMO_CIV", Enabled: true}, {Country: "CI", Operator: "moov_money", Code: "MOOV_CIV", Enabled: true},
		{Country: "CI", Operator: "wave", Code: "WAVE_CIV", Enabled: true}, {Country: "SN", Operator: "wave", Code: "WAVE_SEN", Enabled: true}})
	hints, _ := json.Marshal(map[string]string{"api_token": cauri.Hint("bench-token")})
	created := l.now.Add(-historySpan - 24*time.Hour)
	for w := range int64(historyWorkspaces) {
		id, gw := bulkID("ws_", "h", w), bulkID("gw_", "h", w)
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, verified, connect, default_currency, created_at, webhook_url)
			VALUES (`+ph(7)+`)`, id, fmt.Sprintf("Boutique %d", w), true, false, "XOF", created.UnixMicro(),
			fmt.Sprintf("https://boutique%d.example/webhooks/cauri", w)); err != nil {
			return err
		}
		keys, _ := cauri.KeySet(id, created)
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, workspace_id, kind, live, hash, sealed, last4, created_at)
				VALUES (`+ph(8)+`)`, k.ID, id, string(k.Kind), k.Live, vault.HashKey(k.Plaintext), v.Seal(k.Plaintext, k.ID), k.Last4,
				created.UnixMicro()); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO gateways (id, workspace_id, provider, name, live, base_url, collect, payout, enabled,
			routes, credentials, credential_hints, created_at) VALUES (`+ph(13)+`)`, gw, id, "pawapay", "pawaPay", true, "", true, true, true,
			string(routes), v.Seal(`{"api_token":"bench-token"}`, gw), string(hints), created.UnixMicro()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// analyze does what the store's own upkeep does after a bulk load: on
// PostgreSQL, autovacuum's VACUUM (ANALYZE) of the loaded tables (their
// statistics, and the visibility map an index-only scan needs; this
// harness's server may run with autovacuum off, docs/benchmarks.md), naming
// them, not the whole shared database; on SQLite, ANALYZE as PRAGMA
// optimize would, from a sample of each index.
func (l *loader) analyze(ctx context.Context) error {
	q := `VACUUM (ANALYZE) workspaces, api_keys, gateways, checkout_sessions, payment_attempts, events, webhook_deliveries, transfers, search_terms`
	if !l.pg {
		if _, err := l.conn.ExecContext(ctx, `PRAGMA analysis_limit = 1000`); err != nil {
			return err
		}
		q = `ANALYZE`
	}
	_, err := l.conn.ExecContext(ctx, q)
	return err
}

// autoAnalyzed says which of the loaded tables PostgreSQL's autovacuum had
// analyzed (or vacuumed) on its own by now.
func (l *loader) autoAnalyzed(ctx context.Context) string {
	rows, err := l.conn.QueryContext(ctx, `SELECT relname, last_autoanalyze IS NOT NULL, last_autovacuum IS NOT NULL FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname IN ('checkout_sessions', 'payment_attempts', 'events', 'webhook_deliveries', 'transfers')
		ORDER BY relname`)
	if err != nil {
		return "autovacuum: " + err.Error()
	}
	defer rows.Close()
	var analyzed, vacuumed []string
	for rows.Next() {
		var name string
		var a, v bool
		if rows.Scan(&name, &a, &v) == nil {
			if a {
				analyzed = append(analyzed, name)
			}
			if v {
				vacuumed = append(vacuumed, name)
			}
		}
	}
	none := func(l []string) string {
		if len(l) == 0 {
			return "none"
		}
		return strings.Join(l, ", ")
	}
	var on string
	l.conn.QueryRowContext(ctx, `SELECT current_setting('autovacuum')`).Scan(&on)
	return fmt.Sprintf("autovacuum is %s on this server; when the measurement with the history ended, it had analyzed %s and vacuumed %s",
		on, none(analyzed), none(vacuumed))
}

// spacedCount writes n with a space between groups of three digits.
func spacedCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

// historyTable is the history phase's table: each path's p50 on the empty
// store, with the history and after ANALYZE, read as ratios to the first.
func historyTable(rows []row) string {
	var b strings.Builder
	var runs []*historyRun
	for _, r := range rows {
		if r.History != nil && !slices.Contains(runs, r.History.Run) {
			runs = append(runs, r.History.Run)
		}
	}
	if len(runs) == 0 {
		return ""
	}
	fmt.Fprintf(&b, "Cost as data grows: the measured workspace's paths (%d clients, p50 and p99) with its own %s sessions alone in the store, "+
		"then with the history of %d other workspaces loaded, then after ANALYZE (PostgreSQL: VACUUM (ANALYZE), as autovacuum would) and a restart of the service. "+
		"The export is %d full exports one after another (p50: the median, p99: the slowest) while the service's memory is sampled. "+
		"The webhook drain is a burst of %s deliveries to the workspace's address in each state, after the idle reading: its columns are "+
		"deliveries per second from the commit to the last 2xx and the service's CPU per delivery, and its ratio is the empty store's rate "+
		"over the state's (≤ 1.5: at least two thirds of the empty store's rate).\n\n",
		historyClients, spacedCount(measuredSessions), historyWorkspaces, exports, thousands(historyBurst))
	for _, run := range runs {
		fmt.Fprintf(&b, "- %s: %s loaded (and the overview recounted) in %.0f s; ANALYZE %.1f s; size on disk %.0f MB -> %.0f MB",
			run.Store, run.Loaded, run.Load.Seconds(), run.Analyze.Seconds(), run.Empty, run.Full)
		fmt.Fprintf(&b, "; the service's CPU with no request over %.0f s: %.2f %% / %.2f %% / %.2f %% of a core (empty / history / after ANALYZE; target < 1 %%): %s",
			idleWindow.Seconds(), run.Idle[0], run.Idle[1], run.Idle[2], mark(slices.Max(run.Idle[:]) < 1))
		if run.Note != "" {
			fmt.Fprintf(&b, "; %s", run.Note)
		}
		b.WriteString(".\n")
	}
	fmt.Fprintln(&b, "\n| store | path | empty p50 / p99 | with history p50 / p99 | ratio to empty (target ≤ 1.5) | after ANALYZE p50 / p99 | ratio | the service's own memory during export (< 100 MB) |")
	fmt.Fprintln(&b, "|---|---|---:|---:|---|---:|---:|---|")
	var notes []string
	for _, r := range rows {
		h := r.History
		if h == nil {
			continue
		}
		path := strings.TrimPrefix(r.Path, "history: ")
		if d := h.Drain; d != nil {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f: %s | %s | %.2f | |\n", r.Store, path, d[0].cell(), d[1].cell(),
				d[0].slowdown(d[1]), mark(d[0].slowdown(d[1]) <= historyTarget), d[2].cell(), d[0].slowdown(d[2]))
			note := fmt.Sprintf("- %s, %s: first 2xx %s / %s / %s after the commit, longest wait between two 2xx %s / %s / %s (empty / history / after ANALYZE)",
				r.Store, path, ms(d[0].first), ms(d[1].first), ms(d[2].first), ms(d[0].gap), ms(d[1].gap), ms(d[2].gap))
			for i, x := range d {
				if !x.nudged {
					note += fmt.Sprintf("; %s: the nudge failed (the worker found the rows at its poll)", []string{"empty", "history", "after ANALYZE"}[i])
				}
			}
			notes = append(notes, note+".")
			continue
		}
		ratio := func(x result) float64 { return float64(x.P50) / float64(max(h.Empty.P50, 1)) }
		mem := ""
		if h.PeakMB[0] > 0 {
			top := slices.Max(h.PeakMB[:])
			mem = fmt.Sprintf("%.0f / %.0f / %.0f MB (%.0f / %.0f / %.0f before; %.0f / %.0f / %.0f with the files it maps): %s", h.PeakMB[0], h.PeakMB[1], h.PeakMB[2],
				h.BeforeMB[0], h.BeforeMB[1], h.BeforeMB[2], h.PeakAllMB[0], h.PeakAllMB[1], h.PeakAllMB[2], mark(top < exportTargetMB))
		}
		fmt.Fprintf(&b, "| %s | %s | %s / %s | %s / %s | %.2f: %s | %s / %s | %.2f | %s |\n", r.Store, path,
			ms(h.Empty.P50), ms(h.Empty.P99), ms(r.P50), ms(r.P99), ratio(r.result), mark(ratio(r.result) <= historyTarget),
			ms(h.Analyzed.P50), ms(h.Analyzed.P99), ratio(h.Analyzed), mem)
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\n%s\n", strings.Join(notes, "\n"))
	}
	b.WriteString("\n")
	return b.String()
}

// cell is a drain's figures in the history's table: its rate, its CPU per
// delivery, and the deliveries that never came.
func (d drained) cell() string {
	s := fmt.Sprintf("%.0f/s, %.2f ms CPU each", d.rate, float64(d.cpu.Microseconds())/1000)
	if d.got < d.want {
		s += fmt.Sprintf(", %d of %d missing", d.want-d.got, d.want)
	}
	return s
}

// slowdown is how many times slower than d the drain x ran: d's rate over
// x's.
func (d drained) slowdown(x drained) float64 {
	if x.rate == 0 {
		return math.Inf(1)
	}
	return d.rate / x.rate
}
