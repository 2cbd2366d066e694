package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestDashboard_Gateways: a merchant connects an aggregator account from
// the dashboard (credentials sealed, shown only as hints, never echoed),
// turns an operator and a gateway off (the hosted page stops offering
// them), and reads each gateway's health; other workspaces' gateways and
// bad forms are refused; every change is audited.
func TestDashboard_Gateways(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Gateway shop", true)
		addUser(t, st, "ama@example.com", "correct horse battery", ws.ID)
		b := e.newBrowserish()
		b.login("ama@example.com", "correct horse battery")
		if res, body := b.get("/dashboard/gateways"); res.StatusCode != 200 || !strings.Contains(body, `id="no-gateways"`) || strings.Contains(body, `id="new-gateway"`) {
			t.Fatalf("empty gateways page = %d", res.StatusCode)
		}
		if _, body := b.get("/dashboard/gateways?provider=pawapay"); !strings.Contains(body, `name="cred.api_token"`) || !strings.Contains(body, `name="provider" value="pawapay"`) {
			t.Fatal("the pawaPay form has no api_token field")
		}
		const secret = "pawapay-secret-token-0123456789"
		add := url.Values{"provider": {"pawapay"}, "name": {"pawaPay Sénégal"}, "cred.api_token": {secret}, "countries": {"sn"}, "live": {"true"}}
		if res, _ := b.post("/dashboard/gateways", add); res.StatusCode != 403 {
			t.Fatalf("add without CSRF = %d", res.StatusCode)
		}
		for _, tc := range []struct {
			change url.Values
			want   string
		}{
			{url.Values{"provider": {"nope"}}, "Pick an aggregator"},
			{url.Values{"cred.api_token": {""}}, "api_token"},
			{url.Values{"cred.password": {"x"}}, "no field"},
			{url.Values{"countries": {"FR"}}, "does not serve"},
			{url.Values{"name": {"a\x00b"}}, "control character"},
			{url.Values{"cred.api_token": {strings.Repeat("x", 5000)}}, "4096"},
		} {
			form := url.Values{"csrf": {b.csrf()}}
			for k, v := range add {
				form[k] = v
			}
			for k, v := range tc.change {
				form[k] = v
			}
			res, body := b.post("/dashboard/gateways", form)
			if res.StatusCode != 400 || !strings.Contains(body, tc.want) {
				t.Fatalf("add %v = %d; want 400 naming %q", tc.change, res.StatusCode, tc.want)
			}
			if strings.Contains(body, secret) {
				t.Fatal("a refused form echoes the credential")
			}
		}
		add.Set("csrf", b.csrf())
		if res, _ := b.post("/dashboard/gateways", add); res.StatusCode != 303 {
			t.Fatalf("add = %d", res.StatusCode)
		}
		list, _ := st.Gateways(ctx, ws.ID)
		if len(list) != 1 || list[0].Name != "pawaPay Sénégal" || !list[0].Live || list[0].BaseURL != "" || len(list[0].Routes) == 0 {
			t.Fatalf("gateways = %+v", list)
		}
		g := list[0]
		if creds, err := st.GatewayCredentials(ctx, g.ID); err != nil || creds["api_token"] != secret {
			t.Fatalf("sealed credentials = %v, %v", creds, err)
		}
		_, body := b.get("/dashboard/gateways")
		if strings.Contains(body, secret) || !strings.Contains(body, "api_token …6789") || !strings.Contains(body, "Wave (SN)") {
			t.Fatalf("gateways page after adding:\n%s", section(t, body, "nav", "main"))
		}

		// The hosted page offers Wave until the operator is turned off.
		sess := e.mustSession(keys["live_public"], `{"amount": 1000}`)
		offers := func(code string) bool {
			r := e.do("GET", "/v1/checkout/sessions/"+sess+"/methods", nil, bearer(keys["live_public"])...)
			return strings.Contains(r.raw, `"`+code+`"`)
		}
		if !offers("WAVE_SEN") {
			t.Fatal("the new gateway's Wave is not offered")
		}
		op := url.Values{"country": {"SN"}, "operator": {"wave"}, "enabled": {"false"}, "csrf": {b.csrf()}}
		if res, _ := b.post("/dashboard/gateways/"+g.ID+"/operators", op); res.StatusCode != 303 {
			t.Fatalf("operator switch = %d", res.StatusCode)
		}
		if offers("WAVE_SEN") {
			t.Fatal("a disabled operator is still offered")
		}
		for _, bad := range []url.Values{{"country": {"SN"}, "operator": {"nope"}}, {"country": {"CI"}, "operator": {"wave"}}} {
			bad.Set("csrf", b.csrf())
			if res, _ := b.post("/dashboard/gateways/"+g.ID+"/operators", bad); res.StatusCode != 404 {
				t.Fatalf("operator %v = %d; want 404", bad, res.StatusCode)
			}
		}
		if res, _ := b.post("/dashboard/gateways/"+g.ID, url.Values{"enabled": {"false"}, "csrf": {b.csrf()}}); res.StatusCode != 303 {
			t.Fatalf("gateway switch = %d", res.StatusCode)
		}
		if got, _ := st.Gateway(ctx, ws.ID, g.ID); got.Enabled {
			t.Fatal("the gateway is still enabled")
		}
		other, _ := e.newWorkspace("Other", true)
		og, _ := e.addGateway(other, "pawapay", nil, map[string]string{"api_token": "t"}, "SN")
		for _, path := range []string{"/dashboard/gateways/" + og.ID, "/dashboard/gateways/" + og.ID + "/operators", "/dashboard/gateways/gw_nope"} {
			if res, _ := b.post(path, url.Values{"enabled": {"false"}, "country": {"SN"}, "operator": {"wave"}, "csrf": {b.csrf()}}); res.StatusCode != 404 {
				t.Fatalf("%s = %d; want 404", path, res.StatusCode)
			}
		}
		if got, _ := st.Gateway(ctx, other.ID, og.ID); !got.Enabled {
			t.Fatal("another workspace's gateway was switched")
		}

		// Health: one payment succeeded and one failed through a simulated gateway.
		sg, _, simURL := e.addSimulatedGateway(ws, "SN")
		e.payLive(keys["live_public"], sg.ID, simURL, 1000, "771234567")
		e.payLive(keys["live_public"], sg.ID, simURL, 1000, "771230029")
		_, body = b.get("/dashboard/gateways")
		health := section(t, body, sg.ID, "section")
		if !strings.Contains(health, "50 % (1/2)") || !strings.Contains(health, "last-failure") {
			t.Fatalf("health = %s", health)
		}

		log, err := st.AuditLog(ctx, ws.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		log = slices.DeleteFunc(log, func(a store.Audit) bool { return a.Action == "workspace.created" })
		var actions []string
		for _, a := range log {
			actions = append(actions, a.Action)
			if strings.Contains(fmt.Sprint(a.Detail), secret) {
				t.Fatal("the audit log holds a credential")
			}
		}
		slices.Sort(actions) // the test's clock stands still: one time for all
		if strings.Join(actions, " ") != "gateway.added gateway.added gateway.disabled gateway.operator" {
			t.Errorf("audit = %v", actions)
		}
		for _, a := range log {
			if want := "user:usr_"; a.Detail["gateway"] == sg.ID {
				want = "system" // added by the test, through the store
				if a.Actor != want {
					t.Errorf("%s by %q; want %s", a.Action, a.Actor, want)
				}
			} else if !strings.HasPrefix(a.Actor, want) {
				t.Errorf("%s by %q; want the user", a.Action, a.Actor)
			}
		}
	})
}

