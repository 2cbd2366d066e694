package web

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// section is the part of a page from the element with id to the end of
// its first closing tag named end.
func section(t *testing.T, body, id, end string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no #%s in the page", id)
	}
	j := strings.Index(body[i:], "</"+end+">")
	return body[i : i+j]
}

// TestDashboard_Overview: live payments paid through the pawaPay simulator
// show in the overview's figures, charts and tables; test data only with
// test data selected; the period and currency choices; bad choices fall
// back to the defaults.
func TestDashboard_Overview(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Overview shop", true)
		g, _, simURL := e.addSimulatedGateway(ws, "SN")
		addUser(t, st, "fatou@example.com", "correct horse battery", ws.ID)
		pay := func(amount int, phone string) { e.payLive(keys["live_public"], g.ID, simURL, amount, phone) }
		pay(5000, "771234567")
		e.clock.Add(24 * time.Hour)
		pay(3000, "771234567")
		pay(2000, "771230029") // fails once settled
		e.settle(e.mustSession(keys["test_secret"], map[string]any{"amount": 9999}), "succes")

		b := e.newBrowserish()
		b.login("fatou@example.com", "correct horse battery")
		res, body := b.get("/dashboard")
		if res.StatusCode != 200 {
			t.Fatalf("overview = %d", res.StatusCode)
		}
		for id, want := range map[string]string{"volume": "8\u202f000 XOF", "rate": "67 % (2/3)", "payments": "3"} {
			if got := section(t, body, id, "strong"); !strings.Contains(got, ">"+want) {
				t.Errorf("#%s = %q; want %q", id, got, want)
			}
		}
		if n := strings.Count(section(t, body, "volume-chart", "svg"), "<rect"); n != 30 {
			t.Errorf("volume chart has %d bars; want 30 (days)", n)
		}
		today := e.clock.Now().UTC().Format("2006-01-02")
		yesterday := e.clock.Now().UTC().Add(-24 * time.Hour).Format("2006-01-02")
		rate := section(t, body, "rate-chart", "svg")
		if !strings.Contains(rate, "<title>"+today+": 50 % (1/2)</title>") || !strings.Contains(rate, "<title>"+yesterday+": 100 % (1/1)</title>") {
			t.Errorf("rate chart = %s", rate)
		}
		if p := section(t, body, "providers", "table"); !strings.Contains(p, "pawaPay") || !strings.Contains(p, "67 % (2/3)") {
			t.Errorf("providers = %s", p)
		}
		if o := section(t, body, "operators", "table"); !strings.Contains(o, "Wave") {
			t.Errorf("operators = %s", o)
		}
		if strings.Contains(body, "9\u202f999 XOF") {
			t.Error("test data in the live overview")
		}
		for query, bars := range map[string]int{"?days=7": 7, "?days=90": 90, "?days=abc": 30, "?days=-1": 30, "?currency=%00": 30} {
			res, body := b.get("/dashboard" + query)
			if n := strings.Count(section(t, body, "volume-chart", "svg"), "<rect"); res.StatusCode != 200 || n != bars {
				t.Errorf("%s = %d, %d bars; want 200, %d", query, res.StatusCode, n, bars)
			}
		}
		if _, body := b.get("/dashboard?currency=GHS"); !strings.Contains(section(t, body, "rate", "strong"), "–") {
			t.Error("another currency shows this one's rate")
		}
		b.post("/dashboard/workspace", url.Values{"workspace": {ws.ID}, "mode": {"test"}, "csrf": {b.csrf()}})
		if _, body := b.get("/dashboard"); !strings.Contains(section(t, body, "volume", "strong"), "9\u202f999 XOF") ||
			!strings.Contains(body, `id="test-data"`) {
			t.Errorf("test overview = %s", section(t, body, "figures", "section"))
		}
	})
}
