package web

import (
	"context"
	"net/http"
	"net/url"
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
		e.addSimulatedGateway(ws, "SN") // a link needs a gateway that collects its currency
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
			signIn("adjoa@example.com", "correct horse battery"),
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
		if err != nil || !strings.Contains(created, "Robe wax") || !strings.Contains(created, "15\u202f000 XOF") {
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
// retries), then accepts the resend; then a test webhook is sent.
func TestBrowser_DashboardResend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st, func(d *Deps) { d.Webhooks.Worker.Schedule = nil })
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
			signIn("adjoa@example.com", "correct horse battery"),
			chromedp.WaitVisible(chromedp.ID("workspace")),
			chromedp.Click(chromedp.CSS(`input[name="mode"][value="test"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("select")) // the dashboard comes back with test data
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
		// The test webhook: sent at once, the log's first row (a minute later:
		// the log is newest first).
		e.clock.Add(time.Minute)
		submit(t, ctx, chromedp.ID("send-test"))
		first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#deliveries tbody tr:first-child")))
		screenshot(t, ctx, "dashboard-webhooks-test")
		if err != nil || !strings.Contains(first, "test webhook") || !strings.Contains(first, "payment.completed") || len(rc.requests()) != 3 {
			t.Fatalf("after the test webhook: first row %q (%v), %d requests at the receiver", first, err, len(rc.requests()))
		}
	})
}

// submit clicks a form's button and waits for the page that answers (a
// navigation started before it would cancel the post).
func submit[S chromedp.Selectable](t *testing.T, ctx context.Context, button S) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.before = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(button)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if loaded, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.before !== true && document.readyState === "complete"`)); loaded {
			return
		}
	}
	t.Fatal("no page came back after the form was sent")
}

// overflowing lists what sticks out of the page's card on the phone's
// screen: inputs, buttons, figures and charts must fit in it (a wide table
// may scroll inside it).
const overflowing = `(() => {
	const m = document.querySelector("main").getBoundingClientRect();
	const out = [...document.querySelectorAll("main input:not([type=hidden]), main select, main button, main .figures div, main svg.chart, main nav, main h1")]
		.filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > m.right + 1 || r.left < m.left - 1); })
		.map(e => e.tagName + "#" + (e.id || e.name || e.className));
	if (document.documentElement.scrollWidth > window.innerWidth) out.push("page wider than the screen");
	return out;
})()`

