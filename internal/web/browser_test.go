package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

// browser starts headless Chromium (Debian's package, or CAURI_CHROMIUM).
// Without it the test is skipped locally and fails under CI, where .ci/run
// installs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, p := range []string{os.Getenv("CAURI_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed; the browser tests must run in CI (apt-get install chromium)")
		}
		t.Skip("Chromium is not installed (apt-get install chromium); skipping the browser test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	// A cheap phone's screen.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 740)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// waitLocation waits up to 10 s for the page to reach want (a redirect).
func waitLocation(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	var location string
	for deadline := time.Now().Add(20 * time.Second); location != want && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		location, _ = chromedp.Run(ctx, chromedp.Location())
	}
	if location != want {
		t.Fatalf("location = %q; want %q", location, want)
	}
}

// runClock moves the service's clock 9 s on every half second until the
// test ends: a live page polls every 3 s, and the service asks the
// aggregator at most every 8 s of its clock.
func (e *env) runClock(t *testing.T) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
				e.clock.Add(9 * time.Second)
			}
		}
	}()
}

// screenshot keeps a picture of the page in CAURI_SCREENSHOTS, when set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("CAURI_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
}

func TestBrowser_SimulateSuccess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := browser(t)
		successURL := e.url + "/healthz?from=checkout"
		id := e.mustSession(e.keys["test_public"], map[string]any{
			"amount": 25000, "description": "Panier n° 1042", "merchant_name": "Chez Adjoa", "success_url": successURL,
		})
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/pay/"+id),
			chromedp.WaitVisible(chromedp.ID("simulate-success")),
		)
		if err != nil {
			t.Fatal(err)
		}
		amount, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("amount")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(amount, "25") || !strings.Contains(amount, "XOF") {
			t.Fatalf("amount shown = %q", amount)
		}
		screenshot(t, ctx, "checkout-pending")
		err = chromedp.Do(ctx,
			chromedp.Click(chromedp.ID("simulate-success")),
			chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "checkout-success")
		if r := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys["test_secret"])...); r.str("status") != "SUCCESS" || r.body["paid"] != true {
			t.Fatalf("session after the click = %s; want SUCCESS", r.raw)
		}
		// The page takes the customer back to success_url.
		waitLocation(t, ctx, successURL)
	})
}

