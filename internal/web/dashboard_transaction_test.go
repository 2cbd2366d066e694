package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestDashboard_Transaction: a transaction's page shows its customer (name,
// e-mail, phone), description and metadata (a table by key, escaped), and
// its dates as the page's language writes them; a pending one has no end.
func TestDashboard_Transaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		addUser(t, st, "adjoa@example.com", "correct horse battery", e.ws.ID)
		b := e.newBrowserish()
		b.login("adjoa@example.com", "correct horse battery")
		id := e.mustSession(key, map[string]any{"amount": 12500, "customer_name": "Awa Diop", "customer_email": "awa@example.com",
			"customer_phone": "+221771234567", "description": "Robe wax, taille M",
			"metadata": map[string]string{"order_id": "A-42", "note": "<b>fragile</b>", "channel": "whatsapp"}})
		e.clock.Add(3*time.Hour + 7*time.Minute)
		e.settle(id, "succes")
		page := func(lang string) string {
			t.Helper()
			req, _ := http.NewRequest("GET", e.url+"/dashboard/transactions/"+id, nil)
			req.Header.Set("Accept-Language", lang)
			res, err := b.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 {
				t.Fatalf("transaction page (%s) = %d", lang, res.StatusCode)
			}
			return string(body)
		}
		en := section(t, page("en"), "session", "table")
		for _, want := range []string{`id="tx-customer">Awa Diop<`, `class="ref" id="tx-email">awa@example.com<`, `id="tx-phone">&#43;221771234567<`,
			`id="tx-description">Robe wax, taille M<`, `Customer&#39;s phone`, `id="tx-created">22 Nov 2026, 10:00 UTC<`,
			`id="tx-updated">22 Nov 2026, 13:07 UTC<`, `id="tx-completed">22 Nov 2026, 13:07 UTC<`} {
			if !strings.Contains(en, want) {
				t.Errorf("the English page has no %s:\n%s", want, en)
			}
		}
		body := page("en")
		md := section(t, body, "metadata", "table")
		if i, j, k := strings.Index(md, ">channel<"), strings.Index(md, ">note<"), strings.Index(md, ">order_id<"); i < 0 || j < i || k < j ||
			!strings.Contains(md, "&lt;b&gt;fragile&lt;/b&gt;") || !strings.Contains(md, ">A-42<") {
			t.Errorf("metadata table:\n%s\nwant channel, note (escaped), order_id, in that order", md)
		}
		if !strings.Contains(section(t, body, "tx-amount", "span"), "12\u202f500 XOF") {
			t.Errorf("amount = %s", section(t, body, "tx-amount", "span"))
		}
		fr := section(t, page("fr-FR,fr;q=0.9"), "session", "table")
		for _, want := range []string{`Téléphone du client`, `id="tx-created">22 nov. 2026 à 10:00 UTC<`, `id="tx-completed">22 nov. 2026 à 13:07 UTC<`} {
			if !strings.Contains(fr, want) {
				t.Errorf("the French page has no %s:\n%s", want, fr)
			}
		}

		pending := e.mustSession(key, map[string]any{"amount": 100})
		_, body = b.get("/dashboard/transactions/" + pending)
		if strings.Contains(body, `id="tx-completed"`) || strings.Contains(body, `id="tx-phone"`) || !strings.Contains(section(t, body, "metadata", "table"), "No metadata.") {
			t.Errorf("a pending session without details shows an end, a phone or metadata:\n%s", section(t, body, "session", "table"))
		}
	})
}
