package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestConnect: a Connect workspace collects through the platform
// workspace's gateways (not gateways of its own), every live payment that
// succeeds credits its balance once, the ledger stays balanced, and the
// dashboard shows the balance and refuses a gateway of its own.
func TestConnect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		platform, _ := e.newWorkspace("Cauri platform", true)
		pg, _, simURL := e.addSimulatedGateway(platform, "SN")
		shop, keys := e.newWorkspace("Connect shop", true)
		if _, err := st.SetConnect(ctx, shop.ID, true, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		// Without a platform workspace configured, a Connect shop has no live method.
		sess := e.mustSession(keys["live_public"], `{"amount": 1000}`)
		if m := e.do("GET", "/v1/checkout/sessions/"+sess+"/methods", nil, bearer(keys["live_public"])...); strings.Contains(m.raw, pg.ID) {
			t.Fatalf("methods without a platform = %s", m.raw)
		}
		e.srv.Checkout.Platform = platform.ID
		if m := e.do("GET", "/v1/checkout/sessions/"+sess+"/methods", nil, bearer(keys["live_public"])...); !strings.Contains(m.raw, pg.ID) {
			t.Fatalf("methods = %s; want the platform's gateway", m.raw)
		}
		e.payLive(keys["live_public"], pg.ID, simURL, 5000, "771234567")
		e.payLive(keys["live_public"], pg.ID, simURL, 2500, "771234568")
		e.payLive(keys["live_public"], pg.ID, simURL, 9999, "771230029") // fails
		if b, err := st.Balance(ctx, shop.ID); err != nil || b["XOF"] != 7500 {
			t.Fatalf("balance = %v, %v; want 7500 XOF", b, err)
		}
		if b, _ := st.Balance(ctx, platform.ID); len(b) != 0 {
			t.Fatalf("the platform workspace has a balance: %v", b)
		}
		if sums, unbalanced, err := st.LedgerSums(ctx); err != nil || sums["XOF"] != 0 || unbalanced != 0 {
			t.Fatalf("ledger = %v, %d, %v", sums, unbalanced, err)
		}

		addUser(t, st, "connect@example.com", "correct horse battery", shop.ID)
		b := e.newBrowserish()
		b.login("connect@example.com", "correct horse battery")
		if _, body := b.get("/dashboard"); !strings.Contains(section(t, body, "balance", "strong"), "7\u202f500 XOF") {
			t.Fatalf("the overview's balance: %s", section(t, body, "figures", "section"))
		}
		if _, body := b.get("/dashboard/gateways"); !strings.Contains(body, `id="connect-note"`) || strings.Contains(body, `id="providers"`) {
			t.Fatal("a Connect workspace's gateways page offers to connect a gateway")
		}
		res, _ := b.post("/dashboard/gateways", url.Values{"provider": {"pawapay"}, "cred.api_token": {"t"}, "csrf": {b.csrf()}})
		if res.StatusCode != 403 {
			t.Fatalf("a Connect workspace adds a gateway: %d", res.StatusCode)
		}
		wantError(t, e.do("POST", "/v1/transfers", map[string]any{"amount": 100, "country": "SN", "operator": "wave", "phone": "771234567"},
			bearer(keys["live_secret"])...), 403, "Connect")
	})
}