func TestBrowser_SimulateFailure(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ctx := browser(t)
	id := e.mustSession(e.keys["test_public"], `{"amount": 700}`)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/pay/"+id),
		chromedp.Click(chromedp.ID("simulate-failure")),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-status="FAILED"]`)),
		// A failed test payment can be tried again.
		chromedp.WaitVisible(chromedp.ID("simulate-success")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys["test_public"])...); r.str("status") != "FAILED" {
		t.Fatalf("session after the click = %s; want FAILED", r.str("status"))
	}
}

// TestBrowser_LivePayment: a customer pays a live session on the hosted
// page, through a pawaPay gateway whose simulator settles after a moment,
// and is sent back to the merchant; then the same when the first gateway
// answers 5xx and the service fails over to the second.
func TestBrowser_LivePayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		t.Run("Direct", func(t *testing.T) { livePaymentInBrowser(t, st, false) })
		t.Run("Failover", func(t *testing.T) { livePaymentInBrowser(t, st, true) })
	})
}

func livePaymentInBrowser(t *testing.T, st *store.Store, failover bool) {
	e := newEnv(t, st)
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	first, sim, simURL := e.addSimulatedGateway(ws, "SN")
	payer := first
	if failover {
		gatewaytest.Control(t, simURL, "/_sim/fault?mode=500-initiate")
		e.clock.Add(time.Second) // gateways are tried in the order they were added
		payer, sim, _ = e.addSimulatedGateway(ws, "SN")
	}
	sim.SettleAfter = 2 * time.Second // the waiting screen shows meanwhile
	ctx := browser(t)
	successURL := e.url + "/healthz?from=live"
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "description": "2 pagnes wax", "success_url": successURL})
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/pay/"+id),
		chromedp.WaitVisible(chromedp.ID("pay-button")),
		chromedp.Click(chromedp.CSS(`input[name=method][value$="|FREE_SEN"]`)),
		chromedp.SendKeys(chromedp.ID("phone"), "77 123 45 67"),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "live-choose")
	// The page polls every 3 s; the verify route asks the aggregator at
	// most every 8 s of the service's clock, which the test moves on.
	e.runClock(t)
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("cancel-button")),
		chromedp.Click(chromedp.ID("pay-button")),
		// The waiting screen names the number and the method, and counts
		// the first minute down.
		chromedp.WaitVisible(chromedp.ID("waiting-for")),
		chromedp.WaitNotPresent(chromedp.ID("cancel-button")), // a payment waits: no cancelling it
	); err != nil {
		t.Fatal(err)
	}
	waitingFor, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("waiting-for")))
	help, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("no-prompt")))
	screenshot(t, ctx, "live-waiting")
	if !strings.Contains(waitingFor, "+221 77 123 45 67") || !strings.Contains(waitingFor, "Free Money") || !strings.Contains(help, " s.") {
		t.Errorf("waiting screen: %q, %q; want the number, the method, and a countdown", waitingFor, help)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`)), chromedp.WaitVisible(chromedp.ID("receipt"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "live-success")
	if ref, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("receipt-reference"))); ref != id {
		t.Errorf("receipt reference = %q; want the session's id %s", ref, id)
	}
	if r := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(keys["live_secret"])...); r.str("status") != "SUCCESS" || r.str("provider") != "pawapay" {
		t.Fatalf("session after paying on the page = %s", r.raw)
	}
	attempts, _ := st.Attempts(context.Background(), id)
	byGateway := map[string]cauri.AttemptStatus{}
	for _, a := range attempts {
		byGateway[a.GatewayID] = a.Status
	}
	if byGateway[payer.ID] != cauri.AttemptSucceeded || failover && byGateway[first.ID] != cauri.AttemptFailed || len(attempts) != len(byGateway) {
		t.Fatalf("attempts by gateway = %v; want the payment through %s (failover: %v)", byGateway, payer.ID, failover)
	}
	waitLocation(t, ctx, successURL)
}

// TestBrowser_LivePageKnowsTheCustomer: a session made with the customer's
// number opens on that number's country and operator, chosen, with the
// number filled in; without one, on the first method.
func TestBrowser_LivePageKnowsTheCustomer(t *testing.T) {
	st := storetest.SQLite(t)
	e := newEnv(t, st)
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	e.addSimulatedGateway(ws, "CI", "SN")
	ctx := browser(t)
	open := func(body map[string]any) (chosen, phone string, first string) {
		t.Helper()
		id := e.mustSession(keys["live_public"], body)
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/pay/"+id), chromedp.WaitVisible(chromedp.ID("pay-button"))); err != nil {
			t.Fatal(err)
		}
		out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector("input[name=method]:checked").closest("label").textContent.trim(),
			document.getElementById("phone").value, document.querySelector("input[name=method]").closest("label").textContent.trim()]`))
		if err != nil || len(out) != 3 {
			t.Fatalf("reading the page: %v, %v", out, err)
		}
		return out[0], out[1], out[2]
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 640)); err != nil {
		t.Fatal(err)
	}
	// +221 77: Orange in Senegal (internal/catalog/prefixes.json).
	chosen, phone, first := open(map[string]any{"amount": 15000, "customer_phone": "+221 77 123 45 67"})
	screenshot(t, ctx, "live-known-customer")
	// On a 360x640 screen the Pay button shows without scrolling: Côte
	// d'Ivoire's operators wait, closed, behind "Other countries".
	fold, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.getElementById("pay-button").getBoundingClientRect().bottom, innerHeight,
		document.getElementById("other-methods").open ? 1 : 0, document.querySelectorAll("#other-methods input[name=method]").length]`))
	if err != nil || len(fold) != 4 || fold[0] > fold[1] || fold[2] != 0 || fold[3] != 3 {
		t.Errorf("Pay button bottom, screen height, other countries open, their methods = %v, %v; want the button on screen, 3 Ivorian methods folded", fold, err)
	}
	if got, want := chosen, "Orange Money · Senegal"; got != want {
		t.Errorf("chosen = %q; want %q", got, want)
	}
	if got, want := first, chosen; got != want {
		t.Errorf("first method = %q; want the chosen one, %q", got, want)
	}
	if got, want := phone, "+221771234567"; got != want {
		t.Errorf("phone = %q; want %q", got, want)
	}
	chosen, phone, first = open(map[string]any{"amount": 15000})
	if chosen != first || phone != "" {
		t.Errorf("without a number: chosen %q, first %q, phone %q; want the first, no number", chosen, first, phone)
	}
}

