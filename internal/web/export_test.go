package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// browserish is an HTTP client with a cookie jar that does not follow
// redirects, as a browser on the dashboard would be, minus the redirects.
type browserish struct {
	t   *testing.T
	e   *env
	c   *http.Client
	jar *cookiejar.Jar
}

func (e *env) newBrowserish() *browserish {
	jar, _ := cookiejar.New(nil)
	return &browserish{t: e.t, e: e, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browserish) get(path string) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.Get(b.e.url + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func (b *browserish) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.PostForm(b.e.url+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// from makes the client's requests come from ip, as a trusted proxy says
// (the env must trust loopback as its proxy).
func (b *browserish) from(ip string) *browserish {
	b.c.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.Header.Set("X-Forwarded-For", ip)
		return http.DefaultTransport.RoundTrip(r)
	})
	return b
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// csrf reads the CSRF cookie the pages set.
func (b *browserish) csrf() string {
	u, _ := url.Parse(b.e.url)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == "cauri_csrf" {
			return c.Value
		}
	}
	return ""
}

func (b *browserish) login(email, password string) *http.Response {
	b.get("/dashboard/login")
	res, _ := b.post("/dashboard/login", url.Values{"email": {email}, "password": {password}, "csrf": {b.csrf()}})
	return res
}

func addUser(t *testing.T, st *store.Store, email, password string, workspaces ...string) {
	hash, _ := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	for _, ws := range workspaces {
		if _, _, err := st.CreateUser(context.Background(), &cauri.User{ID: cauri.NewID("usr_"), Email: email, CreatedAt: time.Now()}, string(hash), ws); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDashboard_SignIn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		addUser(t, st, "awa@example.com", "correct horse battery", e.ws.ID)
		b := e.newBrowserish()
		if res, _ := b.get("/dashboard"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/login" {
			t.Fatalf("dashboard without a session = %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		// No CSRF token: refused.
		if res, body := b.post("/dashboard/login", url.Values{"email": {"awa@example.com"}, "password": {"correct horse battery"}}); res.StatusCode != 403 || !strings.Contains(body, "expired") {
			t.Fatalf("login without CSRF = %d", res.StatusCode)
		}
		b.get("/dashboard/login")
		if res, body := b.post("/dashboard/login", url.Values{"email": {"awa@example.com"}, "password": {"wrong password!"}, "csrf": {b.csrf()}}); res.StatusCode != 401 || !strings.Contains(body, "Wrong e-mail address or password") {
			t.Fatalf("wrong password = %d", res.StatusCode)
		}
		res := b.login("Awa@Example.com", "correct horse battery")
		var session *http.Cookie
		for _, c := range res.Cookies() {
			if c.Name == "cauri_session" {
				session = c
			}
		}
		if res.StatusCode != http.StatusSeeOther || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode {
			t.Fatalf("login = %d, cookie %+v", res.StatusCode, session)
		}
		if res, body := b.get("/dashboard"); res.StatusCode != 200 || !strings.Contains(body, `id="volume-chart"`) || !strings.Contains(body, "Boutique Adjoa") ||
			!strings.Contains(body, `aria-current="page">Overview`) || !strings.Contains(body, "Sign out") {
			t.Fatalf("dashboard = %d %s", res.StatusCode, body)
		}
		// Logging out ends the session.
		b.post("/dashboard/logout", url.Values{"csrf": {b.csrf()}})
		if res, _ := b.get("/v1/transactions/export"); res.StatusCode != 401 {
			t.Fatalf("export after logout = %d", res.StatusCode)
		}
		// Throttling: 5 tries a minute per address.
		other := e.newBrowserish()
		var last *http.Response
		for range 6 {
			last = other.login("awa@example.com", "not the password")
		}
		if last.StatusCode != 429 {
			t.Fatalf("sixth try = %d; want 429", last.StatusCode)
		}
	})
}

func TestExport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Export shop", true)
		other, otherKeys := e.newWorkspace("Other shop", true)
		addUser(t, st, "awa@example.com", "correct horse battery", ws.ID, other.ID)
		// Live sessions, one per day, and a test one.
		names := []string{"Awa Diop", "=HYPERLINK(\"http://evil\")", "Jean, \"le grand\"", "awa ba"}
		var ids []string
		for i, n := range names {
			ids = append(ids, e.mustSession(keys["live_secret"], map[string]any{"amount": 1000 * (i + 1), "customer_name": n,
				"customer_email": "c" + string(rune('a'+i)) + "@example.com", "metadata": map[string]string{"order_id": "ORD-" + string(rune('A'+i))}}))
			e.clock.Add(24 * time.Hour)
		}
		e.mustSession(keys["test_secret"], map[string]any{"amount": 99, "customer_name": "Test only"})
		e.mustSession(otherKeys["live_secret"], map[string]any{"amount": 77, "customer_name": "Other workspace"})

		// An API key is refused; without a session, 401.
		wantError(t, e.do("GET", "/v1/transactions/export", nil, bearer(keys["live_secret"])...), 401, "dashboard")
		wantError(t, e.do("GET", "/v1/transactions/export", nil), 401, "Not signed in")
		b := e.newBrowserish()
		b.login("awa@example.com", "correct horse battery")
		// Two workspaces: none selected yet.
		if res, body := b.get("/v1/transactions/export"); res.StatusCode != 400 || !strings.Contains(body, "No workspace is selected") {
			t.Fatalf("export without a workspace = %d %s", res.StatusCode, body)
		}
		if res, _ := b.post("/dashboard/workspace", url.Values{"workspace": {ws.ID}, "mode": {"live"}}); res.StatusCode != 403 {
			t.Fatalf("select without CSRF = %d", res.StatusCode)
		}
		if res, _ := b.post("/dashboard/workspace", url.Values{"workspace": {e.ws.ID}, "mode": {"live"}, "csrf": {b.csrf()}}); res.StatusCode != 403 {
			t.Fatalf("select a workspace the user is not in = %d", res.StatusCode)
		}
		b.post("/dashboard/workspace", url.Values{"workspace": {ws.ID}, "mode": {"live"}, "csrf": {b.csrf()}})

		res, body := b.get("/v1/transactions/export")
		rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil || res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || len(rows) != 5 {
			t.Fatalf("csv = %d %v %q", res.StatusCode, err, body)
		}
		if strings.Join(rows[0], ",") != "ID,Order ID,Status,Amount,Currency,Provider,Payment Type,Customer Name,Customer Email,Customer Phone,Provider Ref,Created At,Completed At" {
			t.Fatalf("header = %v", rows[0])
		}
		if rows[1][0] != ids[3] || rows[4][0] != ids[0] {
			t.Fatalf("order = %v ... %v; want newest first", rows[1][0], rows[4][0])
		}
		if rows[3][7] != `'=HYPERLINK("http://evil")` || rows[2][7] != `Jean, "le grand"` || rows[4][1] != "ORD-A" || rows[4][3] != "1000" {
			t.Fatalf("cells = %v / %v / %v", rows[3], rows[2], rows[4])
		}
		if !strings.Contains(body, "\r\n") || strings.Contains(body, "Test only") || strings.Contains(body, "Other workspace") {
			t.Fatal("CRLF rows, and only this workspace's live data")
		}
		// Filters.
		day := func(i int) string { return time.Date(2026, 11, 22+i, 0, 0, 0, 0, time.UTC).Format("2006-01-02") }
		count := func(q string) int {
			res, body := b.get("/v1/transactions/export?format=json&" + q)
			var out struct {
				Data  []map[string]any
				Count int
			}
			if res.StatusCode != 200 || json.Unmarshal([]byte(body), &out) != nil || len(out.Data) != out.Count {
				t.Fatalf("json %s = %d %s", q, res.StatusCode, body)
			}
			return out.Count
		}
		for q, want := range map[string]int{
			"": 4, "status=ALL": 4, "status=PENDING": 4, "status=SUCCESS": 0,
			"from=" + day(1): 3, "to=" + day(1): 2, "from=" + day(1) + "&to=" + day(2): 2, "to=" + day(0): 1,
			"search=awa": 2, "search=AWA": 2, "search=ord-c": 1, "search=cb@example": 1, "search=%25": 0, "search=_": 0,
		} {
			if got := count(q); got != want {
				t.Errorf("export %q = %d rows; want %d", q, got, want)
			}
		}
		for _, q := range []string{"format=xml", "status=PAID", "from=22-11-2026", "to=2026-13-40", "from=" + day(2) + "&to=" + day(1)} {
			if res, _ := b.get("/v1/transactions/export?" + q); res.StatusCode != 400 {
				t.Errorf("export %q = %d; want 400", q, res.StatusCode)
			}
		}
		// The test data switch.
		b.post("/dashboard/workspace", url.Values{"workspace": {ws.ID}, "mode": {"test"}, "csrf": {b.csrf()}})
		if _, body := b.get("/v1/transactions/export"); !strings.Contains(body, "Test only") || strings.Contains(body, "Awa Diop") {
			t.Fatalf("test export = %s", body)
		}
	})
}

