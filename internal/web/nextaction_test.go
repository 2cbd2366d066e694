package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/flutterwave"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
)

// nextOf is an answer's nextAction, or nil.
func nextOf(r response) map[string]any {
	n, _ := r.body["nextAction"].(map[string]any)
	return n
}

// TestNextAction holds each customer step the aggregators require to what
// the hosted page's routes answer: a code obtained before paying (pawaPay,
// Orange Burkina Faso), the aggregator's page (Wave through pawaPay,
// Flutterwave Uganda), a voucher sent after initiation (Paystack, Telecel
// Ghana) and the aggregator's instructions (Paystack, MTN Ghana).
func TestNextAction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Abidjan-Accra shop", true)
		initiate := func(body map[string]string) response { return e.do("POST", "/checkout/initiate", body) }

		t.Run("CodeBeforePaying", func(t *testing.T) {
			g, _, simURL := e.addSimulatedGateway(ws, "BF")
			id := e.mustSession(keys["live_public"], `{"amount": 1500}`)
			page := e.do("GET", "/pay/"+id, nil, "Accept-Language", "fr")
			if !strings.Contains(page.raw, `data-preauth="`) || !strings.Contains(page.raw, "*144*4*6#") || !strings.Contains(page.raw, `id="authcode"`) {
				t.Fatalf("the page does not say how to get Orange Burkina's code:\n%s", page.raw)
			}
			wantError(t, initiate(map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "ORANGE_BFA", "phone": "70 12 34 56"}), 400, "payment code")
			wantError(t, initiate(map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "ORANGE_BFA", "phone": "70 12 34 56",
				"authCode": strings.Repeat("9", 33)}), 400, "longer than 32")
			r := initiate(map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "ORANGE_BFA", "phone": "70 12 34 56", "authCode": " 482 913 "})
			if r.status != 200 || nextOf(r)["type"] != "approve" {
				t.Fatalf("initiate with the code = %d %s; want a payment waiting for approval", r.status, r.raw)
			}
			attempts, _ := st.Attempts(ctx, id)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
			if v := e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}); v.str("status") != "SUCCESS" || nextOf(v) != nil {
				t.Fatalf("verify = %s; want SUCCESS and no next action", v.raw)
			}
		})

		t.Run("AggregatorPage", func(t *testing.T) {
			g, _, _ := e.addSimulatedGateway(ws, "SN")
			id := e.mustSession(keys["live_public"], `{"amount": 2000}`)
			r := initiate(map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "77 123 45 67"})
			next := nextOf(r)
			if r.status != 200 || next["type"] != "redirect" || !strings.Contains(next["url"].(string), "/_sim/pay/") || r.str("redirectUrl") != next["url"] {
				t.Fatalf("initiate through Wave = %d %s; want Wave's page", r.status, r.raw)
			}
			if v := e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}); nextOf(v)["url"] != next["url"] {
				t.Fatalf("verify = %s; want the same page", v.raw)
			}
			if page := e.do("GET", "/pay/"+id, nil); !strings.Contains(page.raw, `id="continue" href="`+next["url"].(string)+`"`) {
				t.Fatalf("the waiting page has no link to Wave's page:\n%s", page.raw)
			}

			fw, _ := e.addGateway(ws, "flutterwave", &flutterwave.Simulator{SecretKey: "FLWSECK", SecretHash: "h"},
				map[string]string{"secret_key": "FLWSECK", "secret_hash": "h"}, "UG")
			ug := e.mustSession(keys["live_public"], `{"amount": 20000, "currency": "UGX"}`)
			r = initiate(map[string]string{"transactionId": ug, "gatewayId": fw.ID, "code": "MTN", "phone": "0772 123456"})
			if next := nextOf(r); r.status != 200 || next["type"] != "redirect" || next["url"] == "" {
				t.Fatalf("initiate through Flutterwave Uganda = %d %s; want Flutterwave's page", r.status, r.raw)
			}
		})

		t.Run("CodeAfterInitiation", func(t *testing.T) {
			sim := &paystack.Simulator{SecretKey: "sk_live_sim"}
			g, simURL := e.addGateway(ws, "paystack", sim, map[string]string{"secret_key": "sk_live_sim"}, "GH")
			pay := func() (string, response) {
				id := e.mustSession(keys["live_public"], `{"amount": 40, "currency": "GHS", "customer_email": "ama@example.com"}`)
				return id, initiate(map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "vod", "phone": "020 123 4567"})
			}
			id, r := pay()
			next := nextOf(r)
			if r.status != 200 || next["type"] != "enter_code" || !strings.Contains(next["instructions"].(string), "*110#") {
				t.Fatalf("initiate through Telecel = %d %s; want a voucher asked for, with Paystack's words", r.status, r.raw)
			}
			page := e.do("GET", "/pay/"+id, nil)
			if !strings.Contains(page.raw, `id="code-form"`) || !strings.Contains(page.raw, "*110#") || strings.Contains(page.raw, `http-equiv="refresh"`) {
				t.Fatalf("the waiting page asks no code (or reloads under the customer's fingers):\n%s", page.raw)
			}
			wantError(t, e.do("POST", "/checkout/code", map[string]string{"transactionId": id, "code": " "}), 400, "code is required")
			wantError(t, e.do("POST", "/checkout/code", map[string]string{"transactionId": id, "code": strings.Repeat("1", 33)}), 400, "longer than 32")
			wantError(t, e.do("POST", "/checkout/code", map[string]string{"transactionId": "cs_nope", "code": "123456"}), 404, "")
			c := e.do("POST", "/checkout/code", map[string]string{"transactionId": id, "code": "123456"})
			if c.status != 200 || c.str("status") != "PENDING" || nextOf(c)["type"] != "approve" {
				t.Fatalf("code = %d %s; want the payment waiting for approval", c.status, c.raw)
			}
			wantError(t, e.do("POST", "/checkout/code", map[string]string{"transactionId": id, "code": "123456"}), 409, "waiting for a code")
			attempts, _ := st.Attempts(ctx, id)
			if attempts[0].NeedsCode {
				t.Fatalf("attempt after the code = %+v; want no code asked any more", attempts[0])
			}
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
			e.clock.Add(9 * time.Second)
			if v := e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}); v.str("status") != "SUCCESS" {
				t.Fatalf("verify = %s; want SUCCESS", v.raw)
			}
			// Paystack's wrong voucher fails the payment; the customer may try again.
			wrong, _ := pay()
			if c := e.do("POST", "/checkout/code", map[string]string{"transactionId": wrong, "code": "000000"}); c.status != 200 || c.str("status") != "FAILED" {
				t.Fatalf("a wrong voucher = %d %s; want the payment failed", c.status, c.raw)
			}

			// MTN: the customer approves, with Paystack's instructions shown.
			mtn := e.mustSession(keys["live_public"], `{"amount": 40, "currency": "GHS", "customer_email": "ama@example.com"}`)
			r = initiate(map[string]string{"transactionId": mtn, "gatewayId": g.ID, "code": "mtn", "phone": "024 123 4567"})
			if next := nextOf(r); r.status != 200 || next["type"] != "approve" || next["instructions"] == nil {
				t.Fatalf("initiate through MTN = %d %s; want an approval with Paystack's instructions", r.status, r.raw)
			}
			if page := e.do("GET", "/pay/"+mtn, nil); !strings.Contains(page.raw, `id="instructions"`) {
				t.Fatalf("the waiting page does not show Paystack's instructions:\n%s", page.raw)
			}
			wantError(t, e.do("POST", "/checkout/code", map[string]string{"transactionId": mtn, "code": "123456"}), 409, "waiting for a code")
		})
	})
}

