package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestBrowser_Dashboard signs in, filters transactions, downloads the
// export, creates a payment link and deactivates it, in Chromium.
func TestBrowser_Dashboard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Adjoa", true)
		addUser(t, st, "adjoa@example.com", "correct horse battery", ws.ID)
		for i, name := range []string{"Awa Diop", "Kofi Mensah", "Awa Ba"} {
			e.mustSession(keys["live_secret"], map[string]any{"amount": 5000 * (i + 1), "customer_name": name})
		}
		ctx := browser(t)
		downloads := t.TempDir()
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard"),
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
					Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
				return err
			}),
			chromedp.WaitVisible(chromedp.ID("login")),
			chromedp.SendKeys(chromedp.ID("email"), "adjoa@example.com"),
			chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
			chromedp.Click(chromedp.ID("sign-in")),
		)
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.ID("nav-transactions")),
			chromedp.Click(chromedp.ID("nav-transactions")),
			chromedp.WaitVisible(chromedp.ID("transactions")),
			chromedp.SendKeys(chromedp.ID("search"), "awa"),
			chromedp.Click(chromedp.ID("filter")),
			chromedp.WaitVisible(chromedp.CSS(`#search[value="awa"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("transactions")))
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "dashboard-transactions")
		if !strings.Contains(rows, "Awa Diop") || !strings.Contains(rows, "Awa Ba") || strings.Contains(rows, "Kofi") {
			t.Fatalf("filtered rows = %q", rows)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("export-link"))); err != nil {
			t.Fatal(err)
		}
		var csvFile []byte
		for deadline := time.Now().Add(10 * time.Second); csvFile == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			files, _ := filepath.Glob(filepath.Join(downloads, "*.csv"))
			if len(files) == 1 {
				csvFile, _ = os.ReadFile(files[0])
			}
		}
		if !strings.HasPrefix(string(csvFile), "ID,Order ID,Status") || strings.Count(string(csvFile), "\r\n") != 3 || strings.Contains(string(csvFile), "Kofi") {
			t.Fatalf("downloaded export = %q", csvFile)
		}
		err = chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard/links"),
			chromedp.WaitVisible(chromedp.ID("new-link")),
			chromedp.SendKeys(chromedp.ID("link-title"), "Robe wax"),
			chromedp.SendKeys(chromedp.ID("link-amount"), "15000"),
			chromedp.Click(chromedp.ID("create-link")),
			chromedp.WaitVisible(chromedp.CSS("button.toggle")),
		)
		if err != nil {
			t.Fatal(err)
		}
		created, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("links")))
		if err != nil || !strings.Contains(created, "Robe wax") || !strings.Contains(created, displayAmount(15000, ws.DefaultCurrency)) {
			t.Fatalf("links after the form = %q, %v", created, err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("button.toggle")), chromedp.WaitVisible(chromedp.ID("links"))); err != nil {
			t.Fatal(err)
		}
		var state string // the form posts, the page comes back with the new state
		for deadline := time.Now().Add(10 * time.Second); state != "Inactive" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			state, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("td.state")))
		}
		screenshot(t, ctx, "dashboard-links")
		if state != "Inactive" {
			t.Fatalf("link state after the switch = %q", state)
		}
	})
}

// TestBrowser_DashboardResend resends a failed delivery from the webhooks
// page, in Chromium: the receiver refused the only attempt (a worker without
// retries), then accepts the resend.
func TestBrowser_DashboardResend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st, func(d *Deps) { d.Worker.Schedule = nil })
		key := e.keys["test_secret"]
		var mu sync.Mutex
		failing := true
		rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
			mu.Lock()
			defer mu.Unlock()
			if failing {
				w.WriteHeader(500)
			}
		})
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url})
		e.settle(e.mustSession(key, `{"amount": 100}`), "succes")
		did := ""
		waitFor(t, "a failed delivery", func() bool {
			list := e.deliveries(key, "?status=failed")
			if len(list) == 1 {
				did = list[0]["id"].(string)
			}
			return did != ""
		})
		mu.Lock()
		failing = false
		mu.Unlock()
		addUser(t, st, "adjoa@example.com", "correct horse battery", e.ws.ID)

		ctx := browser(t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard"),
			chromedp.WaitVisible(chromedp.ID("login")),
			chromedp.SendKeys(chromedp.ID("email"), "adjoa@example.com"),
			chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
			chromedp.Click(chromedp.ID("sign-in")),
			chromedp.WaitVisible(chromedp.ID("workspace")),
			chromedp.Click(chromedp.CSS(`input[name="mode"][value="test"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		// The choice posts and the page comes back: wait for the new document
		// (a navigation started earlier would cancel the post).
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.before = true`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("select"))); err != nil {
			t.Fatal(err)
		}
		reloaded := false
		for deadline := time.Now().Add(10 * time.Second); !reloaded && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			reloaded, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.before !== true && document.readyState === "complete"`))
		}
		if !reloaded {
			t.Fatal("the dashboard did not come back after choosing the test data")
		}
		err = chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard/webhooks?status=failed"),
			chromedp.WaitVisible(chromedp.CSS("div.banner")),
		)
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+did+`"] button.resend`)),
			chromedp.Click(chromedp.CSS(`tr[data-id="`+did+`"] button.resend`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		var status string // the form posts, the page comes back with the new state
		for deadline := time.Now().Add(10 * time.Second); status != "delivered (2)" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			status, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr[data-id="`+did+`"] td.delivery-status`)))
		}
		screenshot(t, ctx, "dashboard-webhooks")
		if status != "delivered (2)" || len(rc.requests()) != 2 {
			t.Fatalf("after the resend: %q, %d requests at the receiver", status, len(rc.requests()))
		}
	})
}