func TestDashboard_Pages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Pages shop", true)
		addUser(t, st, "awa@example.com", "correct horse battery", ws.ID)
		for i := range 55 {
			e.mustSession(keys["live_secret"], map[string]any{"amount": 100 + i, "customer_name": "Client " + string(rune('A'+i%26)),
				"metadata": map[string]string{"order_id": "ORD-" + string(rune('A'+i%26))}})
			e.clock.Add(time.Minute)
		}
		other, otherKeys := e.newWorkspace("Other", true)
		e.addSimulatedGateway(ws, "SN")
		e.addSimulatedGateway(other, "SN")
		e.do("POST", "/v1/payment-links", map[string]any{"title": "Not mine", "amount": 1}, bearer(otherKeys["live_secret"])...)
		l := e.do("POST", "/v1/payment-links", map[string]any{"title": "Robe wax", "amount": 15000}, bearer(keys["live_secret"])...)

		b := e.newBrowserish()
		if res, _ := b.get("/dashboard/transactions"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/login" {
			t.Fatalf("signed out = %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		b.login("awa@example.com", "correct horse battery")
		res, body := b.get("/dashboard/transactions")
		if res.StatusCode != 200 || strings.Count(body, "<tr data-id=") != 50 || !strings.Contains(body, `id="next"`) || strings.Contains(body, `id="prev"`) {
			t.Fatalf("first page = %d, %d rows", res.StatusCode, strings.Count(body, "<tr data-id="))
		}
		if _, body := b.get("/dashboard/transactions?page=1"); strings.Count(body, "<tr data-id=") != 5 || !strings.Contains(body, `id="prev"`) {
			t.Fatalf("second page = %d rows", strings.Count(body, "<tr data-id="))
		}
		if _, body := b.get("/dashboard/transactions?search=client+b"); strings.Count(body, "<tr data-id=") != 3 ||
			!strings.Contains(body, `href="/v1/transactions/export?search=client&#43;b"`) {
			t.Fatalf("search = %d rows: %s", strings.Count(body, "<tr data-id="), body)
		}
		if res, body := b.get("/dashboard/transactions?from=nope"); res.StatusCode != 400 || !strings.Contains(body, "YYYY-MM-DD") {
			t.Fatalf("bad filter = %d", res.StatusCode)
		}
		// Links: only this workspace's, and the switch.
		res, body = b.get("/dashboard/links")
		if res.StatusCode != 200 || !strings.Contains(body, "Robe wax") || strings.Contains(body, "Not mine") {
			t.Fatalf("links = %d %s", res.StatusCode, body)
		}
		if res, _ := b.post("/dashboard/links/"+l.str("id"), url.Values{"active": {"false"}}); res.StatusCode != 403 {
			t.Fatalf("switch without CSRF = %d", res.StatusCode)
		}
		b.post("/dashboard/links/"+l.str("id"), url.Values{"active": {"false"}, "csrf": {b.csrf()}})
		if res, _ := b.get("/pay/l/" + l.str("slug")); res.StatusCode != http.StatusGone {
			t.Fatalf("deactivated link page = %d", res.StatusCode)
		}
		// Another workspace's link cannot be switched from this session.
		mine := e.do("POST", "/v1/payment-links", map[string]any{"title": "x", "amount": 1}, bearer(otherKeys["live_secret"])...)
		if res, _ := b.post("/dashboard/links/"+mine.str("id"), url.Values{"active": {"false"}, "csrf": {b.csrf()}}); res.StatusCode != 404 {
			t.Fatalf("another workspace's link = %d", res.StatusCode)
		}
		b.post("/dashboard/links/"+l.str("id"), url.Values{"active": {"true"}, "csrf": {b.csrf()}})
		if res, _ := b.get("/pay/l/" + l.str("slug")); res.StatusCode != 200 {
			t.Fatalf("reactivated link page = %d", res.StatusCode)
		}
		// Creating a link from the page: checked as the API checks it.
		l0 := l.str("id")
		if res, _ := b.post("/dashboard/links", url.Values{"title": {"Pagne"}, "amount": {"2500"}}); res.StatusCode != 403 {
			t.Fatalf("create without CSRF = %d", res.StatusCode)
		}
		if res, body := b.post("/dashboard/links", url.Values{"title": {"Pagne"}, "amount": {"25.5"}, "currency": {"XOF"}, "csrf": {b.csrf()}}); res.StatusCode != 400 || !strings.Contains(body, "amount") {
			t.Fatalf("create with a fractional XOF amount = %d %s", res.StatusCode, body)
		}
		if res, _ := b.post("/dashboard/links", url.Values{"title": {"Pagne"}, "amount": {"2500"}, "currency": {"XOF"}, "csrf": {b.csrf()}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("create = %d", res.StatusCode)
		}
		links, err := st.Links(context.Background(), ws.ID, store.LinkPage{Limit: 10})
		if err != nil || len(links) != 2 {
			t.Fatalf("links after create = %d, %v", len(links), err)
		}
		created := links[slices.IndexFunc(links, func(l *cauri.PaymentLink) bool { return l.ID != l0 })]
		if created.Title != "Pagne" || created.Amount != 2500 || created.Currency != "XOF" || !created.Active {
			t.Fatalf("created link = %+v", created)
		}
		if _, body := b.get("/dashboard/links"); !strings.Contains(body, "/l/"+created.Slug) {
			t.Fatalf("the new link's page address is not listed: %s", body)
		}
		b.post("/dashboard/workspace", url.Values{"workspace": {ws.ID}, "mode": {"test"}, "csrf": {b.csrf()}})
		if res, body := b.post("/dashboard/links", url.Values{"title": {"Pagne"}, "amount": {"2500"}, "csrf": {b.csrf()}}); res.StatusCode != 403 || !strings.Contains(body, "production only") {
			t.Fatalf("create in test data = %d %s", res.StatusCode, body)
		}
	})
}

