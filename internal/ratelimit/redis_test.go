package ratelimit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestRedis_SharedAcrossNodes: two nodes (two limiters, each with its own
// connection and its own local fallback) share one budget, exactly.
func TestRedis_SharedAcrossNodes(t *testing.T) {
	url := storetest.RedisURL(t)
	var nodes []*Redis
	for range 2 {
		r, err := NewRedis(url, NewMemory(time.Now), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		nodes = append(nodes, r)
	}
	l := Limit{Name: fmt.Sprintf("test-shared-%d", time.Now().UnixNano()), Count: 10, Per: 2 * time.Second}
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := nodes[i%2].Allow(context.Background(), l, "203.0.113.7")
			switch {
			case err != nil:
				t.Error(err)
			case d.Allowed:
				allowed.Add(1)
			case d.RetryAfter <= 0 || d.RetryAfter > l.Per:
				t.Errorf("Retry-After %s; want within the window", d.RetryAfter)
			}
		}()
	}
	wg.Wait()
	if n := allowed.Load(); n != 10 {
		t.Fatalf("%d of 40 allowed across two nodes; want exactly 10", n)
	}
	if nodes[0].Local.Len() != 0 || nodes[1].Local.Len() != 0 {
		t.Fatal("a decision was taken locally while Redis answered")
	}
	time.Sleep(l.Per + 100*time.Millisecond)
	if d, _ := nodes[1].Allow(context.Background(), l, "203.0.113.7"); !d.Allowed {
		t.Fatalf("after the window = %+v; want allowed again", d)
	}
}

// TestRedis_Unreachable stops a Redis the test started: the limiter goes
// on deciding, with the node's own limits, says so once in the log, and
// counts the local decisions.
func TestRedis_Unreachable(t *testing.T) {
	storetest.RedisURL(t) // the CI gate: redis-server is installed where Redis runs
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var logs bytes.Buffer
	r, err := NewRedis(fmt.Sprintf("redis://127.0.0.1:%d/0", port), NewMemory(time.Now), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var fallbacks atomic.Int32
	r.Fallback = func() { fallbacks.Add(1) }
	for deadline := time.Now().Add(5 * time.Second); r.Client.Ping(context.Background()).Err() != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the test's Redis did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	l := PerMinute("test-unreachable", 3)
	if d, err := r.Allow(context.Background(), l, "k"); err != nil || !d.Allowed || fallbacks.Load() != 0 {
		t.Fatalf("through Redis = %+v, %v (%d local)", d, err, fallbacks.Load())
	}
	cmd.Process.Kill() // the node's Redis goes away
	cmd.Wait()
	allowed := 0
	for range 5 {
		d, err := r.Allow(context.Background(), l, "k")
		if err != nil {
			t.Fatalf("Allow without Redis = %v; want a decision", err)
		}
		if d.Allowed {
			allowed++
		}
	}
	if allowed != 3 || fallbacks.Load() != 5 {
		t.Fatalf("without Redis: %d allowed, %d local decisions; want the node's own limit (3), 5 local", allowed, fallbacks.Load())
	}
	if n := strings.Count(logs.String(), "RATE LIMITS ARE PER NODE"); n != 1 {
		t.Fatalf("the fallback was logged %d times; want once:\n%s", n, logs.String())
	}
}