// TestBrowser_NextActions goes through each customer step in Chromium on a
// small phone's screen (360x640): a code before paying, a voucher after
// initiation, Wave's page through pawaPay.
func TestBrowser_NextActions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Chez Ama", true)
		e.runClock(t)
		small := func(t *testing.T) context.Context {
			ctx := browser(t)
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 640)); err != nil {
				t.Fatal(err)
			}
			return ctx
		}

		t.Run("CodeBeforePaying", func(t *testing.T) {
			g, sim, _ := e.addSimulatedGateway(ws, "BF")
			sim.SettleAfter = 300 * time.Millisecond
			ctx := small(t)
			id := e.mustSession(keys["live_public"], `{"amount": 1500}`)
			if err := chromedp.Do(ctx,
				chromedp.Navigate(e.url+"/pay/"+id),
				chromedp.WaitVisible(chromedp.ID("pay-button")),
				chromedp.WaitNotVisible(chromedp.ID("authcode")), // Moov first: no code
				chromedp.Click(chromedp.CSS(`input[name=method][value="`+g.ID+`|ORANGE_BFA"]`)),
				chromedp.WaitVisible(chromedp.ID("authcode")),
				chromedp.SendKeys(chromedp.ID("phone"), "70 12 34 56"),
				chromedp.SendKeys(chromedp.ID("authcode"), "482913"),
			); err != nil {
				t.Fatal(err)
			}
			help, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("authcode-help")))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(help, "*144*4*6#") || !strings.Contains(help, "1500") {
				t.Fatalf("help = %q; want how to get the code, with the amount", help)
			}
			screenshot(t, ctx, "next-preauth")
			if err := chromedp.Do(ctx,
				chromedp.Click(chromedp.ID("pay-button")),
				chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`)),
			); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("CodeAfterInitiation", func(t *testing.T) {
			sim := &paystack.Simulator{SecretKey: "sk_live_sim"}
			g, simURL := e.addGateway(ws, "paystack", sim, map[string]string{"secret_key": "sk_live_sim"}, "GH")
			ctx := small(t)
			id := e.mustSession(keys["live_public"], `{"amount": 40, "currency": "GHS", "customer_email": "ama@example.com"}`)
			if err := chromedp.Do(ctx,
				chromedp.Navigate(e.url+"/pay/"+id),
				chromedp.WaitVisible(chromedp.ID("pay-button")),
				chromedp.Click(chromedp.CSS(`input[name=method][value="`+g.ID+`|vod"]`)),
				chromedp.SendKeys(chromedp.ID("phone"), "020 123 4567"),
				chromedp.Click(chromedp.ID("pay-button")),
				chromedp.WaitVisible(chromedp.ID("otp")),
			); err != nil {
				t.Fatal(err)
			}
			instructions, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("instructions")))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(instructions, "*110#") {
				t.Fatalf("instructions = %q; want Paystack's words", instructions)
			}
			screenshot(t, ctx, "next-voucher")
			if err := chromedp.Do(ctx,
				chromedp.SendKeys(chromedp.ID("otp"), "123456"),
				chromedp.Click(chromedp.ID("code-button")),
				chromedp.WaitNotPresent(chromedp.ID("otp")),
				chromedp.WaitVisible(chromedp.ID("waiting-notice")), // now: approve on the phone
			); err != nil {
				t.Fatal(err)
			}
			screenshot(t, ctx, "next-approve")
			attempts, _ := st.Attempts(context.Background(), id)
			gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
			if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`))); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("AggregatorPage", func(t *testing.T) {
			g, _, _ := e.addSimulatedGateway(ws, "SN")
			ctx := small(t)
			id := e.mustSession(keys["live_public"], `{"amount": 2000}`)
			if err := chromedp.Do(ctx,
				chromedp.Navigate(e.url+"/pay/"+id),
				chromedp.WaitVisible(chromedp.ID("pay-button")),
				// The workspace serves three countries and the browser's
				// language names none: Senegal's operators are under its tab.
				chromedp.Click(chromedp.CSS(`input[name=country][value=SN]`)),
				chromedp.Click(chromedp.CSS(`input[name=method][value="`+g.ID+`|WAVE_SEN"]`)),
				chromedp.SendKeys(chromedp.ID("phone"), "77 123 45 67"),
				chromedp.Click(chromedp.ID("pay-button")),
				chromedp.WaitVisible(chromedp.ID("sim-pay")), // Wave's page
				chromedp.Click(chromedp.ID("sim-pay")),
				chromedp.WaitVisible(chromedp.CSS(`#status[data-status="SUCCESS"]`)), // back, followed
			); err != nil {
				t.Fatal(err)
			}
			if s, _ := st.Session(context.Background(), id); s.Status != cauri.SessionSuccess {
				t.Fatalf("session after Wave's page = %s", s.Status)
			}
		})
	})
}
