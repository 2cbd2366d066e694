package mpesa

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestConformance holds the connector to Daraja's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run).
func TestConformance(t *testing.T) {
	fixture := gatewaytest.Fixture
	answer := func(code int, name string) gatewaytest.Reply { return gatewaytest.Reply{Fixture: name, Code: code} }
	body := func(code int, body string) gatewaytest.Reply { return gatewaytest.Reply{Body: body, Code: code} }
	lasting := &gatewaytest.Err{}
	transient := &gatewaytest.Err{Transient: true}
	tokenAnswer := func(code int, words string) gatewaytest.Case {
		return gatewaytest.Case{Replies: map[string]gatewaytest.Reply{tokenCall: body(code, words)}}
	}

	// The status query's answer names its push, and an answer about
	// another push is an error (resultStatus). The suite reads every
	// status case with one StatusRef: the push of the documented cancelled
	// answer and of the processing one. The documented successful answer
	// is about another push: read as such (an error), and read with its
	// CheckoutRequestID made StatusRef's, nothing else changed.
	const id = "ws_CO_27072017151044001"
	succeeded := gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}
	pending := gateway.Status{Outcome: gateway.Pending, ProviderRef: id}
	failed := func(reason string) gateway.Status {
		return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: reason}
	}
	success := strings.ReplaceAll(string(gatewaytest.Golden(t, "stkpushquery_success.json")), "ws_CO_13012021093521236557", id)

	const b2cCall = "POST " + b2cPath
	tokenRefused := func(c gatewaytest.Case) gatewaytest.Case { c.Err = &gatewaytest.Err{NotSent: true}; return c }
	tokenFailing := func(c gatewaytest.Case) gatewaytest.Case {
		c.Err = &gatewaytest.Err{Transient: true, NotSent: true}
		return c
	}
	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			c := &Client{BaseURL: baseURL, ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
				InitiatorName: "testapi", SecurityCredential: "EsJocK7+NjqZPC3I3EO+TbvS+xVb9TymWwaKABoaZr/Z/n0UysSs..", B2CShortCode: "600996",
				HTTP: hc, Now: func() time.Time { return documentedTime }}
			return c
		},
		Setup:     map[string]gatewaytest.Reply{tokenCall: fixture("token.json")},
		TokenCall: tokenCall,

		// The portal's example push (stkpush_request.json, testdata/SOURCES.md).
		Collection: gateway.Collection{Reference: "Test", Amount: 100, Currency: "KES", Phone: "+254708920430", Description: "Test",
			NotifyURL: "https://mydomain.com/path"},
		Initiation: pushCall,
		Initiated: gatewaytest.Case{Reply: fixture("stkpush_accepted.json"),
			Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "ws_CO_191220191020363925"}},
		// No Reference: Daraja takes no id of ours (no idempotency key, no
		// look-up by our reference); it keeps the push under its own
		// CheckoutRequestID, handed to Collection.Created.
		Request: "stkpush_request.json",
		Collect: []gatewaytest.Case{
			{Reply: body(200, `{"CheckoutRequestID":"ws_CO_1","ResponseCode":0}`), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "ws_CO_1"}},
			{Reply: answer(http.StatusBadRequest, "error_invalid_phone.json"), Want: gateway.Status{Outcome: gateway.Failed,
				Reason: "400 400.002.02: Bad Request - Invalid PhoneNumber"}},
			{Reply: body(http.StatusBadRequest, ""), Want: gateway.Status{Outcome: gateway.Failed, Reason: "400 Bad Request"}},
			{Reply: body(200, `{"MerchantRequestID":"1-2-1","ResponseCode":"1","ResponseDescription":"Rejected"}`),
				Want: gateway.Status{Outcome: gateway.Failed, Reason: "200 1: Rejected"}},
			// Answers that conclude nothing: the push may have been sent.
			{Reply: body(500, `{"requestId":"r","errorCode":"500.001.1001","errorMessage":"Unable to lock subscriber, a transaction is already in process for the current subscriber"}`),
				Err: &gatewaytest.Err{Transient: true, Contains: "Unable to lock subscriber"}},
			{Reply: body(200, `{"ResponseCode": `), Err: &gatewaytest.Err{Transient: true, Contains: "unreadable"}},
			{Reply: body(200, `{"ResponseCode":"0"}`), Err: &gatewaytest.Err{Transient: true, Contains: "CheckoutRequestID"}},
			{Reply: body(http.StatusAccepted, `{}`), Err: &gatewaytest.Err{Transient: true, Contains: "202"}},
			{Reply: body(http.StatusTooManyRequests, `{"errorCode":"429.001.01","errorMessage":"Spike arrest violation"}`),
				Err: &gatewaytest.Err{Transient: true, Contains: "Spike arrest"}},
			// Not the payment's fault: lasting errors.
			{Reply: body(http.StatusForbidden, `{}`), Err: lasting},
			{Reply: body(http.StatusNotFound, `{"requestId":"r","errorCode":"404.001.01","errorMessage":"Resource not found"}`), Err: lasting},
			{Reply: body(http.StatusMethodNotAllowed, ""), Err: lasting},
			// Invalid Access Token, again after a new token: the credentials.
			{Reply: answer(http.StatusNotFound, "error_invalid_token.json"), Err: &gatewaytest.Err{Contains: "Invalid Access Token"}},
			// The token refused: lasting, and the push never left; the
			// token endpoint failing: transient, nothing sent.
			tokenRefused(tokenAnswer(http.StatusBadRequest, `{"requestId":"r","errorCode":"400.008.01","errorMessage":"Invalid Authentication passed"}`)),
			tokenRefused(tokenAnswer(http.StatusUnauthorized, ``)),
			tokenFailing(tokenAnswer(http.StatusInternalServerError, `{}`)),
			tokenFailing(tokenAnswer(http.StatusOK, `{"access_token": `)),
			tokenFailing(tokenAnswer(http.StatusOK, `{"expires_in":"3599"}`)),
		},
		StatusRef: gateway.Ref{Reference: "0f8fad5b-d9cb-469f-a165-70867728950e", ProviderRef: id},
		Status: []gatewaytest.Case{
			{Reply: answer(http.StatusInternalServerError, "stkpushquery_processing.json"), Want: pending},
			// The same words under another status are read the same.
			{Reply: fixture("stkpushquery_processing.json"), Want: pending},
			{Reply: fixture("stkpushquery_cancelled.json"), Want: failed("1032: [STK_CB - ]Request cancelled by user")},
			{Reply: body(200, success), Want: succeeded},
			{Reply: fixture("stkpushquery_success.json"), Err: &gatewaytest.Err{Contains: "ws_CO_13012021093521236557"}},
			// Every ResultCode but 0 is the push's final failure, in Daraja's words.
			{Reply: body(200, `{"ResultCode":0,"CheckoutRequestID":"`+id+`"}`), Want: succeeded},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":"1","ResultDesc":"The balance is insufficient for the transaction."}`),
				Want: failed("1: The balance is insufficient for the transaction.")},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":"2001","ResultDesc":"The initiator information is invalid."}`),
				Want: failed("2001: The initiator information is invalid.")},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":"1037","ResultDesc":"DS timeout user cannot be reached"}`),
				Want: failed("1037: DS timeout user cannot be reached")},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":"1019","ResultDesc":"Transaction has expired"}`), Want: failed("1019: Transaction has expired")},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":"1001","ResultDesc":"Unable to lock subscriber, a transaction is already in process for the current subscriber"}`),
				Want: failed("1001: Unable to lock subscriber, a transaction is already in process for the current subscriber")},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":"1025"}`), Want: failed("1025")},
			{Reply: body(200, `{"ResponseCode":"0","ResultCode":9999,"ResultDesc":"Error while sending push"}`), Want: failed("9999: Error while sending push")},
			// Never a conclusion, "not found" least of all: Daraja has no code
			// that says "never received"; an unknown CheckoutRequestID is its
			// generic refusal.
			{Reply: answer(http.StatusBadRequest, "error_invalid_checkout.json"), Err: lasting},
			{Reply: body(http.StatusNotFound, `{"requestId":"r","errorCode":"404.001.01","errorMessage":"Resource not found"}`), Err: lasting},
			{Reply: body(http.StatusNotFound, ""), Err: lasting},
			{Reply: answer(http.StatusNotFound, "error_invalid_token.json"), Err: lasting},
			{Reply: body(200, `{"ResponseCode":"1","ResponseDescription":"Rejected","ResultCode":"0"}`), Err: lasting},
			{Reply: body(500, `{"requestId":"r","errorCode":"500.003.02","errorMessage":"System is busy. Please try again in few minutes."}`), Err: transient},
			{Reply: body(500, `{"requestId":"r","errorCode":"500.001.1001","errorMessage":"Wrong credentials"}`), Err: transient},
			{Reply: body(http.StatusTooManyRequests, ""), Err: transient},
			{Reply: body(200, `{"ResultCode": `), Err: transient},
			{Reply: body(200, `{"ResponseCode":"0"}`), Err: transient},
			{Reply: body(200, `{}`), Err: transient},
			{Reply: body(200, `{"ResultCode":null}`), Err: transient},
		},
		// B2C (b2c.go): the portal's example payout (b2c_request.json), our
		// reference as OriginatorConversationID; accepted is pending until
		// the result; a 4xx is Daraja's refusal; the status query is
		// acknowledged only (pending), never "not found".
		Payout: &gatewaytest.PayoutSpec{
			Payout: gateway.Payout{Reference: "feb5e3f2-fbbc-4745-844c-ee37b546f627", Amount: 1000, Currency: "KES", Phone: "+254728762287",
				Operator: "MPESA", Country: "KE", Description: "here are my remarks", NotifyURL: "https://mydomain.com/callbacks/gw_1"},
			Initiation: b2cCall,
			Initiated:  gatewaytest.Case{Reply: fixture("b2c_accepted.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "AG_20191219_00005797af5d7d75f652"}},
			Reference:  gatewaytest.JSONField("OriginatorConversationID"),
			Sent: []gatewaytest.Case{
				{Reply: body(http.StatusBadRequest, `{"requestId":"r","errorCode":"400.002.02","errorMessage":"Bad Request - Invalid Amount"}`),
					Want: gateway.Status{Outcome: gateway.Failed, Reason: "400 400.002.02: Bad Request - Invalid Amount"}},
				{Reply: body(200, `{"ResponseCode":"1","ResponseDescription":"Rejected"}`), Want: gateway.Status{Outcome: gateway.Failed, Reason: "200 1: Rejected"}},
				{Reply: body(500, `{"requestId":"r","errorCode":"500.003.02","errorMessage":"System is busy"}`), Err: &gatewaytest.Err{Transient: true, Answered: true}},
				{Reply: body(200, `{"ResponseCode": `), Err: &gatewaytest.Err{Transient: true, Answered: true}},
				{Reply: body(http.StatusTooManyRequests, `{"errorCode":"429.001.01","errorMessage":"Spike arrest violation"}`), Err: &gatewaytest.Err{Transient: true}},
				{Reply: body(http.StatusNotFound, `{"requestId":"r","errorCode":"404.001.01","errorMessage":"Resource not found"}`), Err: lasting},
			},
			StatusRef: gateway.Ref{Reference: "feb5e3f2-fbbc-4745-844c-ee37b546f627", ProviderRef: "AG_20191219_00005797af5d7d75f652",
				NotifyURL: "https://mydomain.com/callbacks/gw_1"},
			Status: []gatewaytest.Case{
				{Reply: fixture("b2c_accepted.json"), Want: gateway.Status{Outcome: gateway.Pending}},
				{Reply: body(http.StatusBadRequest, `{"requestId":"r","errorCode":"400.002.02","errorMessage":"Bad Request - Invalid TransactionID"}`), Err: lasting},
				{Reply: body(500, `{}`), Err: transient},
				{Reply: body(200, `{}`), Err: transient},
			},
		},
		// Daraja's callbacks are unsigned (SOURCES.md): nothing to forge,
		// only a signal a status query confirms; they carry no id of ours,
		// so what is read is Safaricom's CheckoutRequestID. Refused: those
		// that name no push.
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "paid", Body: fixture("callback_success.json"), Want: "ws_CO_191220191020363925"},
			{Name: "paid, a Balance without a value", Body: fixture("callback_success_balance.json"), Want: "ws_CO_27072017154747416"},
			{Name: "cancelled", Body: fixture("callback_cancelled.json"), Want: id},
			// An odd ResultCode does not hide the id: the callback is only a signal.
			{Name: "odd ResultCode", Body: body(0, `{"Body":{"stkCallback":{"CheckoutRequestID":" ws_CO_1 ","ResultCode":"x"}}}`), Want: "ws_CO_1"},
			{Name: "empty", Body: body(0, `{}`), Err: true},
			{Name: "no stkCallback", Body: body(0, `{"Body":{}}`), Err: true},
			{Name: "no id", Body: body(0, `{"Body":{"stkCallback":{"ResultCode":0}}}`), Err: true},
			{Name: "blank id", Body: body(0, `{"Body":{"stkCallback":{"CheckoutRequestID":"  "}}}`), Err: true},
			{Name: "id a number", Body: body(0, `{"Body":{"stkCallback":{"CheckoutRequestID":12}}}`), Err: true},
			{Name: "not JSON", Body: body(0, `not json`), Err: true},
		},
	})
}

// TestTokenNoAnswer: the OAuth endpoint does not answer in time: the push
// the token was for never left (transient, NotSent), so the service knows
// nothing was pushed.
func TestTokenNoAnswer(t *testing.T) {
	a := gatewaytest.NewAnswers(t)
	a.Set("", http.StatusOK, gatewaytest.Golden(t, "token.json"))
	a.Delay("", 500*time.Millisecond)
	c := &Client{BaseURL: a.URL, ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
		HTTP: &http.Client{Timeout: 200 * time.Millisecond}}
	st, err := c.Collect(context.Background(), collection(ref1, "+254712345678"))
	if !gateway.IsTransient(err) || gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || st.Outcome != "" {
		t.Errorf("token not answered: %+v, %v; want transient, not sent", st, err)
	}
	if calls := a.Calls(); len(calls) != 1 || calls[0] != tokenCall {
		t.Errorf("calls %v; want the token's only", calls)
	}
}
