package orangemoney

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestConformance holds the connector to OM WebPay's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run).
func TestConformance(t *testing.T) {
	fixture := gatewaytest.Fixture
	body := func(b string) gatewaytest.Reply { return gatewaytest.Reply{Body: b} }
	providerRef := payToken1 + "|1200"
	status := func(o gateway.Outcome, reason string) gateway.Status {
		return gateway.Status{Outcome: o, ProviderRef: providerRef, Reason: reason}
	}
	// A documented status, answered 200 and 201 (which one OM answers is
	// not known: SOURCES.md).
	both := func(name string, want gateway.Status) []gatewaytest.Case {
		return []gatewaytest.Case{{Reply: fixture(name), Want: want},
			{Reply: gatewaytest.Reply{Fixture: name, Code: http.StatusCreated}, Want: want}}
	}
	var statuses []gatewaytest.Case
	for _, c := range [][]gatewaytest.Case{
		both("transactionstatus_success.json", status(gateway.Succeeded, "")),
		both("transactionstatus_initiated.json", status(gateway.Pending, "")),
		both("transactionstatus_pending.json", status(gateway.Pending, "")),
		both("transactionstatus_expired.json", status(gateway.Failed, "expired")),
		both("transactionstatus_failed.json", status(gateway.Failed, "failed")),
	} {
		statuses = append(statuses, c...)
	}
	statuses = append(statuses,
		gatewaytest.Case{Reply: body(`{"status":"success"}`), Want: status(gateway.Succeeded, "")},
		gatewaytest.Case{Reply: body(`{"status":"REFUNDED"}`), Err: &gatewaytest.Err{Contains: "unknown"}},
		gatewaytest.Case{Reply: body(`{"status":""}`), Err: &gatewaytest.Err{Transient: true}},
		gatewaytest.Case{Reply: body(`{}`), Err: &gatewaytest.Err{Transient: true}},
	)

	notification := fixture("notification_success.json")
	query := func(q string) http.Header { return http.Header{gateway.CallbackQueryHeader: {q}} }
	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, ClientID: "cid", ClientSecret: "csecret",
				MerchantKey: "a4b7c123", MerchantName: "Boutique Awa", HTTP: hc}
		},
		Setup:      map[string]gatewaytest.Reply{tokenCall: fixture("token.json")},
		TokenCall:  tokenCall,
		Collection: collection(ref1),
		Initiation: webpayCall,
		Initiated: gatewaytest.Case{Reply: gatewaytest.Reply{Fixture: "webpayment_created.json", Code: http.StatusCreated},
			Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: providerRef,
				RedirectURL: "https://webpayment-ow-sb.orange-money.com/payment/pay_token/" + payToken1}},
		// OM keeps the web payment under our order_id: not our reference
		// but its first 30 letters and digits (OrderID: at most 30).
		Reference: func(body []byte, _ string) string {
			var m struct {
				OrderID string `json:"order_id"`
			}
			json.Unmarshal(body, &m)
			return m.OrderID
		},
		KeptAs:  OrderID,
		Request: "webpayment_request.json",
		Collect: []gatewaytest.Case{
			{Reply: gatewaytest.Reply{Fixture: "error_webpayment_refused.json", Code: http.StatusBadRequest},
				Want: gateway.Status{Outcome: gateway.Failed, Reason: "400 1101: Bad Request (Invalid merchant_key)"}},
			// The token refused, then a new one refused too: the
			// gateway's credentials, a lasting error in Orange's words.
			{Reply: gatewaytest.Reply{Fixture: "error_expired_credentials.json", Code: http.StatusUnauthorized},
				Err: &gatewaytest.Err{Contains: "Expired credentials"}},
		},
		StatusRef: gateway.Ref{Reference: ref1, ProviderRef: providerRef},
		Status:    statuses,
		// The notification names the payment only through the query of
		// the notif_url we gave (ref=), passed in CallbackQueryHeader.
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "from the query", Header: query("ref=" + url.QueryEscape(ref1)), Body: notification, Want: ref1},
			{Name: "among other params", Header: query("v=2&ref=" + ref1), Body: notification, Want: ref1},
			{Name: "query wins over body", Header: query("ref=" + ref1), Body: body(`{"status":"SUCCESS","order_id":"other"}`), Want: ref1},
			{Name: "order_id in the body", Header: http.Header{}, Body: body(`{"status":"SUCCESS","notif_token":"n","order_id":"FAC202401"}`), Want: "FAC202401"},
			{Name: "query without ref", Header: query("v=2"), Body: body(`{"status":"FAILED","order_id":"FAC202401"}`), Want: "FAC202401"},
			{Name: "documented body alone", Header: http.Header{}, Body: notification, Err: true},
			{Name: "empty ref", Header: query("ref="), Body: notification, Err: true},
			{Name: "not JSON", Header: query("ref=" + ref1), Body: body("status=SUCCESS"), Err: true},
			{Name: "ref in another header", Header: http.Header{"Ref": {ref1}}, Body: notification, Err: true},
		},
	})
}

// TestToken_NoAnswer: a token request that gets no answer in time is
// transient, and the call it was for was never sent.
func TestToken_NoAnswer(t *testing.T) {
	srv, _ := newAnswers(t)
	srv.Delay(tokenCall, 500*time.Millisecond)
	srv.Set("", http.StatusCreated, gatewaytest.Golden(t, "webpayment_created.json"))
	c := &Client{BaseURL: srv.URL, ClientID: "cid", ClientSecret: "csecret", MerchantKey: "a4b7c123", HTTP: &http.Client{Timeout: 200 * time.Millisecond}}
	ctx := context.Background()
	_, cerr := c.Collect(ctx, collection(ref1))
	_, serr := c.CollectionStatus(ctx, gateway.Ref{Reference: ref1, ProviderRef: payToken1 + "|1200"})
	for _, err := range []error{cerr, serr} {
		if e := gateway.ErrorOf(err); e == nil || !e.Transient || !e.NotSent || e.Answered {
			t.Errorf("no token in time: %v; want transient, not sent", err)
		}
	}
	for _, call := range srv.Calls() {
		if call != tokenCall {
			t.Errorf("%s sent without a token", call)
		}
	}
}
