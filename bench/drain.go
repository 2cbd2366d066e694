package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// The drains time how fast the webhook worker empties a backlog (issue 18:
// one fast receiver takes at least 1 000 deliveries a second, and a burst
// of 100 000 drains at the rate of one of 1 000). A burst is written
// straight into the service's store while it runs, the rows the service
// itself writes for a state change (an event and its pending delivery),
// then timed from their commit until the receiver has answered them all.

// oneEndpointBurst is the burst sent to a single workspace's address.
const oneEndpointBurst = 10_000

// drainTemplate is what a workspace's deliveries repeat: read from a
// delivery the service wrote in the pipeline phase, with its event.
type drainTemplate struct {
	workspaceID, event, url, transactionID, sessionID, data string
	livemode                                                bool
	maxAttempts                                             int
}

// drainer writes bursts into the service's store and times their delivery.
type drainer struct {
	db   *sql.DB
	kind string
	pid  int // the service's, for its CPU time
	rc   *receiver
	// workspaceID and url, when set, are the only deliveries a burst
	// waits for: those of one workspace to the receiver (a history store
	// holds other pending deliveries, hours away). Empty: every delivery
	// pending and due, as on a store that holds only the bench's own.
	workspaceID, url string
	// session makes a test session beforehand, and nudge settles it
	// through the API right after a burst's commit: the settlement's
	// commit wakes the worker as the service's own commits do, where rows
	// written behind its back wait for its next poll (up to a second).
	session func() string
	nudge   func(session string) bool
}

// drained is one burst's measure.
type drained struct {
	want, got int           // deliveries expected (the nudge's too) and received
	rate      float64       // deliveries per second, from the commit to the last 2xx
	first     time.Duration // from the commit to the first 2xx
	gap       time.Duration // the longest wait between two 2xx
	cpu       time.Duration // the service's CPU time per delivery, until all are recorded
	nudged    bool
}

// drains measures a burst of 1 000 and one of big (none when 0) spread
// over the workspaces' endpoints, and one of oneEndpointBurst to a single
// endpoint, and returns their rows.
func drains(c *http.Client, svc *service, dbURL string, keys []string, rc *receiver, storeName string, big int) ([]row, error) {
	db, kind, err := store.OpenDB(dbURL) // the service's own settings: WAL, busy_timeout, foreign keys
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var tpls []drainTemplate
	for i := range keys {
		tp, err := readTemplate(db, kind, "d.url = ?", fmt.Sprintf("%s/ws/%d", rc.url, i))
		if err != nil {
			return nil, fmt.Errorf("drain: workspace %d: %w", i, err)
		}
		tpls = append(tpls, tp)
	}
	dr := &drainer{db: db, kind: kind, pid: svc.cmd.Process.Pid, rc: rc}
	dr.session = func() string { return createSession(c, svc.base, keys[0]) }
	dr.nudge = func(id string) bool {
		return id != "" && do(context.Background(), c, "POST", svc.base+"/checkout/sandbox", "", "",
			fmt.Sprintf(`{"transactionId": %q, "issue": "succes"}`, id), 200)
	}
	measure := func(n int, tpls []drainTemplate, label string) (drained, error) {
		fmt.Fprintf(os.Stderr, "bench: %s: drain, %s\n", storeName, label)
		m, err := dr.burst(n, tpls)
		if err != nil {
			return m, fmt.Errorf("drain, %s: %w", label, err)
		}
		return m, nil
	}
	small, err := measure(1000, tpls, "burst of 1 000")
	if err != nil {
		return nil, err
	}
	rows := []row{small.row(storeName, "burst of 1 000")}
	if big > 0 {
		label := "burst of " + thousands(big)
		m, err := measure(big, tpls, label)
		if err != nil {
			return nil, err
		}
		r := m.row(storeName, label)
		r.Limit, r.LimitRS, r.Target = "the burst of 1 000 (same rate)", small.rate, 0.9
		if small.cpu > 0 {
			r.Note += fmt.Sprintf("; CPU per delivery %.2f times the burst of 1 000's", float64(m.cpu)/float64(small.cpu))
		}
		rows = append(rows, r)
	}
	label := "one endpoint, burst of " + thousands(oneEndpointBurst)
	one, err := measure(oneEndpointBurst, tpls[:1], label)
	if err != nil {
		return nil, err
	}
	r := one.row(storeName, label)
	r.Limit, r.LimitRS, r.Target = "issue 18: 1 000/s", 1000, 1
	return append(rows, r), nil
}

