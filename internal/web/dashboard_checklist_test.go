package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestDashboard_Checklist: the overview's first-run checklist follows what
// the workspace did (keys from the start; a test payment that succeeded; a
// webhook address, then a delivery that reached it; an enabled gateway;
// verification), each step linking where it is done, in French too, and
// goes away once everything is done; a Connect workspace has no gateway
// step.
func TestDashboard_Checklist(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		addUser(t, st, "adjoa@example.com", "correct horse battery", e.ws.ID)
		b := e.newBrowserish()
		b.login("adjoa@example.com", "correct horse battery")
		want := func(done string, steps map[string]bool) string {
			t.Helper()
			res, body := b.get("/dashboard")
			if res.StatusCode != 200 {
				t.Fatalf("overview = %d", res.StatusCode)
			}
			list := section(t, body, "checklist", "section")
			if got := section(t, list, "checks-done", "small"); !strings.HasSuffix(got, ">"+done) {
				t.Errorf("done = %q; want %s", got, done)
			}
			for id, isDone := range steps {
				class := map[bool]string{true: "done", false: "todo"}[isDone]
				if !strings.Contains(list, `id="`+id+`" class="`+class+`"`) {
					t.Errorf("step %s is not %s:\n%s", id, class, list)
				}
			}
			return list
		}
		list := want("1/5", map[string]bool{"check-keys": true, "check-test-payment": false, "check-webhook": false, "check-gateway": false, "check-verified": false})
		for _, link := range []string{"/dashboard/keys", "/dashboard/transactions", "/dashboard/webhooks", "/dashboard/gateways"} {
			if !strings.Contains(list, `href="`+link+`"`) {
				t.Errorf("the checklist has no link to %s", link)
			}
		}
		if !strings.Contains(list, "Ask the operator of this Cauri installation") {
			t.Error("the verification step does not say who verifies")
		}

		e.settle(e.mustSession(e.keys["test_secret"], `{"amount": 100}`), "echec")
		want("1/5", map[string]bool{"check-test-payment": false}) // a failed one is not enough
		e.settle(e.mustSession(key, `{"amount": 100}`), "succes")
		want("2/5", map[string]bool{"check-test-payment": true})

		rc := newReceiver(t, status(200))
		e.setWebhook(key, map[string]any{"webhookUrl": rc.url, "events": []string{"payment.failed"}})
		if list := want("2/5", map[string]bool{"check-webhook": false}); !strings.Contains(list, "Your address is saved") {
			t.Errorf("the webhook step does not say the address is saved:\n%s", list)
		}
		b.post("/dashboard/webhooks/test", url.Values{"csrf": {b.csrf()}})
		rc.wait(1)
		waitFor(t, "the test delivered", func() bool { return len(e.deliveries(key, "?status=delivered")) == 1 })
		want("3/5", map[string]bool{"check-webhook": true})

		e.addSimulatedGateway(e.ws, "SN")
		want("4/5", map[string]bool{"check-gateway": true, "check-verified": false})

		req, _ := http.NewRequest("GET", e.url+"/dashboard", nil)
		req.Header.Set("Accept-Language", "fr-SN,fr;q=0.9")
		res, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		fr, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if list := section(t, string(fr), "checklist", "section"); !strings.Contains(list, "Pour commencer") || !strings.Contains(list, "Faire vérifier votre entreprise") ||
			!strings.Contains(list, "Demandez à l&#39;exploitant de cette installation Cauri") {
			t.Errorf("French checklist:\n%s", list)
		}

		if _, err := st.VerifyWorkspace(context.Background(), e.ws.ID, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if _, body := b.get("/dashboard"); strings.Contains(body, `id="checklist"`) || !strings.Contains(body, `id="figures"`) {
			t.Error("the checklist is still shown with everything done")
		}

		// A Connect workspace's payments go through the service's gateways:
		// no gateway step.
		connect, _ := cauri.NewWorkspace("Connect shop", e.clock.Now())
		connect.Connect = true
		list2, _ := cauri.KeySet(connect.ID, e.clock.Now())
		if err := st.CreateWorkspace(context.Background(), connect, list2); err != nil {
			t.Fatal(err)
		}
		addUser(t, st, "kofi@example.com", "correct horse battery", connect.ID)
		c := e.newBrowserish()
		c.login("kofi@example.com", "correct horse battery")
		_, body := c.get("/dashboard")
		if list := section(t, body, "checklist", "section"); strings.Contains(list, "check-gateway") || !strings.Contains(list, `id="checks-done">1/4`) {
			t.Errorf("Connect checklist:\n%s\nwant 4 steps, no gateway", list)
		}
	})
}