// TestBrowser_DashboardPages goes through every page of the dashboard on
// a phone's screen in Chromium: each fits the screen (screenshots with
// CAURI_SCREENSHOTS); the overview draws its charts; a key is rolled and
// shown once; an aggregator account is connected; someone is invited; the
// overview's first-run checklist says what is done and leads to the rest.
func TestBrowser_DashboardPages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Adjoa", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		for i, phone := range []string{"771234567", "771230029", "771234568"} {
			e.payLive(keys["live_public"], g.ID, simURL, 5000*(i+1), phone)
			e.clock.Add(26 * time.Hour)
		}
		addUser(t, st, "adjoa@example.com", "correct horse battery", ws.ID)
		ctx := browser(t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard"),
			chromedp.WaitVisible(chromedp.ID("login")),
			chromedp.SendKeys(chromedp.ID("email"), "adjoa@example.com"),
			chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "dashboard-login")
		submit(t, ctx, chromedp.ID("sign-in"))
		bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#volume-chart rect[height]:not([height='0'])").length`))
		if err != nil || bars != 2 {
			t.Fatalf("the volume chart has %d bars drawn, %v; want the 2 days that collected", bars, err)
		}
		// The first-run checklist: verified, a gateway and the keys done; a
		// step leads where it is done.
		done, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#checklist li.done")].map(li => li.id)`))
		if err != nil || strings.Join(done, " ") != "check-keys check-gateway check-verified" {
			t.Fatalf("checklist steps done = %v, %v; want the keys, the gateway and the verification", done, err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#check-webhook a"))); err != nil {
			t.Fatal(err)
		}
		waitLocation(t, ctx, e.url+"/dashboard/webhooks")
		pages, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#nav a")].map(a => a.id.slice(4) + " " + a.getAttribute("href"))`))
		if err != nil || len(pages) < 8 {
			t.Fatalf("the navigation links to %v, %v; want the dashboard's 8 pages", pages, err)
		}
		for _, page := range pages {
			key, path, _ := strings.Cut(page, " ")
			if err := chromedp.Do(ctx, chromedp.Navigate(e.url+path), chromedp.WaitVisible(chromedp.ID("nav"))); err != nil {
				t.Fatal(err)
			}
			out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowing))
			if err != nil || len(out) > 0 {
				t.Errorf("%s on a 360-px screen: %v stick out of the page, %v", path, out, err)
			}
			current, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("nav.tabs [aria-current=page]").id`))
			if current != "nav-"+key {
				t.Errorf("%s marks %q as the current page", path, current)
			}
			screenshot(t, ctx, "dashboard-"+key)
		}

		// Roll the test secret key: the new key is shown once.
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/keys"), chromedp.SetValue(chromedp.ID("roll-key"), "test_sec")); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("roll-button"))
		newKey, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-key")))
		if err != nil || !strings.HasPrefix(newKey, "svc_test_sec_") {
			t.Fatalf("new key = %q, %v", newKey, err)
		}
		screenshot(t, ctx, "dashboard-keys-rolled")
		wantStatus(t, e.do("GET", "/v1/config/webhook", nil, bearer(newKey)...), 200)

		// A form that went stale (its CSRF token no longer the cookie's) is
		// refused on a page that says why and leads back.
		err = chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/keys"),
			chromedp.SetAttributeValue(chromedp.CSS(`#roll input[name="csrf"]`), "value", "stale"),
			chromedp.SetValue(chromedp.ID("roll-key"), "test_pub"))
		if err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("roll-button"))
		refusal, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error")))
		if err != nil || !strings.Contains(refusal, "This form expired") {
			t.Fatalf("a stale form shows %q, %v; want why it was refused", refusal, err)
		}
		if out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowing)); err != nil || len(out) > 0 {
			t.Errorf("the refusal on a 360-px screen: %v stick out of the page, %v", out, err)
		}
		screenshot(t, ctx, "dashboard-refused")
		submit(t, ctx, chromedp.ID("back"))
		waitLocation(t, ctx, e.url+"/dashboard/keys")

		// Connect a FedaPay account.
		err = chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard/gateways"),
			chromedp.Click(chromedp.CSS(`#providers a[href*="provider=fedapay"]`)),
			chromedp.WaitVisible(chromedp.ID("new-gateway")),
			chromedp.SendKeys(chromedp.ID("cred-secret_key"), "sk_sandbox_0123456789"),
			chromedp.SendKeys(chromedp.ID("gateway-countries"), "BJ"),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "dashboard-gateways-form")
		submit(t, ctx, chromedp.ID("add-gateway"))
		page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil || !strings.Contains(page, "FedaPay") || !strings.Contains(page, "secret_key …6789") || strings.Contains(page, "sk_sandbox_0123456789") {
			t.Fatalf("gateways after connecting FedaPay: %v\n%s", err, page)
		}

		// Invite a colleague: the link is shown once.
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/team"), chromedp.SendKeys(chromedp.ID("invite-email"), "kofi@example.com")); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("invite-button"))
		link, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("invitation-link")))
		if err != nil || !strings.Contains(link, "/dashboard/invitations/") {
			t.Fatalf("invitation link = %q, %v", link, err)
		}
		screenshot(t, ctx, "dashboard-team-invited")
		if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("accept"))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "dashboard-invitation")
	})
}

