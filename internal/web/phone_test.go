package web

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowser_PhoneScreens shows every state of the customer's pages on
// the two phone screens of issue 21 (360x640 in French, as in Dakar;
// 390x844 in English) and checks the layout's rules there: nothing sticks
// out sideways, and where the customer pays (the checkout page, test or
// live, a failed try's page, the link page) the button shows without
// scrolling. Each state is kept as two PNGs, what the screen shows and the
// whole page, in CAURI_SCREENSHOTS when set (else a temporary folder), for
// a person to look at.
func TestBrowser_PhoneScreens(t *testing.T) {
	dir := os.Getenv("CAURI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, size := range []struct {
		w, h int64
		lang string
		// plain: a language that names no country
		plain string
	}{{360, 640, "fr-SN,fr;q=0.9", "fr"}, {390, 844, "en-GB,en;q=0.9", "en"}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			phoneScreens(t, dir, size.w, size.h, size.lang, size.plain)
		})
	}
}

func phoneScreens(t *testing.T, dir string, width, height int64, lang, plain string) {
	e := newEnv(t, storetest.SQLite(t))
	ws, keys := e.newWorkspace("Boutique Chez Adjoa", true)
	g, _, simURL := e.addSimulatedGateway(ws, "SN", "CI")
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	speak := func(lang string) {
		t.Helper()
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}}); err != nil {
			t.Fatal(err)
		}
	}
	speak(lang)
	size := fmt.Sprintf("%dx%d", width, height)
	session := func(body map[string]any) string {
		t.Helper()
		body["amount"], body["description"] = 15000, "Commande n° 1042 · 2 pagnes wax"
		return e.mustSession(keys["live_public"], body)
	}
	// initiate sends a payment of a new session to number by method code;
	// settle has the simulator end it (as the number says) and the
	// service read it.
	initiate := func(code, number string) (id, ref string) {
		t.Helper()
		id = session(map[string]any{"customer_phone": number})
		if r := e.do("POST", "/checkout/initiate", map[string]any{"transactionId": id, "gatewayId": g.ID, "code": code, "phone": number}); r.status != 200 {
			t.Fatalf("initiate = %d %s", r.status, r.raw)
		}
		a, err := e.store.Attempts(context.Background(), id)
		if err != nil || len(a) != 1 {
			t.Fatalf("attempts = %v, %v", a, err)
		}
		return id, a[0].Reference
	}
	settle := func(id, ref string) {
		t.Helper()
		gatewaytest.Control(t, simURL, "/_sim/settle/"+ref)
		e.clock.Add(9 * time.Second) // the page asks the aggregator at most every 8 s
		wantStatus(t, e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}), 200)
	}
	// show opens path, waits for want, checks the layout, keeps the
	// pictures, and answers what the page says.
	show := func(name, path, want, button string) string {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+path), chromedp.WaitVisible(chromedp.ID(want))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// What sticks out sideways, and where the button's bottom is.
		type layout struct {
			Wide   []string
			Page   float64
			Screen float64
			Bottom float64
			Text   string
		}
		out, err := chromedp.Run(ctx, chromedp.Evaluate[layout](`(function () {
			var wide = [];
			document.querySelectorAll("body *").forEach(function (el) {
				var r = el.getBoundingClientRect();
				if (r.width > 0 && (r.right > innerWidth + 0.5 || r.left < -0.5)) wide.push(el.tagName + (el.id ? "#" + el.id : "") + " " + Math.round(r.left) + "-" + Math.round(r.right));
			});
			var b = `+"`"+button+"`"+` && document.getElementById(`+"`"+button+"`"+`);
			return {Wide: wide, Page: document.documentElement.scrollWidth, Screen: innerWidth,
				Bottom: b ? b.getBoundingClientRect().bottom : -1, Text: document.body.innerText};
		})()`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(out.Wide) > 0 || out.Page > out.Screen {
			t.Errorf("%s at %s: the page is %v px wide on a %v-px screen; sticking out: %v", name, size, out.Page, out.Screen, out.Wide)
		}
		if button != "" && (out.Bottom < 0 || out.Bottom > float64(height)) {
			t.Errorf("%s at %s: #%s ends at %v px, below the %d-px screen (or missing)", name, size, button, out.Bottom, height)
		}
		keep(t, ctx, dir, name+"-"+size)
		return out.Text
	}

	// The checkout page: a test session, then a live one with the
	// methods of two countries, for a customer whose number is known
	// (Dakar) and for one whose number is not.
	test := e.mustSession(e.keys["test_public"], map[string]any{"amount": 15000, "description": "Commande n° 1042", "merchant_name": "Boutique Chez Adjoa"})
	show("checkout-test", "/pay/"+test, "simulate-success", "simulate-failure")
	show("checkout-live-known", "/pay/"+session(map[string]any{"customer_phone": "+221 77 123 45 67"}), "pay-button", "pay-button")
	show("checkout-live-unknown", "/pay/"+session(map[string]any{}), "pay-button", "pay-button")

	// The payment link's page.
	l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Atelier couture", "amount": 7500}, bearer(keys["live_secret"])...)
	u, err := url.Parse(l.str("url"))
	if err != nil || l.status != 200 {
		t.Fatalf("link = %d %s", l.status, l.raw)
	}
	show("link", u.Path, "link-pay", "pay-button")

	// A customer with no number whose language names no country ("fr",
	// "en"): the page cannot tell Senegal from Côte d'Ivoire, and both
	// countries' operators are to be found, the Pay button still on the
	// screen.
	speak(plain)
	said := show("checkout-live-nocountry", "/pay/"+session(map[string]any{}), "pay-button", "pay-button")
	saidLink := show("link-nocountry", u.Path, "link-pay", "pay-button")
	for _, s := range []string{said, saidLink} {
		if !strings.Contains(s, "Orange Money") {
			t.Errorf("with no country known the page says %q; want the operators", s)
		}
	}
	// Opening Senegal's tab shows its operators, the first chosen, and
	// hides Côte d'Ivoire's.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=country][value=SN]`))); err != nil {
		t.Fatal(err)
	}
	keep(t, ctx, dir, "link-nocountry-senegal-"+size)
	if out, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector("input[name=method]:checked").closest("label").textContent.trim(),
		Array.from(document.querySelectorAll(".method")).filter(function (m) { return m.offsetParent; }).map(function (m) { return m.textContent.trim(); }).join(", ")]`)); len(out) != 2 ||
		!strings.Contains(out[0], "Mixx") || strings.Contains(out[1], "Ivoire") || !strings.Contains(out[1], "Wave") {
		t.Errorf("after opening Senegal's tab: chosen, shown = %q; want Mixx chosen, Senegal's operators alone", out)
	}
	// Without JavaScript the tabs are the style sheet's: the method chosen
	// stays in sight until the customer chooses one of the tab opened.
	noScript := func(off bool) {
		t.Helper()
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off}); err != nil {
			t.Fatal(err)
		}
	}
	noScript(true)
	shown := func() string {
		t.Helper()
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".method")).filter(function (m) { return m.offsetParent; }).map(function (m) { return m.textContent.trim(); }).join(", ")`))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+u.Path), chromedp.WaitVisible(chromedp.ID("pay-button")),
		chromedp.Click(chromedp.CSS(`input[name=country][value=SN]`))); err != nil {
		t.Fatal(err)
	}
	if s := shown(); strings.Count(s, "Ivoire") != 1 || !strings.Contains(s, "MTN") || !strings.Contains(s, "Mixx") {
		t.Errorf("without JavaScript, Senegal's tab open: shown = %q; want MTN (still chosen) and Senegal's operators", s)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=method][value$="|WAVE_SEN"]`))); err != nil {
		t.Fatal(err)
	}
	if s := shown(); strings.Contains(s, "Ivoire") || strings.Count(s, "Sénégal")+strings.Count(s, "Senegal") != 3 {
		t.Errorf("without JavaScript, Wave Senegal chosen: shown = %q; want Senegal's operators alone", s)
	}
	noScript(false)
	speak(lang)

	// The waiting screen: operator, number, countdown, what to do without
	// a prompt; once the countdown is over, send again or switch.
	waiting, _ := initiate("ORANGE_SEN", "+221771234567")
	said = show("waiting", "/pay/"+waiting, "waiting-for", "")
	if !strings.Contains(said, "+221 77 123 45 67") || !strings.Contains(said, "Orange Money") {
		t.Errorf("the waiting screen says %q; want the number and the operator", said)
	}
	e.clock.Add(2 * time.Minute)
	show("waiting-late", "/pay/"+waiting, "resend", "")

	// The receipt of a paid session.
	paid, ref := initiate("ORANGE_SEN", "+221771234568")
	settle(paid, ref)
	show("success-receipt", "/pay/"+paid, "receipt", "")

	// A failed try, for want of funds (...0049): why in the customer's
	// words, the same method and number, send again, another operator,
	// and the Pay button on the screen.
	poor, ref := initiate("ORANGE_SEN", "+221771230049")
	settle(poor, ref)
	said = show("failed-funds", "/pay/"+poor, "last-failure", "pay-button")
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("phone").value`)); v != "+221771230049" || !strings.Contains(said, "Orange Money") {
		t.Errorf("after the failure the number is %q; want +221771230049 kept, Orange Money chosen", v)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#resend, #switch").length`)); n != 2 {
		t.Errorf("after a failure for want of funds: %d of send again and switch operator; want both", n)
	}
	// A failed try for a number no wallet has (...0029): sending the same
	// request again cannot succeed, so it is not offered.
	nobody, ref := initiate("ORANGE_SEN", "+221771230029")
	settle(nobody, ref)
	show("failed-wrong-number", "/pay/"+nobody, "last-failure", "pay-button")
	if out, _ := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.querySelectorAll("#resend").length, document.querySelectorAll("#switch").length,
		document.getElementById("phone").readOnly ? 1 : 0]`)); len(out) != 3 || out[0] != 0 || out[1] != 1 || out[2] != 0 {
		t.Errorf("after a wrong number: send again, switch operator, number read-only = %v; want 0, 1, 0", out)
	}

	// Cancelled by the customer, after the page asked, and expired.
	cancelled := session(map[string]any{})
	show("cancel", "/pay/"+cancelled, "cancel-button", "")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("cancel-button")), chromedp.WaitVisible(chromedp.ID("cancel-yes"))); err != nil {
		t.Fatal(err)
	}
	keep(t, ctx, dir, "cancel-confirm-"+size)
	if box, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("cancel-no").getBoundingClientRect().bottom`)); box <= 0 || box > float64(height) {
		t.Errorf("the cancel confirmation at %s ends at %v px; want it on the screen", size, box)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("cancel-yes")), chromedp.WaitVisible(chromedp.ID("status"))); err != nil {
		t.Fatal(err)
	}
	show("cancelled", "/pay/"+cancelled, "status", "")
	expiring := session(map[string]any{"expires_at": e.clock.Now().Add(time.Hour).Format(time.RFC3339)})
	e.clock.Add(2 * time.Hour)
	show("expired", "/pay/"+expiring, "expired", "")
}

// keep writes what the screen shows (name.png) and the whole page
// (name-full.png) to dir.
func keep(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	seen, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	whole, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	for file, png := range map[string][]byte{name + ".png": seen, name + "-full.png": whole} {
		if err := os.WriteFile(filepath.Join(dir, file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