func (m drained) row(storeName, label string) row {
	r := row{Store: storeName, Path: fmt.Sprintf("webhook drain, %s (%.2f ms CPU each)", label, float64(m.cpu.Microseconds())/1000)}
	r.RPS, r.Count, r.Errors = m.rate, int64(m.got), int64(m.want-m.got)
	r.Note = fmt.Sprintf("first 2xx %s after the commit, longest wait between two 2xx %s", ms(m.first), ms(m.gap))
	if !m.nudged {
		r.Note += " (the nudge failed: the worker found the rows at its poll)"
	}
	return r
}

// readTemplate reads the newest delivery of a session's event that meets
// cond (on the delivery d, with one argument), and its event.
func readTemplate(db *sql.DB, kind, cond string, arg any) (drainTemplate, error) {
	var tp drainTemplate
	err := db.QueryRow(store.Rebind(kind, `SELECT d.workspace_id, d.livemode, d.event, d.url, d.max_attempts, COALESCE(d.transaction_id, ''),
		COALESCE(e.session_id, ''), e.data FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
		WHERE `+cond+` AND e.transfer_id IS NULL ORDER BY d.created_at DESC LIMIT 1`), arg).
		Scan(&tp.workspaceID, &tp.livemode, &tp.event, &tp.url, &tp.maxAttempts, &tp.transactionID, &tp.sessionID, &tp.data)
	if err != nil {
		return tp, fmt.Errorf("no delivery to copy: %w", err)
	}
	return tp, nil
}

// burst loads n deliveries round the templates' endpoints, makes them due
// in one commit, and waits until the receiver has them all and the
// service has recorded them.
func (dr *drainer) burst(n int, tpls []drainTemplate) (drained, error) {
	m := drained{want: n}
	if err := dr.waitRecorded(2 * time.Minute); err != nil {
		return m, fmt.Errorf("the earlier deliveries: %w", err)
	}
	t0 := time.Now()
	if err := dr.load(n, tpls, t0); err != nil {
		return m, err
	}
	fmt.Fprintf(os.Stderr, "bench: %d deliveries written in %s\n", n, time.Since(t0).Round(time.Millisecond))
	session := dr.session()
	before, _ := dr.rc.arrived()
	cpu0, err := cpuTime(dr.pid)
	if err != nil {
		return m, err
	}
	// Due from now, each a microsecond after the one before as the
	// service's would be: the worker's window since its last pass (5 s)
	// holds them all, so it finds them without its 30 s sweep.
	shift := time.Now().UnixMicro() - (t0.UnixMicro() + int64(n-1))
	if _, err := dr.db.Exec(store.Rebind(dr.kind, `UPDATE webhook_deliveries SET next_attempt_at = created_at + ?
		WHERE status = ? AND next_attempt_at IS NULL`), shift, string(cauri.DeliveryPending)); err != nil {
		return m, err
	}
	committed := time.Now()
	m.nudged = dr.nudge(session)
	if m.nudged {
		m.want++
	}
	// Wait for every 2xx; give up after a minute without one (longer than
	// the worker's 30 s sweep).
	want := before + m.want
	for lastSeen, progress := before, time.Now(); ; time.Sleep(20 * time.Millisecond) {
		got, _ := dr.rc.arrived()
		if got >= want {
			break
		}
		if got > lastSeen {
			lastSeen, progress = got, time.Now()
		} else if time.Since(progress) > time.Minute {
			break
		}
	}
	got, last := dr.rc.arrived()
	m.got = got - before
	m.first, m.gap = dr.rc.gaps(before, committed)
	if m.got > 0 {
		m.rate = float64(m.got) / last.Sub(committed).Seconds()
	}
	if m.got < m.want {
		return m, nil // the table counts the missing as errors
	}
	// The CPU time runs until the last outcome is recorded: that is part
	// of a delivery's cost too.
	if err := dr.waitRecorded(time.Minute); err != nil {
		return m, err
	}
	cpu1, err := cpuTime(dr.pid)
	if err != nil {
		return m, err
	}
	m.cpu = (cpu1 - cpu0) / time.Duration(max(m.got, 1))
	return m, nil
}

