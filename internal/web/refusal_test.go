package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowser_RefusalInTheCustomersWords: a live payment refused by the
// aggregator (pawaPay's simulator) shows, after the failure, why in the
// customer's words and language (not pawaPay's code), with the same
// method and number for another try; the attempt keeps pawaPay's words for
// the merchant. In French on a 360x640 screen in Dakar, for want of funds
// (...0049: INSUFFICIENT_BALANCE once settled); in English on a 390x844
// screen in Abidjan, for want of funds, then for a number refused at
// initiation (...0039: INVALID_PHONE_NUMBER, the page shown again by its
// script).
func TestBrowser_RefusalInTheCustomersWords(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	g, sim, _ := e.addSimulatedGateway(ws, "SN", "CI")
	sim.SettleAfter = 300 * time.Millisecond
	e.runClock(t)
	// open shows a new session for the customer's number on a screen of
	// this size in this language; pay pays it with the preselected method
	// and waits for the failure; read is what the page says then.
	type after struct{ failure, method, phone string }
	open := func(t *testing.T, width, height int64, lang, number string) (context.Context, string) {
		ctx := browser(t)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}}); err != nil {
			t.Fatal(err)
		}
		id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000, "description": "Commande 1042", "customer_phone": number})
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/pay/"+id), chromedp.WaitVisible(chromedp.ID("pay-button"))); err != nil {
			t.Fatal(err)
		}
		return ctx, id
	}
	read := func(t *testing.T, ctx context.Context) after {
		t.Helper()
		out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.getElementById("last-failure").textContent.trim(),
			document.querySelector("input[name=method]:checked").value, document.getElementById("phone").value]`))
		if err != nil || len(out) != 3 {
			t.Fatalf("reading the page: %v, %v", out, err)
		}
		return after{out[0], out[1], out[2]}
	}
	pay := func(t *testing.T, ctx context.Context) after {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pay-button")), chromedp.WaitVisible(chromedp.ID("last-failure"))); err != nil {
			said, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("result")))
			t.Fatalf("waiting for the failure: %v; the page says %q", err, said)
		}
		return read(t, ctx)
	}
	onScreen := func(t *testing.T, ctx context.Context) {
		t.Helper()
		box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function () { var r = document.getElementById("last-failure").getBoundingClientRect();
			return [r.left, r.right, innerWidth, document.documentElement.scrollWidth]; })()`))
		if err != nil || len(box) != 4 || box[0] < 0 || box[1] > box[2] || box[3] > box[2] {
			t.Errorf("the failure's box (left, right, screen width, page width) = %v, %v; want it within the screen, no sideways scroll", box, err)
		}
	}
	rawKept := func(t *testing.T, id, code string) {
		t.Helper()
		a, err := e.store.Attempts(context.Background(), id)
		if err != nil || len(a) == 0 || a[0].Status != cauri.AttemptFailed || !strings.HasPrefix(a[0].Reason, code) {
			t.Errorf("the attempt = %+v, %v; want it failed with pawaPay's %s kept for the merchant", a, err, code)
		}
	}

	t.Run("French360", func(t *testing.T) {
		ctx, id := open(t, 360, 640, "fr-SN,fr;q=0.9", "+221 77 123 00 49")
		got := pay(t, ctx)
		screenshot(t, ctx, "refusal-fr-360x640")
		if !strings.HasPrefix(got.failure, "Solde insuffisant") || !strings.Contains(got.failure, "Rechargez") || strings.Contains(got.failure, "INSUFFICIENT") {
			t.Errorf("after the failure the page says %q; want the customer's words in French, not pawaPay's code", got.failure)
		}
		if got.method != g.ID+"|ORANGE_SEN" || got.phone != "+221771230049" {
			t.Errorf("method, number after the failure = %q, %q; want Orange Money Senegal and +221771230049 kept", got.method, got.phone)
		}
		onScreen(t, ctx)
		rawKept(t, id, "INSUFFICIENT_BALANCE")
	})

	t.Run("English390", func(t *testing.T) {
		ctx, id := open(t, 390, 844, "en-GB,en;q=0.9", "+225 05 05 12 00 49")
		got := pay(t, ctx)
		screenshot(t, ctx, "refusal-en-390x844")
		if !strings.HasPrefix(got.failure, "Not enough money") || !strings.Contains(got.failure, "Top up") || strings.Contains(got.failure, "INSUFFICIENT") {
			t.Errorf("after the failure the page says %q; want the customer's words in English, not pawaPay's code", got.failure)
		}
		if got.method != g.ID+"|MTN_MOMO_CIV" || got.phone != "+2250505120049" {
			t.Errorf("method, number after the failure = %q, %q; want MTN Côte d'Ivoire and +2250505120049 kept", got.method, got.phone)
		}
		onScreen(t, ctx)
		rawKept(t, id, "INSUFFICIENT_BALANCE")
		// Another number, refused by pawaPay at once: the script shows the
		// page again, which says why.
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("phone"), "+2250505120039")); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pay-button")), chromedp.WaitVisible(chromedp.ID("last-failure"))); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for got = read(t, ctx); !strings.HasPrefix(got.failure, "No Mobile Money account") && time.Now().Before(deadline); got = read(t, ctx) {
			time.Sleep(100 * time.Millisecond)
		}
		screenshot(t, ctx, "refusal-en-wrong-number")
		if !strings.HasPrefix(got.failure, "No Mobile Money account") || strings.Contains(got.failure, "INVALID_PHONE_NUMBER") {
			t.Errorf("after a number refused at initiation the page says %q; want the customer's words", got.failure)
		}
		if got.phone != "+2250505120039" {
			t.Errorf("number after the refusal = %q; want +2250505120039 kept", got.phone)
		}
		rawKept(t, id, "INVALID_PHONE_NUMBER")
	})
}

// TestLivePage_RefusalWithoutScript: without JavaScript, a payment pawaPay
// refuses at initiation (...0039: INVALID_PHONE_NUMBER) answers the page
// with why in the customer's words (French here), the method and number
// kept, and not pawaPay's words.
func TestLivePage_RefusalWithoutScript(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Chez Adjoa", true)
	g, _, _ := e.addSimulatedGateway(ws, "SN")
	id := e.mustSession(keys["live_public"], map[string]any{"amount": 15000})
	form := url.Values{"method": {g.ID + "|WAVE_SEN"}, "phone": {"+221761230039"}}
	req, _ := http.NewRequest("POST", e.url+"/pay/"+id, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "fr-SN,fr;q=0.9")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	if got, want := res.StatusCode, 502; got != want {
		t.Fatalf("refused payment = %d; want %d:\n%s", got, want, page)
	}
	if !strings.Contains(page, `id="last-failure"`) || !strings.Contains(page, "Aucun compte Mobile Money") ||
		strings.Contains(page, "INVALID_PHONE_NUMBER") || strings.Contains(page, `id="error"`) {
		t.Errorf("the page does not say why in the customer's words, or shows pawaPay's:\n%s", page)
	}
	if !regexp.MustCompile(`value="`+regexp.QuoteMeta(g.ID)+`\|WAVE_SEN"[^>]*checked`).MatchString(page) ||
		!regexp.MustCompile(`id="phone"[^>]*value="[^"]*221761230039"`).MatchString(page) {
		t.Errorf("the method or the number is not kept:\n%s", page)
	}
}
