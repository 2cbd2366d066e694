package mtnmomo

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// referenceIDs records the X-Reference-Id of each initiation the connector
// sends ("METHOD /path"): MTN keeps a request to pay or a transfer under
// that header, which the suite's Reference (body and query only) cannot
// see.
type referenceIDs struct {
	mu   sync.Mutex
	last map[string]string
	base http.RoundTripper
}

func (r *referenceIDs) RoundTrip(req *http.Request) (*http.Response, error) {
	if id := req.Header.Get("X-Reference-Id"); id != "" {
		r.mu.Lock()
		r.last[req.Method+" "+req.URL.Path] = id
		r.mu.Unlock()
	}
	return r.base.RoundTrip(req)
}

// of is the X-Reference-Id of the last call named call.
func (r *referenceIDs) of(call string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[call]
}

// TestConformance holds the connector to MTN MoMo's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run).
func TestConformance(t *testing.T) {
	const (
		requestToPay = "POST /collection/v1_0/requesttopay"
		transfer     = "POST /disbursement/v1_0/transfer"
	)
	pending := gatewaytest.Pending
	failed := gatewaytest.Failed
	fixture := gatewaytest.Fixture
	answer := func(code int, name string) gatewaytest.Reply { return gatewaytest.Reply{Fixture: name, Code: code} }
	body := func(code int, body string) gatewaytest.Reply { return gatewaytest.Reply{Body: body, Code: code} }
	// MTN answers an initiation it queued 202 with no body (SOURCES.md,
	// "Confirmed": momodeveloper.mtn.com callback guide).
	queued := body(http.StatusAccepted, "")
	ids := &referenceIDs{last: map[string]string{}, base: http.DefaultTransport}
	// MTN keeps the transaction under X-Reference-Id, our reference; its
	// body's externalId is ours too (held by Request).
	keptAs := func(call string) func([]byte, string) string {
		return func([]byte, string) string { return ids.of(call) }
	}
	lasting := &gatewaytest.Err{}
	transient := &gatewaytest.Err{Transient: true}

	col := collection(ref1, "+256772123456") // requesttopay_request.json
	p := payout(payRef, "+250788123456")     // transfer_request.json
	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			c := &Client{BaseURL: baseURL, Environment: "mtnuganda", CollectionKey: "ck", DisbursementKey: "dk",
				APIUser: "u", APIKey: "k", HTTP: &http.Client{Timeout: hc.Timeout, Transport: ids}}
			return c
		},
		Setup: map[string]gatewaytest.Reply{
			"POST /collection/token/":   fixture("token.json"),
			"POST /disbursement/token/": fixture("token.json"),
		},
		TokenCall: "POST /collection/token/",

		Collection: col,
		Initiation: requestToPay,
		Initiated:  gatewaytest.Case{Reply: queued, Want: pending},
		Reference:  keptAs(requestToPay),
		Request:    "requesttopay_request.json",
		Collect: []gatewaytest.Case{
			// 409: a request to pay already received under our reference (ours, sent again): it goes on.
			{Reply: answer(http.StatusConflict, "error_already_exist.json"), Want: pending},
			// The payer's funds are the payer's business: never the merchant's low balance.
			{Reply: answer(http.StatusBadRequest, "error_not_enough_funds.json"), Want: failed("400 NOT_ENOUGH_FUNDS: The payer does not have enough funds.")},
			{Reply: body(http.StatusBadRequest, `{"code":"PAYER_NOT_FOUND","message":"Payer does not exist"}`), Want: failed("400 PAYER_NOT_FOUND: Payer does not exist")},
			{Reply: body(http.StatusBadRequest, ""), Want: failed("400 Bad Request")},
			// A 403 is the account's, not the payment's: a lasting error.
			{Reply: body(http.StatusForbidden, `{"code":"NOT_ALLOWED","message":"Authorization failed."}`), Err: lasting},
			// Answers that conclude nothing: the request to pay may have been queued.
			{Reply: body(http.StatusInternalServerError, `{"code":"INTERNAL_PROCESSING_ERROR","message":"An internal error occurred."}`), Err: transient},
			{Reply: body(http.StatusOK, `{"status": `), Err: transient},
			// The token refused: lasting, and the request to pay never left.
			{Replies: map[string]gatewaytest.Reply{"POST /collection/token/": answer(http.StatusUnauthorized, "token_refused.json")},
				Err: &gatewaytest.Err{NotSent: true, Contains: "login_failed"}},
			{Replies: map[string]gatewaytest.Reply{"POST /collection/token/": answer(http.StatusUnauthorized, "error_subscription_key.json")},
				Err: &gatewaytest.Err{NotSent: true, Contains: "invalid subscription key"}},
			// The token endpoint failing: transient, and nothing sent.
			{Replies: map[string]gatewaytest.Reply{"POST /collection/token/": body(http.StatusInternalServerError, `{"message":"internal error"}`)},
				Err: &gatewaytest.Err{Transient: true, NotSent: true}},
			{Replies: map[string]gatewaytest.Reply{"POST /collection/token/": body(http.StatusOK, `{}`)},
				Err: &gatewaytest.Err{Transient: true, NotSent: true}},
			{Replies: map[string]gatewaytest.Reply{"POST /collection/token/": body(http.StatusOK, `{"access_token": `)},
				Err: &gatewaytest.Err{Transient: true, NotSent: true}},
		},
		StatusRef: gateway.Ref{Reference: ref1},
		Status: []gatewaytest.Case{
			{Reply: fixture("requesttopay_pending.json"), Want: pending},
			{Reply: fixture("requesttopay_successful.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "23503452"}},
			{Reply: fixture("callback_requesttopay_successful.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "1498267823"}},
			{Reply: fixture("requesttopay_failed.json"), Want: failed("NOT_ENOUGH_FUNDS")},
			{Reply: fixture("requesttopay_failed_reason_object.json"), Want: failed("APPROVAL_REJECTED: The payer rejected the request.")},
			{Reply: answer(http.StatusNotFound, "error_not_found.json"), Want: gateway.Status{Outcome: gateway.NotFound}},
			{Reply: answer(http.StatusNotFound, "error_not_found_spaced.json"), Want: gateway.Status{Outcome: gateway.NotFound}},
			// The schema's other shapes: ids as numbers or null, a status in
			// lower case, a failure without a reason; the payer's funds are
			// never the merchant's low balance.
			{Reply: body(200, `{"status":"SUCCESSFUL","financialTransactionId":987654321}`), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "987654321"}},
			{Reply: body(200, `{"status":"SUCCESSFUL","financialTransactionId":null}`), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: body(200, `{"status":"successful"}`), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: body(200, `{"status":"FAILED","reason":"APPROVAL_REJECTED"}`), Want: failed("APPROVAL_REJECTED")},
			{Reply: body(200, `{"status":"FAILED","reason":{"code":"NOT_ENOUGH_FUNDS","message":"Not enough funds."}}`), Want: failed("NOT_ENOUGH_FUNDS: Not enough funds.")},
			{Reply: body(200, `{"status":"FAILED"}`), Want: failed("FAILED")},
			{Reply: body(200, `{"status":"FAILED","reason":null}`), Want: failed("FAILED")},
			// Never a conclusion: a 404 without MTN's code (a wrong address), a refusal, a status MTN does not document.
			{Reply: body(http.StatusNotFound, `{"statusCode":404,"message":"Resource not found"}`), Err: lasting},
			{Reply: body(http.StatusNotFound, ""), Err: lasting},
			{Reply: body(http.StatusBadRequest, `{"code":"BAD_REQUEST","message":"x"}`), Err: lasting},
			{Reply: body(http.StatusOK, `{"status":"CREATED"}`), Err: lasting},
			{Reply: body(http.StatusOK, `{"status":"REJECTED"}`), Err: lasting},
			{Reply: body(http.StatusOK, `{}`), Err: lasting},
			{Reply: body(http.StatusInternalServerError, `{}`), Err: transient},
			{Reply: body(http.StatusOK, `{"status": `), Err: transient},
			{Reply: body(http.StatusOK, `{"status":"SUCCESSFUL","reason":[1]}`), Err: transient},
		},
		// MTN's callbacks are unsigned (SOURCES.md: it describes no
		// signature): nothing to forge, only a signal a status read
		// confirms. Refused: those that name no transaction.
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "request to pay successful", Body: fixture("callback_requesttopay_successful.json"), Want: ref1},
			{Name: "request to pay failed", Body: fixture("requesttopay_failed.json"), Want: "c1f4687688585858a173f12"},
			{Name: "externalId as a number", Body: fixture("requesttopay_successful.json"), Want: "947354"},
			{Name: "transfer failed", Body: fixture("transfer_failed_not_enough_funds.json"), Want: payRef},
			{Name: "referenceId preferred", Body: body(0, `{"referenceId":"`+ref1+`","externalId":"order-1","status":"SUCCESSFUL"}`), Want: ref1},
			{Name: "no id", Body: body(0, `{}`), Err: true},
			{Name: "status only", Body: body(0, `{"status":"SUCCESSFUL"}`), Err: true},
			{Name: "blank externalId", Body: body(0, `{"externalId":"  "}`), Err: true},
			{Name: "externalId an object", Body: body(0, `{"externalId":{"a":1}}`), Err: true},
			{Name: "not JSON", Body: body(0, `not json`), Err: true},
		},

		Payout: &gatewaytest.PayoutSpec{
			Payout:     p,
			Initiation: transfer,
			Initiated:  gatewaytest.Case{Reply: queued, Want: pending},
			Reference:  keptAs(transfer),
			Request:    "transfer_request.json",
			Sent: []gatewaytest.Case{
				{Reply: answer(http.StatusConflict, "error_already_exist.json"), Want: pending},
				// The merchant's disbursement account lacks the funds.
				{Reply: answer(http.StatusBadRequest, "error_not_enough_funds.json"), Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true,
					Reason: "400 NOT_ENOUGH_FUNDS: The payer does not have enough funds."}},
				{Reply: body(http.StatusBadRequest, `{"code":"PAYEE_NOT_FOUND","message":"Payee does not exist"}`), Want: failed("400 PAYEE_NOT_FOUND: Payee does not exist")},
				{Reply: body(http.StatusInternalServerError, `{"code":"INTERNAL_PROCESSING_ERROR","message":"x"}`), Err: transient},
			},
			StatusRef: gateway.Ref{Reference: payRef},
			Status: []gatewaytest.Case{
				{Reply: fixture("transfer_successful.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "363440463"}},
				{Reply: fixture("transfer_failed_not_enough_funds.json"), Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true, Reason: "NOT_ENOUGH_FUNDS"}},
				{Reply: answer(http.StatusNotFound, "error_not_found.json"), Want: gateway.Status{Outcome: gateway.NotFound}},
				{Reply: body(200, `{"status":"PENDING"}`), Want: pending},
				{Reply: body(200, `{"status":"SUCCESSFUL","financialTransactionId":987654321}`), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "987654321"}},
				// The merchant's funds, in either shape of reason; another reason is not.
				{Reply: body(200, `{"status":"FAILED","reason":{"code":"NOT_ENOUGH_FUNDS","message":"Not enough funds."}}`),
					Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true, Reason: "NOT_ENOUGH_FUNDS: Not enough funds."}},
				{Reply: body(200, `{"status":"FAILED","reason":{"code":"PAYEE_NOT_FOUND"}}`), Want: failed("PAYEE_NOT_FOUND")},
				{Reply: body(200, `{"status":"FAILED"}`), Want: failed("FAILED")},
				{Reply: body(http.StatusInternalServerError, `{}`), Err: transient},
			},
		},
	})
}