// TestBrowser_DashboardMode: the data a page shows is what the workspace
// can have, and the switch is in every page's frame. Unverified, the pages
// show its test data with a Test pill that agrees with the banner, and no
// way to live data; verified, live data, and the switch goes to test data
// and back to the same page (issue 21, point 2).
func TestBrowser_DashboardMode(t *testing.T) {
	st := storetest.SQLite(t)
	e := newEnv(t, st)
	ws, keys := e.newWorkspace("Boutique Nouvelle", false)
	addUser(t, st, "awa@example.com", "correct horse battery", ws.ID)
	e.mustSession(keys["test_secret"], map[string]any{"amount": 5000, "customer_name": "Awa Essai"})
	ctx := browser(t)
	text := func(sel string) string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(sel)))
		if err != nil {
			t.Fatalf("#%s: %v", sel, err)
		}
		return got
	}
	exists := func(sel string) bool {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById("`+sel+`")`))
		return got
	}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(360, 640),
		chromedp.Navigate(e.url+"/dashboard/login"),
		signIn("awa@example.com", "correct horse battery"),
		chromedp.WaitVisible(chromedp.ID("nav-transactions")),
		chromedp.Navigate(e.url+"/dashboard/transactions"),
		chromedp.WaitVisible(chromedp.ID("transactions")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "dashboard-mode-unverified")
	pill := func(want string) bool { return strings.EqualFold(text("mode"), want) } // shown in capitals
	if !pill("Test") || !exists("unverified") || !exists("live-after-verification") || exists("show-live") ||
		!strings.Contains(text("transactions"), "Awa Essai") {
		t.Fatalf("unverified: pill %q, banner %v, switch to live %v; rows %q; want Test, the banner, no way to live data, the test payment",
			text("mode"), exists("unverified"), exists("show-live"), text("transactions"))
	}

	if _, err := st.VerifyWorkspace(context.Background(), ws.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.mustSession(keys["live_secret"], map[string]any{"amount": 7000, "customer_name": "Kofi Réel"})
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("transactions"))); err != nil {
		t.Fatal(err)
	}
	if rows := text("transactions"); !pill("Live") || exists("unverified") || !exists("show-test") ||
		!strings.Contains(rows, "Kofi Réel") || strings.Contains(rows, "Awa Essai") {
		t.Fatalf("verified: pill %q, rows %q; want Live, the live payment only, and a switch to test data", text("mode"), rows)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("show-test")), chromedp.WaitVisible(chromedp.ID("show-live"))); err != nil {
		t.Fatal(err)
	}
	url, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	screenshot(t, ctx, "dashboard-mode-test")
	if rows := text("transactions"); url != "/dashboard/transactions" || !pill("Test") || !strings.Contains(rows, "Awa Essai") ||
		strings.Contains(rows, "Kofi Réel") {
		t.Fatalf("after the switch: %s, pill %q, rows %q; want the same page with test data", url, text("mode"), rows)
	}
}

// signIn fills in the sign-in form the page shows and sends it.
func signIn(email, password string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.ID("login")),
			chromedp.SendKeys(chromedp.ID("email"), email),
			chromedp.SendKeys(chromedp.ID("password"), password),
			chromedp.Click(chromedp.ID("sign-in")),
		)
	}
}

// TestBrowser_DashboardLinkShare creates a link with its controls on the
// dashboard's links page and opens its share sheet, in Chromium: the row
// shows the limit, the expiry and the number; the QR code is drawn, the
// PNG is served, the copy button copies the address, WhatsApp and SMS
// carry it.
func TestBrowser_DashboardLinkShare(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, _ := e.newWorkspace("Chez Adjoa", true)
		e.addSimulatedGateway(ws, "SN")
		addUser(t, st, "adjoa@example.com", "correct horse battery", ws.ID)
		ctx := browser(t)
		expires := e.clock.Now().UTC().Add(24 * time.Hour).Format("2006-01-02T15:04")
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard"),
			signIn("adjoa@example.com", "correct horse battery"),
			chromedp.WaitVisible(chromedp.ID("nav-links")),
			chromedp.Navigate(e.url+"/dashboard/links"),
			chromedp.WaitVisible(chromedp.ID("new-link")),
			chromedp.SendKeys(chromedp.ID("link-title"), "Loyer"),
			chromedp.SendKeys(chromedp.ID("link-amount"), "75000"),
			chromedp.SetValue(chromedp.ID("link-expires"), expires),
			chromedp.SendKeys(chromedp.ID("link-max"), "1"),
			chromedp.SendKeys(chromedp.ID("link-phone"), "+221 77 123 45 67"),
		)
		if err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("create-link"))
		row, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("links")))
		if err != nil || !strings.Contains(row, "Loyer") || !strings.Contains(row, "0 / 1") || !strings.Contains(row, strings.Replace(expires, "T", " ", 1)+" UTC") ||
			!strings.Contains(row, "Only from +221771234567") {
			t.Fatalf("the link's row = %q, %v", row, err)
		}
		links, _ := st.Links(context.Background(), ws.ID, store.LinkPage{Limit: 1})
		if len(links) != 1 {
			t.Fatalf("links = %v", links)
		}
		address := e.url + "/pay/l/" + links[0].Slug
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("details.share summary")), chromedp.WaitVisible(chromedp.CSS("img.qr"))); err != nil {
			t.Fatal(err)
		}
		var drawn bool
		for deadline := time.Now().Add(10 * time.Second); !drawn && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			drawn, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const i = document.querySelector("img.qr"); return i.complete && i.naturalWidth > 0; })()`))
		}
		screenshot(t, ctx, "dashboard-link-share")
		if !drawn {
			t.Fatal("the QR code is not drawn")
		}
		hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`["a.whatsapp", "a.sms", "a.png"].map(s => document.querySelector(s).getAttribute("href"))`))
		if err != nil || len(hrefs) != 3 {
			t.Fatalf("share addresses = %q, %v", hrefs, err)
		}
		for i, prefix := range []string{"https://wa.me/?text=", "sms:?&body="} {
			text, err := url.PathUnescape(strings.TrimPrefix(hrefs[i], prefix))
			if !strings.HasPrefix(hrefs[i], prefix) || err != nil || text != "Loyer "+address {
				t.Errorf("share address %q carries %q, %v; want %q", hrefs[i], text, err, "Loyer "+address)
			}
		}
		if !strings.HasSuffix(hrefs[2], "/dashboard/links/"+links[0].ID+"/qr?format=png") {
			t.Errorf("the PNG's address = %q", hrefs[2])
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`fetch(document.querySelector("a.png").href).then(r => { window.png = r.status + " " + r.headers.get("content-type"); }), true`)); err != nil {
			t.Fatal(err)
		}
		var png string
		for deadline := time.Now().Add(10 * time.Second); png == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			png, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`window.png || ""`))
		}
		if png != "200 image/png" {
			t.Fatalf("the PNG = %q", png)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("button.copy")), chromedp.WaitVisible(chromedp.CSS(`button.copy[data-copied="1"]`))); err != nil {
			t.Fatalf("copy: %v", err)
		}
		if copied, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("button.copy"))); copied != "Copied" {
			t.Fatalf("the copy button says %q after copying", copied)
		}
	})
}