func TestDashboard_TransactionPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Detail shop", true)
		g, _, _ := e.addSimulatedGateway(ws, "SN")
		addUser(t, st, "awa@example.com", "correct horse battery", ws.ID)
		id := e.mustSession(keys["live_public"], map[string]any{"amount": 5000, "customer_name": "Awa Diop", "metadata": map[string]string{"order_id": "ORD-9"}})
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "WAVE_SEN", "phone": "771234567"}), 200)
		test := e.mustSession(keys["test_secret"], `{"amount": 100}`)
		b := e.newBrowserish()
		b.login("awa@example.com", "correct horse battery")
		res, body := b.get("/dashboard/transactions/" + id)
		if res.StatusCode != 200 || !strings.Contains(body, "Awa Diop") || !strings.Contains(body, "ORD-9") || !strings.Contains(body, "pawaPay (pawapay)") ||
			!strings.Contains(body, "wave &#43;221771234567") || !strings.Contains(body, "only_provider:") {
			t.Fatalf("transaction page = %d %s", res.StatusCode, body)
		}
		if _, list := b.get("/dashboard/transactions"); !strings.Contains(list, `href="/dashboard/transactions/`+id+`"`) {
			t.Fatal("the list does not link to the transaction")
		}
		for _, other := range []string{test, e.mustSession(e.keys["test_secret"], `{"amount": 1}`), "cs_nope"} {
			if res, _ := b.get("/dashboard/transactions/" + other); res.StatusCode != 404 {
				t.Fatalf("transaction %s of another mode or workspace = %d", other, res.StatusCode)
			}
		}
	})
}

