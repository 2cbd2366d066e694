package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/redis/go-redis/v9"
)

// clusterRedis is the test Redis's database 7, emptied for the cluster
// test (the other Redis tests use database 0 with names of their own).
func clusterRedis(t *testing.T) string {
	t.Helper()
	base := storetest.RedisURL(t)
	i := strings.LastIndex(base, "/")
	if i < len("redis://") {
		base += "/"
		i = len(base) - 1
	}
	url := base[:i] + "/7"
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	if err := rc.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("emptying the cluster test's Redis database: %v", err)
	}
	return url
}

// TestCluster runs three `cauri serve` processes on one PostgreSQL and one
// Redis, as a merchant scales out (docs/architecture.md, "Running several
// nodes"): the rate limits hold exactly across the nodes, a storm of one
// idempotency key across them makes one session, every webhook is sent
// once, and a node killed with SIGKILL in the middle of a burst loses none.
func TestCluster(t *testing.T) {
	redisURL := clusterRedis(t)
	env := map[string]string{
		"CAURI_DATABASE_URL": storetest.PostgresURL(t), "CAURI_MASTER_KEY": "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
		"CAURI_REDIS_URL": redisURL, "CAURI_WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8", "CAURI_WEBHOOK_TIMEOUT": "2s",
		"CAURI_TRUSTED_PROXIES": "127.0.0.1", "CAURI_TEST_FAST_RECONCILE": "1",
	}
	// newNode starts one more `cauri serve` process on the shared stores.
	newNode := func() (*server, string) {
		nodeEnv := map[string]string{}
		for k, v := range env {
			nodeEnv[k] = v
		}
		addr := freeAddr(t)
		nodeEnv["CAURI_ADDR"], nodeEnv["CAURI_BASE_URL"] = addr, "http://"+addr
		return startServer(t, nodeEnv), "http://" + addr
	}
	var nodes []*server
	var bases []string
	for range 3 {
		n, base := newNode()
		nodes, bases = append(nodes, n), append(bases, base)
	}
	if !strings.Contains(nodes[0].logs.String(), `"rate_limits":"redis"`) {
		t.Fatalf("node 0 does not share its limits through Redis:\n%s", nodes[0].logs.String())
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"workspace", "create", "--name", "Cluster shop"}, func(k string) string { return env[k] }, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	key := jsonField(t, out.Bytes(), "keys", "test_secret")
	liveKey, wsID := jsonField(t, out.Bytes(), "keys", "live_secret"), jsonField(t, out.Bytes(), "id")
	// post sends a request to node i as client IP ip (the nodes trust
	// 127.0.0.1 as their proxy), and returns its status and body.
	post := func(i int, path, ip, idem, body string) (int, string) {
		req, _ := http.NewRequest("POST", bases[i%len(bases)]+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Forwarded-For", ip)
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	burst := func(n int, send func(i int) int) map[int]int {
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code := send(i)
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		return codes
	}

	t.Run("LimitsExactAcrossNodes", func(t *testing.T) {
		// 60 sessions a minute per IP (SPEC section 8): 300 in a burst over
		// three nodes accept exactly 60 (one node alone would accept 60, the
		// three without Redis 180).
		codes := burst(300, func(i int) int {
			code, _ := post(i, "/v1/checkout/sessions", "198.51.100.10", "", `{"amount": 100}`)
			return code
		})
		if codes[201] != 60 || codes[429] != 240 {
			fellBack := false
			for _, n := range nodes {
				fellBack = fellBack || strings.Contains(n.logs.String(), "RATE LIMITS ARE PER NODE")
			}
			t.Fatalf("answers = %v; want exactly 60 created and 240 refused (a node fell back to its own limits: %v)", codes, fellBack)
		}
	})

	t.Run("SameKeyStormMakesOneSession", func(t *testing.T) {
		var mu sync.Mutex
		ids := map[string]int{}
		codes := burst(30, func(i int) int {
			code, body := post(i, "/v1/checkout/sessions", fmt.Sprintf("198.51.100.%d", 20+i), "order-storm-1", `{"amount": 2500}`)
			if code == 200 || code == 201 {
				mu.Lock()
				ids[jsonField(t, []byte(body), "id")]++
				mu.Unlock()
			}
			return code
		})
		if codes[201] != 1 || codes[200] != 29 || len(ids) != 1 {
			t.Fatalf("answers = %v, sessions %v; want one created, 29 replays of it", codes, ids)
		}
	})

	t.Run("RolledKeyStopsOnEveryNode", func(t *testing.T) {
		// Each node keeps the keys it saw in memory; a key rolled without
		// grace by the CLI (another process) stops on every node, and its
		// replacement works there.
		pub := jsonField(t, out.Bytes(), "keys", "test_public")
		status := func(i int, key string) int {
			req, _ := http.NewRequest("GET", bases[i]+"/v1/checkout/sessions/cs_none/status", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0
			}
			res.Body.Close()
			return res.StatusCode
		}
		for i := range bases {
			if code := status(i, pub); code != 404 {
				t.Fatalf("node %d with the key: %d; want 404 (known key, no such session)", i, code)
			}
		}
		var rolled bytes.Buffer
		if err := run(context.Background(), []string{"workspace", "roll-key", "--key", "test_public", "--grace", "0", wsID},
			func(k string) string { return env[k] }, nil, &rolled, io.Discard); err != nil {
			t.Fatal(err)
		}
		fresh := jsonField(t, rolled.Bytes(), "value")
		for i := range bases {
			for deadline := time.Now().Add(10 * time.Second); status(i, pub) != 401; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("node %d still takes the rolled key after 10 s", i)
				}
			}
			if code := status(i, fresh); code != 404 {
				t.Fatalf("node %d with the new key: %d; want 404", i, code)
			}
		}
	})

	t.Run("WebhooksOnceAndANodeKilled", func(t *testing.T) {
		var mu sync.Mutex
		got := map[string]int{} // deliveries received, by delivery id
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			got[r.Header.Get("X-Service-Delivery")]++
			mu.Unlock()
		}))
		defer rc.Close()
		ctx := context.Background()
		url := rc.URL + "/hooks"
		if _, err := client.New(bases[0], key).UpdateWebhookConfig(ctx, client.WebhookConfigUpdate{WebhookUrl: &url}); err != nil {
			t.Fatal(err)
		}
		settleAll := func(n, from int) {
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ip := fmt.Sprintf("203.0.113.%d", from+i)
					// A node that was just killed drops the connection: the
					// client retries on the next one with the same key.
					var code int
					var body string
					for try := 0; try < 3; try++ {
						if code, body = post(i+try, "/v1/checkout/sessions", ip, fmt.Sprint("order-", from+i), `{"amount": 1000}`); code/100 == 2 {
							break
						}
					}
					if code/100 != 2 {
						t.Errorf("create = %d %s", code, body)
						return
					}
					id := jsonField(t, []byte(body), "id")
					for try := 0; try < 3; try++ {
						code, _ = post(i+try, "/checkout/sandbox", ip, "", `{"transactionId": "`+id+`", "issue": "succes"}`)
						if code == 200 || try > 0 && code == 409 { // 409 after a lost answer: the killed node had settled it
							return
						}
					}
					t.Errorf("settle %s = %d", id, code)
				}()
			}
			wg.Wait()
		}
		waitFor := func(n int, within time.Duration) map[string]int {
			t.Helper()
			for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				mu.Lock()
				if len(got) >= n {
					c := map[string]int{}
					for k, v := range got {
						c[k] = v
					}
					mu.Unlock()
					return c
				}
				mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%d of %d deliveries arrived", len(got), n)
			return nil
		}
		settleAll(45, 1)
		time.Sleep(time.Second) // let the three workers finish what they leased
		for id, n := range waitFor(45, 30*time.Second) {
			if n != 1 {
				t.Fatalf("delivery %s arrived %d times with every node up; want once", id, n)
			}
		}
		// A node dies mid-burst: every delivery still arrives (a delivery
		// it was sending comes back when its lease expires, so it may
		// arrive twice, never zero times).
		// (Killed after the burst's first third is settled, not after a
		// time: how long a burst takes depends on the machine.)
		settleAll(15, 100)
		nodes[2].cmd.Process.Kill()
		settleAll(30, 115)
		// A delivery the killed node had leased comes back once its lease
		// (2 x CAURI_WEBHOOK_TIMEOUT + 1 s = 5 s) has expired, at the next
		// look from the start (every 30 s: docs/decisions.md, Fairness): up
		// to 35 s after the kill by design, beyond a 30 s wait on a loaded
		// machine (it failed so once in CI). Wait for that, and a margin.
		final := waitFor(90, 50*time.Second)
		if len(final) != 90 {
			t.Fatalf("%d distinct deliveries; want 90", len(final))
		}
	})

	t.Run("TransfersThroughAKilledNode", func(t *testing.T) {
		// A pawaPay account on the test's simulator; a burst of payouts over
		// the nodes still up, one node killed in the middle: every transfer
		// whose request was answered, or retried with its key, ends
		// succeeded (the dead node's ones adopted by the others' reconcilers
		// after the initiation deadline, shortened to 3 s here), and the
		// aggregator pays each exactly once.
		sim := &pawapay.Simulator{Token: "sim-token", SettleAfter: 200 * time.Millisecond}
		simSrv := httptest.NewServer(sim)
		defer simSrv.Close()
		cli := func(stdin string, args ...string) string {
			var out bytes.Buffer
			if err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, io.Discard); err != nil {
				t.Fatalf("cauri %v: %v", args, err)
			}
			return out.String()
		}
		cli("", "workspace", "verify", wsID)
		gw := jsonField(t, []byte(cli(`{"api_token": "sim-token"}`, "gateway", "add", "--workspace", wsID, "--provider", "pawapay",
			"--countries", "SN", "--live", "--credentials", "-", "--api-url", simSrv.URL)), "id")
		sim.CallbackURL = bases[0] + "/callbacks/" + gw
		// Each payout call takes half a second: the node is killed while
		// some are in flight, their end never recorded.
		if res, err := http.Post(simSrv.URL+"/_sim/fault?mode=slow&seconds=0.5", "", nil); err == nil {
			res.Body.Close()
		}
		var lost atomic.Int32
		// Nodes 0 and 1, and a new one to kill (node 2 was killed above).
		victim, victimBase := newNode()
		up := []string{bases[0], bases[1], victimBase}
		var mu sync.Mutex
		ids := map[string]bool{}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"amount": 1000, "country": "SN", "operator": "wave", "phone": "77 123 %02d %02d"}`, i, i)
				for try := 0; try < 3; try++ {
					req, _ := http.NewRequest("POST", up[(i+try)%len(up)]+"/v1/transfers", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+liveKey)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", fmt.Sprint("payout-", i))
					req.Header.Set("X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i))
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						lost.Add(1)
						continue // the node died: the same key to the next one
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode == 200 || res.StatusCode == 201 {
						mu.Lock()
						ids[jsonField(t, b, "id")] = true
						mu.Unlock()
						return
					}
					if res.StatusCode != 409 && res.StatusCode != 500 {
						t.Errorf("transfer %d = %d %s", i, res.StatusCode, b)
						return
					}
					time.Sleep(time.Second)
				}
				t.Errorf("transfer %d got no answer from any node", i)
			}()
		}
		killDuring(t, victim, &wg, &lost, simSrv.URL)
		c := client.New(bases[0], liveKey)
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			list, err := c.ListTransfers(context.Background(), "", 200)
			done := err == nil
			if err == nil {
				for _, tr := range list.Data {
					done = done && tr.Status == client.TransferStatusSucceeded
				}
			}
			if done && err == nil && len(list.Data) == len(ids) && sim.Payouts() == len(ids) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 40 s: %v, %d transfers answered, %d payouts at pawaPay; want every one succeeded and paid once", err, len(ids), sim.Payouts())
			}
		}
		if len(ids) != 20 {
			t.Fatalf("%d of 20 transfers answered", len(ids))
		}
	})

	t.Run("MpesaB2CThroughAKilledNode", func(t *testing.T) {
		// The same burst through a workspace's own Daraja B2C credentials
		// on the M-Pesa simulator, which takes no idempotency key: a node
		// killed with payouts in flight. No wallet is paid twice; every
		// payout Daraja received ends succeeded (its result, or, when the
		// result went to the dead node or was lost, the reconcilers' status
		// query); one Daraja never received stays processing.
		cred := "c2ltdWxhdG9yLWNyZWRlbnRpYWw="
		sim := &mpesa.Simulator{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "174379", PassKey: "pk",
			InitiatorName: "api", B2CCredential: cred, SettleAfter: 200 * time.Millisecond}
		simSrv := httptest.NewServer(sim)
		defer simSrv.Close()
		// A workspace of its own: the pawaPay burst used this minute's
		// transfer rate of the first.
		var out bytes.Buffer
		getenv := func(k string) string { return env[k] }
		if err := run(context.Background(), []string{"workspace", "create", "--name", "Nairobi payroll"}, getenv, nil, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		liveKey, wsID := jsonField(t, out.Bytes(), "keys", "live_secret"), jsonField(t, out.Bytes(), "id")
		if err := run(context.Background(), []string{"workspace", "verify", wsID}, getenv, nil, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		creds := `{"consumer_key": "ck", "consumer_secret": "cs", "shortcode": "174379", "passkey": "pk", "initiator_name": "api", "security_credential": "` + cred + `"}`
		if err := run(context.Background(), []string{"gateway", "add", "--workspace", wsID, "--provider", "mpesa", "--countries", "KE", "--live",
			"--credentials", "-", "--api-url", simSrv.URL}, getenv, strings.NewReader(creds), &out, io.Discard); err != nil {
			t.Fatalf("gateway add: %v", err)
		}
		if res, err := http.Post(simSrv.URL+"/_sim/fault?mode=slow&seconds=0.5", "", nil); err == nil {
			res.Body.Close()
		}
		victim, victimBase := newNode()
		up := []string{bases[0], bases[1], victimBase}
		var lost atomic.Int32
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"amount": 100, "country": "KE", "operator": "mpesa", "phone": "07081234%02d"}`, i)
				for try := 0; try < 3; try++ {
					req, _ := http.NewRequest("POST", up[(i+try)%len(up)]+"/v1/transfers", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+liveKey)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", fmt.Sprint("ke-payout-", i))
					req.Header.Set("X-Forwarded-For", fmt.Sprintf("192.0.2.%d", 100+i))
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						lost.Add(1)
						continue
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode == 200 || res.StatusCode == 201 {
						return
					}
					if res.StatusCode != 409 && res.StatusCode != 500 {
						t.Errorf("transfer %d = %d %s", i, res.StatusCode, b)
						return
					}
					time.Sleep(time.Second)
				}
			}()
		}
		killDuring(t, victim, &wg, &lost, simSrv.URL)
		c := client.New(bases[0], liveKey)
		var report string
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			list, err := c.ListTransfers(context.Background(), "", 200)
			if err != nil {
				t.Fatal(err)
			}
			done, n, received, stuck := true, 0, 0, 0
			for _, tr := range list.Data {
				if tr.Country != "KE" {
					continue
				}
				n++
				paid := sim.B2CPaid(tr.Reference)
				if paid > 1 {
					t.Fatalf("transfer %s paid %d times", tr.Id, paid)
				}
				switch {
				case paid == 1:
					received++
					done = done && tr.Status == client.TransferStatusSucceeded
				case tr.Status != client.TransferStatusProcessing:
					t.Fatalf("transfer %s %s without a payment at Daraja", tr.Id, tr.Status)
				default:
					stuck++
				}
			}
			report = fmt.Sprintf("%d transfers, %d paid once, %d never received (processing), %d B2C requests", n, received, stuck, sim.B2CRequests())
			if done && received == sim.B2CRequests() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 40 s: %s; want every received payout succeeded, each paid once", report)
			}
		}
		t.Log(report)
	})

	t.Run("TransferReplayNeverAGhostAcrossNodes", func(t *testing.T) {
		// The aggregator answers slowly and refuses the credentials (nothing
		// sent: the first request deletes its transfer, "not created"): 30
		// requests with one key over three nodes answer no transfer at all,
		// and none is left (issue 16: 35-46 ghosts were answered 200).
		refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(300 * time.Millisecond)
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"errorCode": "AUTHENTICATION_ERROR"}`))
		}))
		defer refusing.Close()
		var out bytes.Buffer
		getenv := func(k string) string { return env[k] }
		if err := run(context.Background(), []string{"workspace", "create", "--name", "Ghost shop"}, getenv, nil, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		ghostWS, ghostKey := jsonField(t, out.Bytes(), "id"), jsonField(t, out.Bytes(), "keys", "live_secret")
		for _, args := range [][]string{{"workspace", "verify", ghostWS}, {"gateway", "add", "--workspace", ghostWS, "--provider", "pawapay",
			"--countries", "SN", "--live", "--credentials", "-", "--api-url", refusing.URL}} {
			if err := run(context.Background(), args, getenv, strings.NewReader(`{"api_token": "revoked"}`), io.Discard, io.Discard); err != nil {
				t.Fatalf("cauri %v: %v", args, err)
			}
		}
		_, third := newNode()
		up := []string{bases[0], bases[1], third}
		var mu sync.Mutex
		answers := map[int]int{}
		var wg sync.WaitGroup
		for i := range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", up[i%3]+"/v1/transfers",
					strings.NewReader(`{"amount": 1000, "country": "SN", "operator": "wave", "phone": "77 123 45 67"}`))
				req.Header.Set("Authorization", "Bearer "+ghostKey)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", "ghost-across-nodes")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				mu.Lock()
				answers[res.StatusCode]++
				mu.Unlock()
				if res.StatusCode/100 == 2 {
					t.Errorf("answer %d %s; want no transfer answered (none was created)", res.StatusCode, b)
				}
			}()
		}
		wg.Wait()
		list, err := client.New(bases[0], ghostKey).ListTransfers(context.Background(), "", 200)
		if err != nil || len(list.Data) != 0 {
			t.Fatalf("transfers left = %v, %v; want none (answers %v)", list, err, answers)
		}
	})
}

// killDuring kills victim with SIGKILL 200 ms into a burst of requests,
// waits for the burst's goroutines (wg), fails the test when no request
// was cut short by the kill (lost), and ends the simulator's fault.
func killDuring(t *testing.T, victim *server, wg *sync.WaitGroup, lost *atomic.Int32, simURL string) {
	t.Helper()
	go func() { time.Sleep(200 * time.Millisecond); victim.cmd.Process.Kill() }()
	wg.Wait()
	if lost.Load() == 0 {
		t.Fatal("no request was cut short by the kill")
	}
	if res, err := http.Post(simURL+"/_sim/fault?mode=none", "", nil); err == nil {
		res.Body.Close()
	}
}
