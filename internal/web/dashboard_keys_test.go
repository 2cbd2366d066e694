package web

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/cauri-pay/cauri/webhook"
)

var newKeyRE = regexp.MustCompile(`id="new-key">(svc_[a-z]+_[a-z]+_[a-z0-9]+)<`)

// TestDashboard_Keys: the keys page shows keys by their last characters
// only; a roll shows the new key once; the old one keeps working (and
// signing webhooks, next to the new one) for the grace period picked, then
// stops; every roll is audited; bad forms are refused with 400 or 403.
func TestDashboard_Keys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		addUser(t, st, "kwame@example.com", "correct horse battery", e.ws.ID)
		b := e.newBrowserish()
		b.login("kwame@example.com", "correct horse battery")
		res, body := b.get("/dashboard/keys")
		if res.StatusCode != 200 || strings.Count(body, "<code>svc_") != 4 {
			t.Fatalf("keys page = %d, %d keys", res.StatusCode, strings.Count(body, "<code>svc_"))
		}
		for name, k := range e.keys {
			if strings.Contains(body, k) {
				t.Fatalf("the keys page shows the %s key whole", name)
			}
			if !strings.Contains(body, "…"+k[len(k)-4:]) {
				t.Fatalf("the keys page does not show the %s key's last characters", name)
			}
		}
		// A refused form is a page, not JSON: the reason and a way back.
		res, body = b.post("/dashboard/keys", url.Values{"key": {"live_sec"}, "grace": {"86400"}})
		if got, want := res.StatusCode, 403; got != want {
			t.Fatalf("roll without CSRF = %d; want %d", got, want)
		}
		if got, want := res.Header.Get("Content-Type"), "text/html; charset=utf-8"; got != want {
			t.Fatalf("roll without CSRF answers %q; want %q", got, want)
		}
		if !strings.Contains(body, `id="error">This form expired`) || !strings.Contains(body, `<a href="/dashboard/keys" id="back">Back</a>`) {
			t.Fatalf("roll without CSRF shows:\n%s\nwant the reason and a link back to the keys", body)
		}
		for _, form := range []url.Values{
			{"key": {"live_xyz"}, "grace": {"0"}}, {"key": {"prod_sec"}, "grace": {"0"}}, {"key": {""}, "grace": {"0"}},
			{"key": {"live_sec"}, "grace": {"5"}}, {"key": {"live_sec"}, "grace": {"abc"}}, {"key": {"live_sec"}, "grace": {"999999999"}},
		} {
			form.Set("csrf", b.csrf())
			if res, body := b.post("/dashboard/keys", form); res.StatusCode != 400 || !strings.Contains(body, "grace period") {
				t.Fatalf("roll %v = %d", form, res.StatusCode)
			}
		}

		// The test secret key, rolled with 24 hours of grace (a minute after
		// it was made: newest first is then one order).
		oldKey := e.keys["test_secret"]
		e.clock.Add(time.Minute)
		res, body = b.post("/dashboard/keys", url.Values{"key": {"test_sec"}, "grace": {"86400"}, "csrf": {b.csrf()}})
		m := newKeyRE.FindStringSubmatch(body)
		if res.StatusCode != 200 || m == nil || !strings.HasPrefix(m[1], "svc_test_sec_") {
			t.Fatalf("roll = %d, new key %v", res.StatusCode, m)
		}
		newKey := m[1]
		if _, body := b.get("/dashboard/keys"); strings.Contains(body, newKey) || !strings.Contains(body, "…"+newKey[len(newKey)-4:]) {
			t.Fatal("the new key is shown again, or not at all, after the roll")
		}
		for _, k := range []string{oldKey, newKey} {
			wantStatus(t, e.do("GET", "/v1/transfers", nil, bearer(k)...), 403) // a test key: known, refused for transfers
		}
		// A webhook of the grace period is signed with both keys.
		rc := newReceiver(t, nil)
		e.setWebhook(newKey, map[string]any{"webhookUrl": rc.url})
		e.settle(e.mustSession(newKey, `{"amount": 100}`), "succes")
		rc.wait(1)
		got := rc.requests()[0]
		for _, k := range []string{oldKey, newKey} {
			if err := webhook.Verify(got.body, got.header, k, e.clock.Now()); err != nil {
				t.Errorf("a webhook in the grace period does not verify with the %s key: %v", map[bool]string{true: "old", false: "new"}[k == oldKey], err)
			}
		}
		// The webhooks page (test data: the workspace is unverified) says
		// which keys sign: the new one, then the old one with its end; never
		// a live key, never a key whole.
		last4 := func(k string) string { return "…" + k[len(k)-4:] }
		_, body = b.get("/dashboard/webhooks")
		signing := section(t, body, "signing-keys", "ul")
		until := e.clock.Now().Add(24 * time.Hour).UTC().Format("2006-01-02 15:04 UTC")
		if i, j := strings.Index(signing, last4(newKey)+"</code></li>"), strings.Index(signing, last4(oldKey)+"</code> · <span class=\"expires\">also signs until "+until); i < 0 || j < i ||
			strings.Contains(signing, last4(e.keys["live_secret"])) || strings.Contains(body, newKey) || strings.Contains(body, oldKey) {
			t.Fatalf("signing keys in the grace period:\n%s\nwant …%s, then …%s until %s", signing, newKey[len(newKey)-4:], oldKey[len(oldKey)-4:], until)
		}
		// After the grace period, the old key is refused and signs nothing.
		e.clock.Add(24*time.Hour + time.Second)
		wantError(t, e.do("GET", "/v1/transfers", nil, bearer(oldKey)...), 401, "Invalid API Key")
		wantStatus(t, e.do("GET", "/v1/transfers", nil, bearer(newKey)...), 403)
		e.settle(e.mustSession(newKey, `{"amount": 200}`), "succes")
		rc.wait(2)
		got = rc.requests()[1]
		if webhook.Verify(got.body, got.header, oldKey, e.clock.Now()) == nil || webhook.Verify(got.body, got.header, newKey, e.clock.Now()) != nil {
			t.Error("after the grace period webhooks are signed with the old key, or not with the new one")
		}
		b.login("kwame@example.com", "correct horse battery") // the dashboard session lasts 12 hours
		if _, body := b.get("/dashboard/keys"); strings.Count(body, "<code>svc_") != 4 {
			t.Errorf("keys after the grace period = %d; want 4", strings.Count(body, "<code>svc_"))
		}
		if _, body := b.get("/dashboard/webhooks"); section(t, body, "signing-keys", "ul") != `id="signing-keys"><li><code>svc_test_sec_`+last4(newKey)+`</code></li>
    ` {
			t.Errorf("signing keys after the grace period:\n%s\nwant the new key alone", section(t, body, "signing-keys", "ul"))
		}

		// A roll without grace stops the old live secret key at once.
		res, body = b.post("/dashboard/keys", url.Values{"key": {"live_sec"}, "grace": {"0"}, "csrf": {b.csrf()}})
		if res.StatusCode != 200 || newKeyRE.FindStringSubmatch(body) == nil {
			t.Fatalf("roll without grace = %d", res.StatusCode)
		}
		wantError(t, e.do("GET", "/v1/transfers", nil, bearer(e.keys["live_secret"])...), 401, "Invalid API Key")
		wantStatus(t, e.do("GET", "/v1/transfers", nil, bearer(newKeyRE.FindStringSubmatch(body)[1])...), 200)

		log, err := st.AuditLog(context.Background(), e.ws.ID, 10)
		log = slices.DeleteFunc(log, func(a store.Audit) bool { return a.Action == "workspace.created" })
		if err != nil || len(log) != 2 || log[0].Action != "key.rolled" || !strings.HasPrefix(log[0].Actor, "user:usr_") {
			t.Fatalf("audit log = %+v, %v", log, err)
		}
		for _, a := range log {
			for _, v := range a.Detail {
				if s, ok := v.(string); ok && strings.HasPrefix(s, "svc_") && !strings.Contains(s, "…") {
					t.Fatalf("the audit log holds a key: %v", a.Detail)
				}
			}
		}
	})
}