// TestTokenNoAnswer: the token endpoint does not answer in time: the call
// the token was for never left (transient, NotSent), so the service knows
// nothing was started.
func TestTokenNoAnswer(t *testing.T) {
	a := gatewaytest.NewAnswers(t)
	a.Set("", http.StatusOK, gatewaytest.Golden(t, "token.json"))
	a.Delay("", 500*time.Millisecond)
	c := &Client{BaseURL: a.URL, CollectionKey: "ck", DisbursementKey: "dk", APIUser: "u", APIKey: "k",
		HTTP: &http.Client{Timeout: 200 * time.Millisecond}}
	ctx := context.Background()
	for name, call := range map[string]func() (gateway.Status, error){
		"collect": func() (gateway.Status, error) { return c.Collect(ctx, collection(ref1, "+256772123456")) },
		"payout":  func() (gateway.Status, error) { return c.Payout(ctx, payout(payRef, "+250788123456")) },
	} {
		if st, err := call(); !gateway.IsTransient(err) || gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || st.Outcome != "" {
			t.Errorf("%s, token not answered: %+v, %v; want transient, not sent", name, st, err)
		}
	}
	for _, call := range a.Calls() {
		if call != "POST /collection/token/" && call != "POST /disbursement/token/" {
			t.Errorf("%s sent without a token", call)
		}
	}
}