// TestBrowser_DashboardRefund shows a test payment's details and refunds
// it from its page in Chromium, in two parts: a refusal (more than is left) shows on the page;
// a part is listed succeeded, the session still SUCCESS; the rest makes it
// REFUNDED and takes the form away; the export says REFUNDED.
func TestBrowser_DashboardRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		id := e.mustSession(e.keys["test_secret"], map[string]any{"amount": 10000, "customer_name": "Awa Diop", "customer_phone": "+221771234567",
			"customer_email": "awa.diop@example.com", "description": "Deux pagnes wax", "metadata": map[string]string{"order_id": "A-42", "channel": "whatsapp"}})
		e.settle(id, "succes")
		addUser(t, st, "adjoa@example.com", "correct horse battery", e.ws.ID)
		ctx := browser(t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard"),
			signIn("adjoa@example.com", "correct horse battery"),
			chromedp.WaitVisible(chromedp.ID("workspace")),
			chromedp.Click(chromedp.CSS(`input[name="mode"][value="test"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("select"))
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/transactions/"+id), chromedp.WaitVisible(chromedp.ID("refund-form"))); err != nil {
			t.Fatal(err)
		}
		// The transaction's details, on a phone's screen.
		details, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`["tx-customer", "tx-phone", "tx-description", "tx-completed"].map(id => document.getElementById(id).textContent)`))
		if err != nil || strings.Join(details, "|") != "Awa Diop|+221771234567|Deux pagnes wax|22 Nov 2026, 10:00 UTC" {
			t.Fatalf("details = %q, %v", details, err)
		}
		if md, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("metadata"))); !strings.Contains(md, "channel\twhatsapp") || !strings.Contains(md, "order_id\tA-42") {
			t.Fatalf("metadata = %q", md)
		}
		if out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowing)); err != nil || len(out) > 0 {
			t.Errorf("the transaction on a 360-px screen: %v stick out of the page, %v", out, err)
		}
		screenshot(t, ctx, "dashboard-transaction")
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("refund-amount"), "10001")); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("refund"))
		refusal, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error")))
		if err != nil || !strings.Contains(refusal, "exceeds") {
			t.Fatalf("refusal = %q, %v", refusal, err)
		}
		err = chromedp.Do(ctx, // the page came back with an empty form
			chromedp.WaitVisible(chromedp.ID("refund-form")),
			chromedp.SendKeys(chromedp.ID("refund-amount"), "4000"),
			chromedp.SendKeys(chromedp.ID("refund-reason"), "Un article rendu"),
		)
		if err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, chromedp.ID("refund"))
		rows, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("refunds")))
		if err != nil || !strings.Contains(rows, "succeeded") || !strings.Contains(rows, "Un article rendu") || !strings.Contains(rows, "4\u202f000 XOF") {
			t.Fatalf("refunds after a part = %q, %v", rows, err)
		}
		if status, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("tx-status"))); status != "SUCCESS" {
			t.Fatalf("status after a part = %q; want SUCCESS", status)
		}
		submit(t, ctx, chromedp.ID("refund")) // empty amount: the rest
		screenshot(t, ctx, "dashboard-refund")
		if status, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("tx-status"))); status != "REFUNDED" {
			t.Fatalf("status after the rest = %q; want REFUNDED", status)
		}
		if forms, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#refund-form").length`)); forms != 0 {
			t.Fatal("the refund form is still shown with nothing left to refund")
		}
		export, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/v1/transactions/export?status=REFUNDED").then(r => r.text())`,
			chromedp.EvalAwaitPromise))
		if err != nil || !strings.Contains(export, id+",") || !strings.Contains(export, ",REFUNDED,") {
			t.Fatalf("export of REFUNDED = %q, %v", export, err)
		}
	})
}
