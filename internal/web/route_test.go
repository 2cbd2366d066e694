package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestRoute_Errors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := bearer(e.keys["test_secret"])
		ok := map[string]any{"country": "SN", "amount": 5000, "availableProviders": []string{"pawapay", "cinetpay"}}
		wantStatus(t, e.do("POST", "/v1/route", ok, key...), 200)
		wantError(t, e.do("POST", "/v1/route", ok), 401, "Missing API key")
		wantError(t, e.do("POST", "/v1/route", ok, bearer(e.keys["test_public"])...), 401, "secret key")
		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{with(ok, "country", nil), "country is required"},
			{with(ok, "country", "Senegal"), "alpha-2"},
			{with(ok, "country", "FR"), "not served"},
			{with(ok, "amount", nil), "amount is required"},
			{with(ok, "amount", "5000"), "amount is required and must be a number"},
			{with(ok, "amount", 0), "greater than 0"},
			{with(ok, "availableProviders", nil), "availableProviders is required"},
			{with(ok, "availableProviders", []string{}), "availableProviders is required"},
			{with(ok, "availableProviders", []string{"stripe"}), `provider "stripe" is unknown`},
			{with(ok, "paymentMethod", "mpesa"), "not an operator of SN"},
			{with(ok, "phone", "+2250707123456"), "not a phone number of SN"},
			{with(ok, "currency", "ABC"), "currency"},
			{with(ok, "unknown", 1), "Unknown field"},
		} {
			wantError(t, e.do("POST", "/v1/route", c.body, key...), 400, c.want)
		}
		wantError(t, e.do("GET", "/v1/route", nil), 400, "country is required")
		wantError(t, e.do("GET", "/v1/route?country=SN&providers=pawapay,nope", nil), 400, "unknown")
	})
}

func TestRoute_Answers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := bearer(e.keys["test_secret"])
		r := e.do("POST", "/v1/route", map[string]any{"country": "ci", "amount": 2500, "availableProviders": []string{"PawaPay", "cinetpay", "paystack"},
			"phone": "07 07 12 34 56"}, key...)
		routingObj := r.body["routing"].(map[string]any)
		if r.status != 200 || r.str("detectedOperator") != "orange_money" || routingObj["provider"] != "pawapay" ||
			!strings.HasPrefix(routingObj["reason"].(string), "cold_start_prior:") {
			t.Fatalf("route = %d %s", r.status, r.raw)
		}
		if alt := routingObj["alternates"].([]any); len(alt) != 1 || alt[0] != "cinetpay" {
			t.Fatalf("alternates = %v; want cinetpay only (paystack does not serve CI)", alt)
		}
		if !strings.Contains(r.raw, `{"method":"orange_money","providers":["cinetpay","pawapay"]}`) || !strings.Contains(r.raw, `{"method":"card_uemoa","providers":["cinetpay"]}`) {
			t.Fatalf("availableMethods = %s", r.raw)
		}
		// Outcomes change the ranking: cinetpay succeeds, pawapay stops answering.
		ctx := context.Background()
		for range 30 {
			e.srv.Router.Record(ctx, routing.Key{Provider: "cinetpay", Country: "CI", Operator: "orange_money", Kind: routing.Collect}, routing.Success, 0)
		}
		for range 3 {
			e.srv.Router.RecordCall(ctx, "pawapay", false, 15*time.Second)
		}
		r = e.do("POST", "/v1/route", map[string]any{"country": "CI", "amount": 2500, "availableProviders": []string{"pawapay", "cinetpay"},
			"paymentMethod": "orange_money"}, key...)
		routingObj = r.body["routing"].(map[string]any)
		ranked := r.body["rankedProviders"].([]any)
		if routingObj["provider"] != "cinetpay" || !strings.HasPrefix(routingObj["reason"].(string), "provider_down:") || r.body["detectedOperator"] != nil ||
			ranked[1].(map[string]any)["score"] != 0.0 {
			t.Fatalf("route after an outage = %s", r.raw)
		}
		if c := routingObj["confidence"].(float64); c <= 0 || c > 1 {
			t.Fatalf("confidence = %v", c)
		}
		g := e.do("GET", "/v1/route?country=CI&providers=pawapay,cinetpay", nil)
		if g.status != 200 || g.str("currency") != "XOF" || !strings.Contains(g.raw, `"rankedProviders":[{"provider":"cinetpay"`) {
			t.Fatalf("overview = %d %s", g.status, g.raw)
		}
	})
}

// TestRoute_PageFollowsTheRanking: the hosted page's payment goes to the
// gateway of the best-ranked provider, whichever gateway the page listed,
// and the attempt says why.
func TestRoute_PageFollowsTheRanking(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Ranked shop", true)
		listed, _, _ := e.addSimulatedGateway(ws, "SN")
		e.clock.Add(time.Second)
		better, _ := e.addGateway(ws, "cinetpay", &cinetpay.Simulator{APIKey: "api-sim", SiteID: "445160", SecretKey: "secret-sim"}, cinetpayCreds, "SN")
		ctx := context.Background()
		for range 40 {
			e.srv.Router.Record(ctx, routing.Key{Provider: "cinetpay", Country: "SN", Operator: "wave", Kind: routing.Collect}, routing.Success, 0)
			e.srv.Router.Record(ctx, routing.Key{Provider: "pawapay", Country: "SN", Operator: "wave", Kind: routing.Collect}, routing.Declined, 0)
		}
		id := e.mustSession(keys["live_public"], `{"amount": 5000}`)
		r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": listed.ID, "code": "WAVE_SEN", "phone": "771234567"})
		attempts, _ := st.Attempts(ctx, id)
		if r.status != 200 || len(attempts) != 1 || attempts[0].GatewayID != better.ID || !strings.HasPrefix(attempts[0].RouteReason, "success_rate:") {
			t.Fatalf("initiate = %d %s, attempts = %+v; want the payment through CinetPay, ranked first, with its reason", r.status, r.raw, attempts)
		}
	})
}