// load writes n events and their deliveries as the service does
// (store.insertEvent), but not yet due (next_attempt_at NULL, which no
// look-up of the worker matches), in transactions of 10 000.
func (dr *drainer) load(n int, tpls []drainTemplate, t0 time.Time) error {
	const perStatement, perTx = 500, 10_000
	insertEvents := `INSERT INTO events (id, workspace_id, livemode, type, session_id, transfer_id, data, created_at) VALUES `
	insertDeliveries := `INSERT INTO webhook_deliveries (id, workspace_id, event_id, event, livemode, url, status, max_attempts,
		next_attempt_at, transaction_id, transfer_id, created_at) VALUES `
	for start := 0; start < n; start += perTx {
		tx, err := dr.db.Begin()
		if err != nil {
			return err
		}
		for s := start; s < min(n, start+perTx); s += perStatement {
			end := min(n, start+perTx, s+perStatement)
			var events, deliveries []any
			for i := s; i < end; i++ {
				tp := tpls[i%len(tpls)]
				at := t0.UnixMicro() + int64(i)
				id := cauri.NewLogID("evt_", time.UnixMicro(at))
				events = append(events, id, tp.workspaceID, tp.livemode, tp.event, nullable(tp.sessionID), nil, tp.data, at)
				deliveries = append(deliveries, cauri.NewLogID("whd_", time.UnixMicro(at)), tp.workspaceID, id, tp.event, tp.livemode, tp.url,
					string(cauri.DeliveryPending), tp.maxAttempts, nil, nullable(tp.transactionID), nil, at)
			}
			if _, err := tx.Exec(store.Rebind(dr.kind, insertEvents+valueRows(end-s, 8)), events...); err != nil {
				tx.Rollback()
				return err
			}
			if _, err := tx.Exec(store.Rebind(dr.kind, insertDeliveries+valueRows(end-s, 12)), deliveries...); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// waitRecorded waits until no delivery the drainer waits for (all, or
// the workspace's to the receiver) is pending any more.
func (dr *drainer) waitRecorded(limit time.Duration) error {
	q, args := `SELECT COUNT(*) FROM webhook_deliveries WHERE status = ? AND next_attempt_at IS NOT NULL`, []any{string(cauri.DeliveryPending)}
	if dr.workspaceID != "" {
		q += ` AND workspace_id = ? AND url = ?`
		args = append(args, dr.workspaceID, dr.url)
	}
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		var pending int
		err := dr.db.QueryRow(store.Rebind(dr.kind, q), args...).Scan(&pending)
		if err != nil {
			return err
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d deliveries still pending after %s", pending, limit)
		}
	}
}

// gaps reads the arrivals from number i on: how long after since the
// first came, and the longest wait between two.
func (rc *receiver) gaps(i int, since time.Time) (first, longest time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if i >= len(rc.at) {
		return 0, 0
	}
	for j := i + 1; j < len(rc.at); j++ {
		longest = max(longest, rc.at[j].Sub(rc.at[j-1]))
	}
	return rc.at[i].Sub(since), longest
}

// cpuTime is the user and system CPU time process pid has used, from
// /proc/<pid>/stat (utime and stime, in ticks of 1/100 s: Linux's USER_HZ).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command's name: state is field 3
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] { // fields 14 and 15
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// valueRows is the VALUES list of a multi-row INSERT: rows of cols placeholders.
func valueRows(rows, cols int) string {
	one := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return one + strings.Repeat(", "+one, rows-1)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// thousands writes n with a space between groups of three digits: 100 000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