// TestDashboard_BadInput: odd bytes in every new input of the dashboard, the
// links and the transfers are a 4xx, never a 5xx (PostgreSQL refuses NUL
// bytes in text, so each must be stopped before a query).
func TestDashboard_BadInput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Odd shop", true)
		addUser(t, st, "awa@example.com", "correct horse battery", ws.ID)
		b := e.newBrowserish()
		b.get("/dashboard/login")
		if res, _ := b.post("/dashboard/login", url.Values{"email": {"a\x00@example.com"}, "password": {"x"}, "csrf": {b.csrf()}}); res.StatusCode != 401 {
			t.Fatalf("login with a NUL = %d", res.StatusCode)
		}
		b.login("awa@example.com", "correct horse battery")
		for _, path := range []string{"/v1/transactions/export?search=a%00b", "/dashboard/transactions?search=%ff%fe", "/dashboard/transactions/cs_%00",
			"/pay/l/%00abc", "/pay/l/" + strings.Repeat("a", 16)} {
			if res, _ := b.get(path); res.StatusCode < 400 || res.StatusCode >= 500 {
				t.Errorf("GET %s = %d; want a 4xx", path, res.StatusCode)
			}
		}
		// A page number far out of range is an empty page, not an overflowed offset.
		if res, _ := b.get("/dashboard/transactions?page=9223372036854775807"); res.StatusCode != 200 {
			t.Errorf("a huge page = %d", res.StatusCode)
		}
		for path, form := range map[string]url.Values{
			"/dashboard/workspace":                 {"workspace": {"ws_\x00"}, "mode": {"live"}},
			"/dashboard/notifications/x%00/read":   {},
			"/dashboard/deliveries/whd_%00/resend": {},
			"/dashboard/links/pl_%00":              {"active": {"true"}},
		} {
			form.Set("csrf", b.csrf())
			if res, _ := b.post(path, form); res.StatusCode < 400 || res.StatusCode >= 500 {
				t.Errorf("POST %s = %d; want a 4xx", path, res.StatusCode)
			}
		}
		r := e.do("POST", "/v1/transfers", map[string]any{"amount": 100, "country": "SN", "operator": "wave", "phone": "771234567",
			"idempotency_key": "a\x00b"}, bearer(keys["live_secret"])...)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("transfer with an odd key = %d %s", r.status, r.raw)
		}
		r = e.do("POST", "/v1/payment-links", map[string]any{"title": "a\x00b", "amount": 100}, bearer(keys["live_secret"])...)
		if r.status != 400 {
			t.Errorf("link with a NUL = %d %s", r.status, r.raw)
		}
	})
}