// TestCinetPayV1 connects an account on CinetPay's API v1 from the
// dashboard (its own credentials: api_key and api_password) and pays
// through it end to end, against the API v1 simulator; then its
// credentials stop working and the gateways page says why.
func TestCinetPayV1(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Abidjan shop", true)
		addUser(t, st, "awa@example.com", "correct horse battery", ws.ID)
		b := e.newBrowserish()
		b.login("awa@example.com", "correct horse battery")
		_, body := b.get("/dashboard/gateways?provider=cinetpay")
		if !strings.Contains(body, `name="cred.apikey"`) || !strings.Contains(body, `set=1#new-gateway">api_key, api_password</a>`) {
			t.Fatalf("the CinetPay form offers no API v1 credentials:\n%s", section(t, body, "new-gateway", "form"))
		}
		if _, body = b.get("/dashboard/gateways?provider=cinetpay&set=1"); !strings.Contains(body, `name="cred.api_password"`) || strings.Contains(body, `name="cred.site_id"`) {
			t.Fatalf("the API v1 form:\n%s", section(t, body, "new-gateway", "form"))
		}
		add := url.Values{"provider": {"cinetpay"}, "set": {"1"}, "name": {"CinetPay v1"}, "cred.api_key": {"sk_test_v1"},
			"cred.api_password": {"pw-v1"}, "countries": {"CI"}, "live": {"true"}, "csrf": {b.csrf()}}
		if res, _ := b.post("/dashboard/gateways", add); res.StatusCode != 303 {
			t.Fatalf("add = %d", res.StatusCode)
		}
		if list, _ := st.Gateways(ctx, ws.ID); len(list) != 1 || list[0].CredentialHints["api_password"] == "" {
			t.Fatalf("gateways = %+v; want the API v1 account", list)
		}
		// The same account pointed at the API v1 simulator (the dashboard
		// connects real hosts only), as `cauri gateway add --api-url` does.
		g, simURL := e.addGateway(ws, "cinetpay", &cinetpay.V1Simulator{APIKey: "sk_test_v1", APIPassword: "pw-v1"},
			map[string]string{"api_key": "sk_test_v1", "api_password": "pw-v1"}, "CI")
		id := e.mustSession(keys["live_public"], `{"amount": 1500}`)
		r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "OM", "phone": "07 07 12 34 56"})
		if next := nextOf(r); r.status != 200 || next["type"] != "redirect" || !strings.HasPrefix(next["url"].(string), simURL) {
			t.Fatalf("initiate through CinetPay's API v1 = %d %s; want its page", r.status, r.raw)
		}
		attempts, _ := st.Attempts(ctx, id)
		gatewaytest.Control(t, simURL, "/_sim/settle/"+attempts[0].Reference)
		e.clock.Add(9 * time.Second)
		if v := e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}); v.str("status") != "SUCCESS" {
			t.Fatalf("verify = %s; want SUCCESS", v.raw)
		}
		// A connector that cannot be built any more (credentials that no
		// longer decrypt): the payment is not started and the gateways page
		// says why.
		e.srv.Checkout.Connectors.Build = func(gw *cauri.Gateway, creds map[string]string) (gateway.Connector, error) {
			return nil, errors.New("the credentials do not decrypt")
		}
		defer func() { e.srv.Checkout.Connectors.Build = connectors.New }()
		other := e.mustSession(keys["live_public"], `{"amount": 1500}`)
		wantStatus(t, e.do("POST", "/checkout/initiate", map[string]string{"transactionId": other, "gatewayId": g.ID, "code": "OM", "phone": "0707123456"}), 502)
		if _, body = b.get("/dashboard/gateways"); !strings.Contains(section(t, body, g.ID, "section"), "the credentials do not decrypt") {
			t.Fatalf("the gateways page does not say the gateway cannot be used:\n%s", section(t, body, g.ID, "section"))
		}
	})
}
