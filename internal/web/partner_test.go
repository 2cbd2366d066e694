package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func partnerHeader(secret string) []string { return []string{"x-partner-secret", secret} }

// TestPartner_Disabled: without CAURI_PARTNER_SECRET and with no partner
// issued, every partner path answers 503, whatever its secret.
func TestPartner_Disabled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		for _, c := range []struct{ method, path string }{
			{"POST", "/v1/partner/merchants"}, {"GET", "/v1/partner/merchants"}, {"GET", "/v1/partner/merchants/ws_x"},
			{"GET", "/v1/partner/nope"},
		} {
			wantError(t, e.do(c.method, c.path, nil, partnerHeader("anything")...), 503, "disabled")
		}
		// Once the administration issues a partner, its secret works.
		p := &store.Partner{ID: "ptn_issued", Name: "Issued", CreatedAt: e.clock.Now()}
		if err := st.CreatePartner(context.Background(), p, "psk_issued_secret"); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, e.do("GET", "/v1/partner/merchants", nil, partnerHeader("psk_issued_secret")...), 200)
		wantError(t, e.do("GET", "/v1/partner/merchants", nil, partnerHeader("psk_other")...), 401, "Invalid partner secret")
		if err := st.RevokePartner(context.Background(), p.ID, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		wantError(t, e.do("GET", "/v1/partner/merchants", nil, partnerHeader("psk_issued_secret")...), 503, "disabled")
	})
}

