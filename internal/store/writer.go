package store

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// SQLite has one writer, and each commit with synchronous=FULL writes the
// pages it changed to the WAL and waits for an fsync. Under load, the
// transactions waiting for the write lock are therefore committed
// together (group commit): the one that gets the turn runs every
// transaction queued behind it, each in its own savepoint, and commits
// once. A transaction whose function fails is rolled back to its
// savepoint alone; every one is answered after the commit (a failure may
// rest on an earlier one's writes), with its outcome: each caller still
// returns only once its changes are durable, or with the error that says
// they are not. A function run inside a transaction must not block on
// anything outside the store (a call to an aggregator, another caller's
// lock): once its batch has begun, the others in it wait for it, without
// a deadline. Pages
// that several of the batch's transactions change (the tail of every
// index by time, the overview's counts) are written once, and the fsync
// is shared.

// maxBatch bounds how many transactions one commit carries, so that the
// first of them waits for a bounded amount of others' work.
const maxBatch = 64

// writeJob is one transaction waiting for the write turn.
type writeJob struct {
	fn    func(*tx) error
	state atomic.Int32 // jobQueued, jobTaken or jobAbandoned
	done  chan struct{}
	err   error  // the outcome, set before done is closed
	told  func() // run by the caller once done (beforeKeysCommit's wait)
	// panicked is what fn panicked with and where, raised again in its
	// caller's goroutine (the batch goes on without it).
	panicked any
}

const (
	jobQueued int32 = iota
	jobTaken
	jobAbandoned
)

// writeQueue is the transactions waiting for the write turn, oldest first.
type writeQueue struct {
	mu   sync.Mutex
	jobs []*writeJob
}

func (q *writeQueue) push(j *writeJob) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
}

// take removes up to maxBatch of the oldest jobs that their callers still
// wait for, and marks them taken.
func (q *writeQueue) take() []*writeJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*writeJob
	i := 0
	for ; i < len(q.jobs) && len(out) < maxBatch; i++ {
		if j := q.jobs[i]; j.state.CompareAndSwap(jobQueued, jobTaken) {
			out = append(out, j)
		}
	}
	q.jobs = append(q.jobs[:0], q.jobs[i:]...)
	return out
}

// groupTx is tx on SQLite: fn joins the queue, and its caller either sees
// it done by another's batch or takes the turn and runs a batch itself.
// A transaction not begun when ctx ends, or after writerWait (SQLite's own
// busy_timeout: a writer that never lets go fails its waiters as
// SQLITE_BUSY did rather than hanging them), is abandoned and never runs;
// one already begun is waited for (a batch is bounded).
func (s *Store) groupTx(ctx context.Context, fn func(*tx) error) error {
	j := &writeJob{fn: fn, done: make(chan struct{})}
	s.queue.push(j)
	wait := time.NewTimer(writerWait)
	defer wait.Stop()
	cancelled, timeout := ctx.Done(), wait.C
	for {
		select {
		case <-j.done:
			if j.panicked != nil {
				panic(j.panicked)
			}
			if j.told != nil {
				j.told()
			}
			return j.err
		case s.writer <- struct{}{}:
			func() {
				defer func() { <-s.writer }()
				s.runBatch()
			}()
		case <-cancelled:
			if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
				return ctx.Err()
			}
			cancelled, timeout = nil, nil // begun: wait for its outcome
		case <-timeout:
			if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
				return fmt.Errorf("store: no write turn within %s", writerWait)
			}
			cancelled, timeout = nil, nil
		}
	}
}

// run runs the job's function and what ends a transaction, in t; a panic
// is kept for the caller and fails the job.
func (j *writeJob) run(ctx context.Context, t *tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			j.panicked = fmt.Sprintf("%v [in a batched SQLite transaction]\n%s", r, debug.Stack())
			err = fmt.Errorf("store: the transaction panicked: %v", r)
		}
	}()
	err = j.fn(t)
	if err == nil && t.counts != nil {
		err = t.writeCounts(ctx)
	}
	if err == nil && t.clearsKeys {
		j.told, err = t.beforeKeysCommit(ctx)
	}
	return err
}

// runBatch runs the queued transactions in one SQLite transaction, each
// in a savepoint when there are several, commits, and answers each.
// Statements run without their callers' cancellation: an interrupted
// statement makes SQLite roll back the whole transaction, the others'
// work with it. A transaction whose function failed is answered with its
// error only once the batch has committed: that error may rest on what an
// earlier transaction of the batch wrote ("already paid"), which a failed
// commit undoes; then it gets the batch's error, as the others do.
func (s *Store) runBatch() {
	jobs := s.queue.take()
	if len(jobs) == 0 {
		return
	}
	answered := false
	defer func() {
		if !answered { // a panic outside the jobs' functions: nobody waits for ever
			for _, j := range jobs {
				j.answer(errors.New("store: a batch of transactions was abandoned"))
			}
		}
	}()
	ctx := context.Background()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		for _, j := range jobs {
			j.answer(err)
		}
		answered = true
		return
	}
	savepoints := len(jobs) > 1
	failed := map[*writeJob]error{} // the jobs whose function failed, rolled back alone
	clear := false
	var sessions []string // the sessions the batch changes
	for _, j := range jobs {
		if savepoints {
			if _, err = sqlTx.ExecContext(ctx, `SAVEPOINT job`); err != nil {
				break
			}
		}
		t := &tx{q: sqlTx, sqlTx: sqlTx, s: s, uncancelled: true}
		if ferr := j.run(ctx, t); ferr != nil {
			failed[j], j.told = ferr, nil
			if !savepoints {
				break
			}
			// Undo its changes alone. When SQLite has already rolled the
			// whole transaction back (a full disk, an I/O error), the
			// savepoint is gone: every transaction of the batch fails.
			if _, err = sqlTx.ExecContext(ctx, `ROLLBACK TO job`); err == nil {
				_, err = sqlTx.ExecContext(ctx, `RELEASE job`)
			}
		} else {
			clear = clear || t.clearsKeys
			sessions = append(sessions, t.sessionIDs...)
			if savepoints {
				_, err = sqlTx.ExecContext(ctx, `RELEASE job`)
			}
		}
		if err != nil {
			break
		}
	}
	switch {
	case err != nil:
		sqlTx.Rollback()
		err = fmt.Errorf("store: a batch of transactions was rolled back: %w", err)
	case !savepoints && len(failed) == 1:
		sqlTx.Rollback() // the one transaction failed: nothing to commit
	default:
		err = sqlTx.Commit()
		s.sessions.changed(sessions) // even when the commit's outcome is unknown
	}
	if clear {
		s.clearCaches() // even when the commit's outcome is unknown
	}
	for _, j := range jobs {
		switch ferr, ok := failed[j]; {
		case err != nil:
			j.told = nil
			j.answer(err)
		case ok:
			j.answer(ferr)
		default:
			j.answer(nil)
		}
	}
	answered = true
}

// answer gives the job its outcome and wakes its caller.
func (j *writeJob) answer(err error) {
	j.err = err
	close(j.done)
}
