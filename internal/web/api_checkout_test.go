package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestCreateSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		t.Run("OK", func(t *testing.T) {
			r := e.createSession(e.keys["test_secret"], map[string]any{
				"amount": 15000, "customer_name": " Awa Diop ", "customer_email": "awa@example.com",
				"customer_phone": "+225 07 07 12 34 56", "description": "2 pagnes", "success_url": "https://shop.example/ok",
				"cancel_url": "https://shop.example/ko", "metadata": map[string]string{"order_id": "A-42"},
				"merchant_name": "Adjoa", "merchant_logo": "https://shop.example/logo.png",
			})
			wantStatus(t, r, http.StatusCreated)
			for k, want := range map[string]any{
				"object": "checkout.session", "status": "PENDING", "paid": false, "livemode": false, "amount": 15000.0,
				"currency": "XOF", "customer_name": "Awa Diop", "customer_phone": "+2250707123456", "order_id": "A-42",
				"provider": nil, "created_at": "2026-11-22T10:00:00.000Z",
			} {
				if r.body[k] != want {
					t.Errorf("%s = %v; want %v", k, r.body[k], want)
				}
			}
			id := r.str("id")
			if !strings.HasPrefix(id, "cs_") || len(id) != 35 {
				t.Errorf("id = %q; want cs_ and 32 random characters", id)
			}
			if r.str("url") != e.url+"/pay/"+id {
				t.Errorf("url = %q; want the hosted page", r.str("url"))
			}
		})
		t.Run("DecimalCurrency", func(t *testing.T) {
			r := e.createSession(e.keys["test_secret"], `{"amount": 15.5, "currency": "ghs"}`)
			wantStatus(t, r, http.StatusCreated)
			if r.body["amount"] != 15.5 || r.body["currency"] != "GHS" {
				t.Fatalf("amount = %v %v; want 15.5 GHS", r.body["amount"], r.body["currency"])
			}
		})
		t.Run("PublicKeyAndXApiKey", func(t *testing.T) {
			wantStatus(t, e.createSession(e.keys["test_public"], `{"amount": 100}`), http.StatusCreated)
			wantStatus(t, e.do("POST", "/v1/checkout/sessions", `{"amount": 100}`, "x-api-key", e.keys["test_secret"]), http.StatusCreated)
		})
		t.Run("UnverifiedWorkspaceLiveKeyMakesTestSession", func(t *testing.T) {
			r := e.createSession(e.keys["live_secret"], `{"amount": 100}`)
			wantStatus(t, r, http.StatusCreated)
			if r.body["livemode"] != false {
				t.Fatalf("livemode = %v; want false for an unverified workspace", r.body["livemode"])
			}
			_, keys := e.newWorkspace("Verified", true)
			if r := e.createSession(keys["live_secret"], `{"amount": 100}`); r.body["livemode"] != true {
				t.Fatalf("verified workspace, live key: livemode = %v; want true", r.body["livemode"])
			}
			if r := e.createSession(keys["test_secret"], `{"amount": 100}`); r.body["livemode"] != false {
				t.Fatalf("verified workspace, test key: livemode = %v; want false", r.body["livemode"])
			}
		})
		t.Run("ErrAuth", func(t *testing.T) {
			wantError(t, e.do("POST", "/v1/checkout/sessions", `{"amount": 1}`), 401, "Missing API key")
			wantError(t, e.createSession("svc_test_sec_nope", `{"amount": 1}`), 401, "Invalid API Key")
			wantError(t, e.createSession("garbage", `{"amount": 1}`), 401, "Invalid API Key")
			wantError(t, e.do("POST", "/v1/checkout/sessions", `{"amount": 1}`, "Authorization", "Basic eDp5"), 401, "Invalid API Key")
		})
		for _, tc := range []struct {
			name, body string
			status     int
			contains   string
		}{
			{"ErrAmountRequired", `{"currency": "XOF"}`, 400, "amount is required"},
			{"ErrAmountZero", `{"amount": 0}`, 400, "greater than 0"},
			{"ErrAmountNegative", `{"amount": -5}`, 400, "greater than 0"},
			{"ErrAmountString", `{"amount": "100"}`, 400, "amount must be a number"},
			{"ErrAmountHuge", `{"amount": 1e300}`, 400, "too large"},
			{"ErrAmountDecimalsXOF", `{"amount": 100.5}`, 400, "whole number for XOF"},
			{"ErrAmountDecimalsGHS", `{"amount": 1.005, "currency": "GHS"}`, 400, "more than 2 decimals"},
			{"ErrCurrency", `{"amount": 100, "currency": "JPY"}`, 400, "currency"},
			{"ErrEmail", `{"amount": 100, "customer_email": "awa@"}`, 400, "customer_email"},
			{"ErrPhoneNational", `{"amount": 100, "customer_phone": "0707123456"}`, 400, "international format"},
			{"ErrPhoneImpossible", `{"amount": 100, "customer_phone": "+225 12"}`, 400, "customer_phone"},
			{"ErrSuccessURL", `{"amount": 100, "success_url": "javascript:alert(1)"}`, 400, "success_url"},
			{"ErrCancelURLRelative", `{"amount": 100, "cancel_url": "/back"}`, 400, "cancel_url"},
			{"ErrLogoURL", `{"amount": 100, "merchant_logo": "ftp://x/logo.png"}`, 400, "merchant_logo"},
			{"ErrMetadataValue", `{"amount": 100, "metadata": {"n": 1}}`, 400, "metadata.n must be a string"},
			{"ErrMetadataType", `{"amount": 100, "metadata": [1]}`, 400, "metadata"},
			{"ErrNameType", `{"amount": 100, "customer_name": 7}`, 400, "customer_name must be a string"},
			{"ErrUnknownField", `{"amount": 100, "amout": 1}`, 400, "Unknown field \"amout\""},
			{"ErrMalformed", `{"amount": 100,`, 400, "truncated"},
			{"ErrSyntax", `{"amount": 100 x}`, 400, "not valid JSON"},
			{"ErrNotObject", `[1]`, 400, "JSON object"},
			{"ErrTwoObjects", `{"amount": 1}{"amount": 2}`, 400, "single JSON object"},
			{"ErrEmpty", ``, 400, "empty"},
			{"ErrDescriptionLong", `{"amount": 100, "description": "` + strings.Repeat("x", 1001) + `"}`, 400, "description"},
			{"ErrTooLarge", `{"description": "` + strings.Repeat("x", 1<<20) + `"}`, 413, "larger than"},
			{"ErrAmountHugeLiteral", `{"amount": 1` + strings.Repeat("0", 100000) + `}`, 400, "too large"},
			{"ErrAmountOverMax", `{"amount": 1000000000001}`, 400, "too large"},
			{"ErrFieldCase", `{"AMOUNT": 100}`, 400, `Unknown field "AMOUNT"`},
			{"ErrFieldCaseDuplicate", `{"amount": 1, "Amount": 2}`, 400, `Unknown field "Amount"`},
			{"ErrNULInName", `{"amount": 100, "customer_name": "\u0000x"}`, 400, "control character"},
			{"ErrNULInDescription", `{"amount": 100, "description": "a\u0000"}`, 400, "control character"},
			{"ErrNULInMetadata", `{"amount": 100, "metadata": {"k": "\u0000"}}`, 400, "NUL"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.createSession(e.keys["test_secret"], tc.body), tc.status, tc.contains)
			})
		}
		t.Run("ErrContentType", func(t *testing.T) {
			r := e.do("POST", "/v1/checkout/sessions", nil, append(bearer(e.keys["test_secret"]), "Content-Type", "text/plain")...)
			wantError(t, r, 415, "application/json")
		})
		t.Run("ErrMetadataTooManyKeys", func(t *testing.T) {
			md := map[string]string{}
			for i := range 51 {
				md[fmt.Sprint("k", i)] = "v"
			}
			wantError(t, e.createSession(e.keys["test_secret"], map[string]any{"amount": 1, "metadata": md}), 400, "at most 50")
		})
	})
}