// TestPartner_API: a partner creates merchants (keys returned once, the
// owner's account or invitation), reads, lists and updates them, adds a
// gateway and reads the verification state; another partner sees none of
// them; bad input is 400 and writes nothing; every call is audited; the
// rate limit holds.
func TestPartner_API(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const secret = "the-single-partner-secret-0123456789"
		e := newEnv(t, st, func(d *Deps) { d.Partners.Secret = secret })
		ph := partnerHeader(secret)
		for _, h := range [][]string{nil, partnerHeader("wrong"), partnerHeader(secret + "x")} {
			wantError(t, e.do("GET", "/v1/partner/merchants", nil, h...), 401, "partner secret")
		}
		before, _ := st.Workspaces(ctx)
		for body, want := range map[string]string{
			`{"email": "a@example.com"}`:                                                         "name",
			`{"name": "Shop", "email": "not an address"}`:                                        "email",
			`{"name": "Shop", "email": "a@example.com", "password": "short"}`:                    "10 to 72",
			`{"name": "Shop", "email": "a@example.com", "password": "password12"}`:               "too easy to guess",
			`{"name": "Boutique Adjoa", "email": "a@example.com", "password": "boutiqueadjoa"}`:  "too easy to guess",
			`{"name": "Shop", "email": "a@example.com", "default_currency": "X"}`:                "currency",
			`{"name": "Shop", "email": "a@example.com", "webhook_url": "https://10.0.0.1/hook"}`: "",
			`{"name": "Shop", "email": "a@example.com", "events": ["nope"]}`:                     "nope",
			`{"name": "Shop\u0000", "email": "a@example.com"}`:                                   "control",
			`{"name": "Shop", "email": "a@example.com", "extra": 1}`:                             "extra",
			`not json`: "",
		} {
			wantError(t, e.do("POST", "/v1/partner/merchants", body, ph...), 400, want)
		}
		if after, _ := st.Workspaces(ctx); len(after) != len(before) {
			t.Fatal("a refused merchant was partly created")
		}

		// With a password: the owner signs in at once.
		r := e.do("POST", "/v1/partner/merchants", map[string]any{"name": "Boutique Fatou", "email": "Fatou@Example.com",
			"password": "correct horse battery", "default_currency": "GHS"}, ph...)
		wantStatus(t, r, 201)
		id := r.str("id")
		keys, _ := r.body["keys"].(map[string]any)
		if r.str("object") != "merchant" || r.str("verification") != "pending" || r.body["livemode"] != false || len(keys) != 4 ||
			r.str("default_currency") != "GHS" || r.body["owner"].(map[string]any)["email"] != "fatou@example.com" {
			t.Fatalf("created = %s", r.raw)
		}
		live := keys["live_secret"].(string)
		if s := e.createSession(live, `{"amount": 1000}`); s.status != 201 || s.body["livemode"] != false {
			t.Fatalf("an unverified merchant's live key: %s; want a test session", s.raw)
		}
		b := e.newBrowserish()
		if res := b.login("fatou@example.com", "correct horse battery"); res.StatusCode != 303 {
			t.Fatalf("owner sign-in = %d", res.StatusCode)
		}
		if _, body := b.get("/dashboard"); !strings.Contains(body, `id="unverified"`) {
			t.Fatal("the dashboard of an unverified merchant has no test-mode banner")
		}
		// Without one: an invitation link.
		e.clock.Add(time.Second)
		r2 := e.do("POST", "/v1/partner/merchants", map[string]any{"name": "Chez Kofi", "email": "kofi@example.com"}, ph...)
		wantStatus(t, r2, 201)
		link, _ := r2.body["owner"].(map[string]any)["invitation_url"].(string)
		if res, _ := e.newBrowserish().get(strings.TrimPrefix(link, e.url)); !strings.HasPrefix(link, e.url+"/dashboard/invitations/") || res.StatusCode != 200 {
			t.Fatalf("invitation link %q", link)
		}
		// Read, list (newest first), and nothing for another partner.
		if g := e.do("GET", "/v1/partner/merchants/"+id, nil, ph...); g.status != 200 || g.body["keys"] != nil || g.str("name") != "Boutique Fatou" {
			t.Fatalf("get = %s", g.raw)
		}
		l := e.do("GET", "/v1/partner/merchants?limit=1", nil, ph...)
		if l.body["count"] != 1.0 || l.body["data"].([]any)[0].(map[string]any)["id"] != r2.str("id") {
			t.Fatalf("list = %s", l.raw)
		}
		for _, q := range []string{"0", "201", "x"} {
			wantError(t, e.do("GET", "/v1/partner/merchants?limit="+q, nil, ph...), 400, "limit")
		}
		if err := st.CreatePartner(ctx, &store.Partner{ID: "ptn_other", Name: "Other", CreatedAt: e.clock.Now()}, "psk_other_partner"); err != nil {
			t.Fatal(err)
		}
		other := partnerHeader("psk_other_partner")
		if l := e.do("GET", "/v1/partner/merchants", nil, other...); l.body["count"] != 0.0 {
			t.Fatalf("another partner lists %s", l.raw)
		}
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/v1/partner/merchants/" + id, nil}, {"PATCH", "/v1/partner/merchants/" + id, map[string]any{"name": "x"}},
			{"POST", "/v1/partner/merchants/" + id + "/gateways", map[string]any{"provider": "pawapay", "credentials": map[string]string{"api_token": "t"}}},
			{"GET", "/v1/partner/merchants/" + id + "/verification", nil}, {"GET", "/v1/partner/merchants/" + e.ws.ID, nil},
		} {
			wantError(t, e.do(c.method, c.path, c.body, other...), 404, "Merchant")
		}
		// Update: name, webhook, events.
		rc := newReceiver(t, nil)
		u := e.do("PATCH", "/v1/partner/merchants/"+id, map[string]any{"name": "Boutique Fatou & Fils", "webhook_url": rc.url,
			"events": []string{"payment.completed"}}, ph...)
		if u.status != 200 || u.str("name") != "Boutique Fatou & Fils" {
			t.Fatalf("update = %s", u.raw)
		}
		if c := e.do("GET", "/v1/config/webhook", nil, bearer(live)...); c.str("webhookUrl") != rc.url || len(c.body["events"].([]any)) != 1 {
			t.Fatalf("the merchant's webhook after the update = %s", c.raw)
		}
		wantError(t, e.do("PATCH", "/v1/partner/merchants/"+id, map[string]any{"name": "Never", "webhook_url": "https://10.1.2.3/x"}, ph...), 400, "")
		if g := e.do("GET", "/v1/partner/merchants/"+id, nil, ph...); g.str("name") != "Boutique Fatou & Fils" {
			t.Fatal("a refused update changed the name")
		}
		// A gateway.
		gw := e.do("POST", "/v1/partner/merchants/"+id+"/gateways", map[string]any{"provider": "pawapay", "live": true, "countries": []string{"GH"},
			"credentials": map[string]string{"api_token": "partner-given-token-9876"}}, ph...)
		if gw.status != 201 || gw.body["credentials"].(map[string]any)["api_token"] != "…9876" || strings.Contains(gw.raw, "partner-given-token") {
			t.Fatalf("gateway = %s", gw.raw)
		}
		wantError(t, e.do("POST", "/v1/partner/merchants/"+id+"/gateways", map[string]any{"provider": "pawapay"}, ph...), 400, "api_token")
		wantError(t, e.do("POST", "/v1/partner/merchants/"+id+"/gateways", map[string]any{"provider": "nope"}, ph...), 400, "provider")
		// Verification: pending until the administration verifies.
		if v := e.do("GET", "/v1/partner/merchants/"+id+"/verification", nil, ph...); v.str("status") != "pending" {
			t.Fatalf("verification = %s", v.raw)
		}
		st.VerifyWorkspace(ctx, id, e.clock.Now())
		if v := e.do("GET", "/v1/partner/merchants/"+id+"/verification", nil, ph...); v.str("status") != "verified" || v.body["livemode"] != true {
			t.Fatalf("verification after = %s", v.raw)
		}
		if s := e.createSession(live, `{"amount": 1000}`); s.body["livemode"] != true {
			t.Fatalf("a verified merchant's live key: %s; want a live session", s.raw)
		}
		// A Connect merchant adds no gateway of its own.
		st.SetConnect(ctx, r2.str("id"), true, e.clock.Now())
		wantError(t, e.do("POST", "/v1/partner/merchants/"+r2.str("id")+"/gateways", map[string]any{"provider": "pawapay",
			"credentials": map[string]string{"api_token": "t"}}, ph...), 403, "Connect")
		wantError(t, e.do("GET", "/v1/partner/nope", nil, ph...), 404, "")

		// The audit log: every call, by the partner.
		log, err := st.AuditLog(ctx, id, 100)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, a := range log {
			switch {
			case a.Actor == "partner:ptn_other": // its attempts on this merchant, refused and recorded
				if a.Action != "partner.call" || a.Detail["outcome"] != "not_found" {
					t.Errorf("the other partner's %s: %v", a.Action, a.Detail)
				}
			case a.Action == "workspace.verified": // by the test, through the store
			case a.Actor != "partner:ptn_default":
				t.Errorf("%s by %q; want the partner", a.Action, a.Actor)
			}
			seen[a.Action]++
		}
		if seen["partner.call"] < 10 || seen["workspace.created"] != 1 || seen["gateway.added"] != 1 || seen["workspace.name"] != 1 {
			t.Errorf("audit = %v", seen)
		}

		// 120 calls a minute per partner.
		n := 0
		for ; n < 200; n++ {
			if e.do("GET", "/v1/partner/merchants?limit=1", nil, ph...).status == 429 {
				break
			}
		}
		if n >= 120 {
			t.Fatalf("the %dth call in a minute was let through; want 429 by the 121st", n+1)
		}
		if r := e.do("GET", "/v1/partner/merchants?limit=1", nil, other...); r.status != 200 {
			t.Fatalf("another partner is limited too: %d", r.status)
		}
		e.clock.Add(time.Minute)
		wantStatus(t, e.do("GET", "/v1/partner/merchants?limit=1", nil, ph...), 200)
	})
}