// TestLivePage_InFrench: the French page names the countries in French, and
// a finished payment's redirect says so once.
func TestLivePage_InFrench(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	e.addSimulatedGateway(ws, "SN")
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "customer_phone": "+221771234567"})
	page := e.do("GET", "/pay/"+id, nil, "Accept-Language", "fr-SN,fr;q=0.9").raw
	if !strings.Contains(page, "Orange Money · Sénégal") || strings.Contains(page, "· Senegal") {
		t.Errorf("the French page does not name Senegal in French:\n%s", page)
	}
	test := e.mustSession(e.keys["test_secret"], map[string]any{"amount": 100, "success_url": "https://shop.example/ok"})
	e.settle(test, "succes")
	page = e.do("GET", "/pay/"+test, nil, "Accept-Language", "fr").raw
	if got := strings.Count(page, "Retour chez le marchand"); got != 1 {
		t.Errorf("the paid test page says %q %d times; want once", "Retour chez le marchand", got)
	}
}

// TestLivePage_RefusalKeepsTheChoice: a payment refused on the page without
// JavaScript shows the reason with the method and the number the customer
// gave, not the page's first choice and an empty field.
func TestLivePage_RefusalKeepsTheChoice(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	g, _, _ := e.addSimulatedGateway(ws, "SN")
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000})
	// An Ivorian number for a Senegalese wallet: refused before any call.
	res, err := http.PostForm(e.url+"/pay/"+id, url.Values{"method": {g.ID + "|WAVE_SEN"}, "phone": {"+2250707123456"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	if got, want := res.StatusCode, 400; got != want {
		t.Fatalf("refused payment = %d; want %d:\n%s", got, want, page)
	}
	if !regexp.MustCompile(`value="` + regexp.QuoteMeta(g.ID) + `\|WAVE_SEN"[^>]*checked`).MatchString(page) {
		t.Errorf("Wave Senegal, refused, is not the chosen method:\n%s", page)
	}
	if !regexp.MustCompile(`id="phone"[^>]*value="[^"]*2250707123456"`).MatchString(page) || !strings.Contains(page, `id="error"`) {
		t.Errorf("the number or the reason is gone:\n%s", page)
	}
}

// TestLivePage_FailedTryKeepsTheChoice: when a payment fails at the
// aggregator (its outcome found by the page's check), the page opens on the
// same method and number with the reason, for another try.
func TestLivePage_FailedTryKeepsTheChoice(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	g, sim, _ := e.addSimulatedGateway(ws, "SN")
	sim.SettleAfter = 10 * time.Millisecond
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "customer_phone": "+221 77 123 45 67"})
	// ...0029: the simulator fails the payment once settled (PAYER_NOT_FOUND).
	if r := e.do("POST", "/checkout/initiate", map[string]any{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "76 123 00 29"}); r.status != 200 {
		t.Fatalf("initiate = %d %s", r.status, r.raw)
	}
	var page string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(page, `data-status="FAILED"`) && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		e.clock.Add(9 * time.Second) // the page asks the aggregator at most every 8 s
		page = e.do("GET", "/pay/"+id, nil).raw
	}
	if !strings.Contains(page, `data-status="FAILED"`) {
		t.Fatalf("the payment did not fail:\n%s", page)
	}
	if !regexp.MustCompile(`value="` + regexp.QuoteMeta(g.ID) + `\|WAVE_SEN"[^>]*checked`).MatchString(page) {
		t.Errorf("Wave Senegal, the failed try's method, is not the chosen one (the customer's number says Orange):\n%s", page)
	}
	if !regexp.MustCompile(`id="phone"[^>]*value="(\+|&#43;)221761230029"`).MatchString(page) || !strings.Contains(page, `id="last-failure"`) {
		t.Errorf("the failed try's number or its reason is missing:\n%s", page)
	}
}