func TestCreateSession_Idempotency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.keys["test_secret"]
		t.Run("Replay", func(t *testing.T) {
			first := e.createSession(key, `{"amount": 100, "metadata": {"order_id": "1"}}`, "Idempotency-Key", "order-1")
			wantStatus(t, first, http.StatusCreated)
			if first.header.Get("Idempotent-Replayed") != "" {
				t.Fatal("first request marked as replayed")
			}
			// Same request written differently is the same request.
			again := e.createSession(key, `{ "metadata": {"order_id": "1"}, "amount": 100.0 }`, "Idempotency-Key", "order-1")
			wantStatus(t, again, http.StatusOK)
			if again.header.Get("Idempotent-Replayed") != "true" || again.str("id") != first.str("id") {
				t.Fatalf("replay = %s (header %q); want the first session, replayed", again.raw, again.header.Get("Idempotent-Replayed"))
			}
		})
		t.Run("ReplayShowsCurrentState", func(t *testing.T) {
			first := e.createSession(key, `{"amount": 300}`, "Idempotency-Key", "order-3")
			e.do("POST", "/checkout/sandbox", map[string]string{"transactionId": first.str("id"), "issue": "succes"})
			again := e.createSession(key, `{"amount": 300}`, "Idempotency-Key", "order-3")
			if again.status != 200 || again.str("status") != "SUCCESS" {
				t.Fatalf("replay after payment = %d %s; want 200 with status SUCCESS", again.status, again.str("status"))
			}
		})
		t.Run("ErrOtherPayload", func(t *testing.T) {
			e.createSession(key, `{"amount": 100}`, "Idempotency-Key", "order-2")
			wantError(t, e.createSession(key, `{"amount": 200}`, "Idempotency-Key", "order-2"), 422, "different request")
		})
		t.Run("ScopedPerWorkspaceAndMode", func(t *testing.T) {
			a := e.createSession(key, `{"amount": 100}`, "Idempotency-Key", "shared")
			_, other := e.newWorkspace("Other", true)
			b := e.createSession(other["test_secret"], `{"amount": 100}`, "Idempotency-Key", "shared")
			c := e.createSession(other["live_secret"], `{"amount": 100}`, "Idempotency-Key", "shared")
			if b.status != 201 || c.status != 201 || a.str("id") == b.str("id") || b.str("id") == c.str("id") {
				t.Fatalf("statuses %d %d; ids %s %s %s; want three sessions", b.status, c.status, a.str("id"), b.str("id"), c.str("id"))
			}
		})
		t.Run("ErrKeyShape", func(t *testing.T) {
			wantError(t, e.createSession(key, `{"amount": 1}`, "Idempotency-Key", strings.Repeat("k", 256)), 400, "Idempotency-Key")
			wantError(t, e.createSession(key, `{"amount": 1}`, "Idempotency-Key", "has space"), 400, "Idempotency-Key")
		})
		t.Run("ConcurrentStorm", func(t *testing.T) {
			const n = 20
			results := make([]response, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { results[i] = e.createSession(key, `{"amount": 999}`, "Idempotency-Key", "storm") })
			}
			wg.Wait()
			created := 0
			for i, r := range results {
				if r.status == 201 {
					created++
				} else if r.status != 200 {
					t.Fatalf("request %d = %d %s", i, r.status, r.raw)
				}
				if r.str("id") != results[0].str("id") {
					t.Fatalf("request %d got %s; request 0 %s; want one session", i, r.str("id"), results[0].str("id"))
				}
			}
			if created != 1 {
				t.Fatalf("%d requests answered 201; want exactly 1", created)
			}
		})
	})
}

func TestSessionStatus(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		id := e.mustSession(e.keys["test_secret"], `{"amount": 2500}`)
		t.Run("OK", func(t *testing.T) {
			for _, k := range []string{"test_secret", "test_public"} {
				r := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys[k])...)
				wantStatus(t, r, 200)
				if r.str("status") != "PENDING" || r.body["paid"] != false || r.body["livemode"] != false || r.str("id") != id {
					t.Fatalf("status = %s", r.raw)
				}
			}
		})
		t.Run("ErrOtherWorkspace", func(t *testing.T) {
			_, other := e.newWorkspace("Other", false)
			wantStatus(t, e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(other["test_secret"])...), 404)
		})
		t.Run("ErrOtherMode", func(t *testing.T) {
			ws, keys := e.newWorkspace("Live shop", true)
			live := e.mustSession(keys["live_secret"], `{"amount": 100}`)
			wantStatus(t, e.do("GET", "/v1/checkout/sessions/"+live+"/status", nil, bearer(keys["test_secret"])...), 404)
			wantStatus(t, e.do("GET", "/v1/checkout/sessions/"+live+"/status", nil, bearer(keys["live_public"])...), 200)
			_ = ws
		})
		t.Run("ErrUnknown", func(t *testing.T) {
			for _, id := range []string{"cs_nope", "%00", "%ff%fe", "cs_" + strings.Repeat("a", 32)} {
				wantError(t, e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys["test_secret"])...), 404, "not found")
			}
		})
		t.Run("PublicKeyReadsNoPersonalData", func(t *testing.T) {
			id := e.mustSession(e.keys["test_secret"], `{"amount": 10, "customer_name": "Awa", "customer_email": "awa@example.com", "customer_phone": "+221771234567", "metadata": {"order_id": "9", "note": "x"}}`)
			pub := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys["test_public"])...)
			if pub.body["customer_name"] != nil || pub.body["customer_email"] != nil || pub.body["customer_phone"] != nil || len(pub.body["metadata"].(map[string]any)) != 0 {
				t.Fatalf("public key read %s", pub.raw)
			}
			if pub.str("status") != "PENDING" || pub.body["paid"] != false || pub.str("order_id") != "9" {
				t.Fatalf("public key read %s; want status, paid and order_id", pub.raw)
			}
			sec := e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil, bearer(e.keys["test_secret"])...)
			if sec.str("customer_email") != "awa@example.com" {
				t.Fatalf("secret key read %s; want the whole session", sec.raw)
			}
		})
		t.Run("ErrNoKey", func(t *testing.T) {
			wantError(t, e.do("GET", "/v1/checkout/sessions/"+id+"/status", nil), 401, "Missing API key")
		})
	})
}

func TestSessionMethods(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		id := e.mustSession(e.keys["test_public"], `{"amount": 2500}`)
		methods := func(query string) (response, []map[string]any) {
			r := e.do("GET", "/v1/checkout/sessions/"+id+"/methods"+query, nil, bearer(e.keys["test_public"])...)
			var list []map[string]any
			for _, m := range r.body["methods"].([]any) {
				list = append(list, m.(map[string]any))
			}
			return r, list
		}
		t.Run("Country", func(t *testing.T) {
			for _, q := range []string{"?country=sn", "?country=SN", "?country=S%C3%A9n%C3%A9gal", "?country=Senegal"} {
				r, list := methods(q)
				wantStatus(t, r, 200)
				if r.str("id") != id || r.str("currency") != "XOF" {
					t.Fatalf("%s: envelope = %s", q, r.raw)
				}
				var mm, cards int
				for _, m := range list {
					switch m["type"] {
					case "MOBILE_MONEY":
						mm++
						if m["flag"] != "SN" || m["country"] != "Senegal" || m["provider"] != "sandbox" || m["gatewayId"] != "sandbox" || m["code"] == "" || !strings.HasPrefix(m["logo"].(string), "/static/logos/") {
							t.Fatalf("%s: method = %v", q, m)
						}
					case "CARD":
						cards++
					}
				}
				if mm != 3 || cards != 2 {
					t.Fatalf("%s: %d mobile money and %d card methods; want 3 and 2", q, mm, cards)
				}
			}
		})
		t.Run("AllCountriesOfTheCurrency", func(t *testing.T) {
			_, list := methods("")
			xof := map[string]bool{"BJ": true, "BF": true, "CI": true, "ML": true, "NE": true, "SN": true, "TG": true}
			mm := 0
			for _, m := range list {
				if m["type"] == "MOBILE_MONEY" {
					mm++
					if !xof[m["flag"].(string)] {
						t.Fatalf("an XOF session lists %v", m)
					}
				}
			}
			if mm != 17 {
				t.Fatalf("%d operators for an XOF session; want the 17 of the XOF countries", mm)
			}
		})
		t.Run("CountryOfAnotherCurrency", func(t *testing.T) {
			_, list := methods("?country=gh")
			if len(list) != 2 || list[0]["type"] != "CARD" {
				t.Fatalf("Ghana's operators for an XOF session = %v; want the cards only", list)
			}
		})
		t.Run("LiveSessionFromGateways", func(t *testing.T) {
			ws, keys := e.newWorkspace("Live shop", true)
			add := func(provider string, live, enabled, collect bool, countries ...string) string {
				p, _ := gateway.Lookup(provider)
				routes, err := p.Routes(countries)
				if err != nil {
					t.Fatal(err)
				}
				g := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: ws.ID, Provider: provider, Name: provider, Live: live,
					Collect: collect, Enabled: enabled, Routes: routes, CreatedAt: e.clock.Now()}
				if err := st.CreateGateway(context.Background(), g, map[string]string{"secret_key": "sk_live_x", "api_token": "x"}); err != nil {
					t.Fatal(err)
				}
				return g.ID
			}
			live := e.mustSession(keys["live_secret"], `{"amount": 5000}`)
			r := e.do("GET", "/v1/checkout/sessions/"+live+"/methods", nil, bearer(keys["live_public"])...)
			if len(r.body["methods"].([]any)) != 0 {
				t.Fatalf("live session without gateways = %s", r.raw)
			}
			pp := add("pawapay", true, true, true, "CI", "SN", "GH")
			add("pawapay", false, true, true, "CI")  // sandbox credentials: not for live sessions
			add("pawapay", true, false, true, "BF")  // disabled
			add("cinetpay", true, true, false, "ML") // does not collect
			fp := add("fedapay", true, true, true, "BJ")
			r = e.do("GET", "/v1/checkout/sessions/"+live+"/methods?country=sn", nil, bearer(keys["live_public"])...)
			var got []string
			for _, m := range r.body["methods"].([]any) {
				m := m.(map[string]any)
				got = append(got, fmt.Sprint(m["code"], "/", m["gatewayId"] == pp, "/", m["gatewayId"] == fp, "/", m["provider"]))
			}
			want := []string{"FREE_SEN/true/false/pawapay", "ORANGE_SEN/true/false/pawapay", "WAVE_SEN/true/false/pawapay",
				"CARD_UEMOA/false/true/fedapay", "CARD_INTERNATIONAL/false/true/fedapay"}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("live methods for Senegal:\n got %v\nwant %v", got, want)
			}
			r = e.do("GET", "/v1/checkout/sessions/"+live+"/methods", nil, bearer(keys["live_public"])...)
			if n := len(r.body["methods"].([]any)); n != 3+3+3+2 { // SN, CI (pawaPay), BJ (FedaPay), cards; not GH (another currency)
				t.Fatalf("%d live methods; want 11: %s", n, r.raw)
			}
		})
		t.Run("UnservedCountryCardsOnly", func(t *testing.T) {
			_, list := methods("?country=fr")
			if len(list) != 2 || list[0]["type"] != "CARD" {
				t.Fatalf("methods for fr = %v; want the two card methods", list)
			}
		})
		t.Run("ErrCountry", func(t *testing.T) {
			r := e.do("GET", "/v1/checkout/sessions/"+id+"/methods?country=Atlantis", nil, bearer(e.keys["test_public"])...)
			wantError(t, r, 400, "country")
		})
		t.Run("LogoServed", func(t *testing.T) {
			_, list := methods("?country=ci")
			r := e.do("GET", list[0]["logo"].(string), nil)
			if r.status != 200 || !strings.Contains(r.raw, "<svg") || r.header.Get("Content-Type") != "image/svg+xml" {
				t.Fatalf("logo = %d %q", r.status, r.raw)
			}
		})
	})
}
