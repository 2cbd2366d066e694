package wave

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestConformance holds the connector to Wave's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run).
func TestConformance(t *testing.T) {
	const (
		ref       = "FAC-2024-01" // checkout_request.json's client_reference
		session   = "cos-1ya2rewh0139m"
		txn       = "TRG7XHH6UNR2SOACI"
		payoutRef = "salary-2024-03-0001" // payout_request.json's client_reference
		payoutID  = "pt-185sewgm8100t"
		secret    = "wave_sn_WHS_xz4m6g8rjs9bshxy05xj6khcvjv7j3hcp4fbpvv6met0zdrjvezg"
	)
	now := time.Unix(1750870563, 0) // when the documented webhook was sent
	fixture := gatewaytest.Fixture
	body := func(b string) gatewaytest.Reply { return gatewaytest.Reply{Body: b} }
	notFound := gatewaytest.Reply{Body: `{"code":"not-found","message":"x"}`, Code: http.StatusNotFound}
	pending := func(id string) gateway.Status { return gateway.Status{Outcome: gateway.Pending, ProviderRef: id} }
	failed := func(id, reason string) gateway.Status {
		return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: reason}
	}
	lasting := func(words string) *gatewaytest.Err { return &gatewaytest.Err{Contains: words} }
	clientReference := gatewaytest.JSONField("client_reference")

	// The ids handed to Created: Wave's, before the page is shown.
	var mu sync.Mutex
	var recorded []string
	record := func(id string) error { mu.Lock(); defer mu.Unlock(); recorded = append(recorded, id); return nil }

	// The documented webhook, signed with the gateway's secret in the ways
	// Wave signs (any v1 may match), and forged.
	webhook := gatewaytest.Golden(t, "webhook_checkout_completed.json")
	ts := strconv.FormatInt(now.Unix(), 10)
	good := strings.TrimPrefix(Sign(secret, now.Unix(), webhook), "t="+ts+",v1=")
	sig := func(v string) http.Header { return http.Header{"Wave-Signature": {v}} }
	signedAt := func(at time.Time, b []byte) http.Header { return sig(Sign(secret, at.Unix(), b)) }
	tampered := strings.Replace(string(webhook), `"125"`, `"100125"`, 1)
	valid := func(name string, h http.Header) gatewaytest.CallbackCase {
		return gatewaytest.CallbackCase{Name: name, Header: h, Body: fixture("webhook_checkout_completed.json"), Want: ref}
	}
	forged := func(name string, h http.Header) gatewaytest.CallbackCase {
		return gatewaytest.CallbackCase{Name: name, Header: h, Body: fixture("webhook_checkout_completed.json"), Err: true}
	}
	// Signed, but about no payment of ours.
	noReference := func(name, b string) gatewaytest.CallbackCase {
		return gatewaytest.CallbackCase{Name: name, Header: signedAt(now, []byte(b)), Body: body(b), Err: true}
	}

	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, APIKey: "wave_sn_prod_k", WebhookSecret: secret, HTTP: hc, Now: func() time.Time { return now }}
		},
		Collection: gateway.Collection{Reference: ref, Amount: 1000, Currency: "XOF", Phone: "+221771234567", Country: "SN",
			ReturnURL: "https://example.com/pay/return", NotifyURL: "https://cauri.example/callbacks/g1", Created: record},
		Initiation: "POST /v1/checkout/sessions",
		Initiated: gatewaytest.Case{Reply: fixture("checkout_session_open.json"), Want: gateway.Status{Outcome: gateway.Pending,
			ProviderRef: session, RedirectURL: "https://pay.wave.com/c/cos-1ya2rewh0139m?a=1000&c=XOF&m=JantTech"}},
		// Wave keeps the session under its own id (cos-…), and our
		// reference as its client_reference, which the search finds.
		Reference: clientReference,
		Request:   "checkout_request.json",
		Collect: []gatewaytest.Case{
			{Reply: gatewaytest.Reply{Fixture: "error_auth.json", Code: http.StatusUnauthorized}, Err: lasting("credentials")},
		},
		StatusRef: gateway.Ref{Reference: ref, ProviderRef: session},
		Status: []gatewaytest.Case{
			{Reply: fixture("checkout_session_complete.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: txn}},
			{Reply: fixture("checkout_session_open.json"), Want: pending(session)},
			// An id Wave does not know (the transaction's, once paid) is
			// looked for by our reference.
			{Replies: map[string]gatewaytest.Reply{"GET /v1/checkout/sessions/" + session: notFound,
				"GET /v1/checkout/sessions/search": fixture("checkout_search.json")},
				Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: txn}},
			{Replies: map[string]gatewaytest.Reply{"GET /v1/checkout/sessions/" + session: notFound,
				"GET /v1/checkout/sessions/search": fixture("checkout_search_empty.json")},
				Want: gateway.Status{Outcome: gateway.NotFound}},
			{Reply: body(`{"id":"cos-1ya2rewh0139m","checkout_status":"complete","payment_status":"succeeded","client_reference":"another"}`),
				Err: lasting("is not payment " + ref)},
			// Each documented checkout_status and payment_status.
			{Reply: body(`{"id":"cos-1","checkout_status":"open","payment_status":"processing"}`), Want: pending("cos-1")},
			{Reply: body(`{"id":"cos-1","checkout_status":"open","payment_status":"processing","last_payment_error":{"code":"insufficient-funds","message":"x"}}`),
				Want: pending("cos-1")},
			{Reply: body(`{"id":"cos-1","checkout_status":"complete","payment_status":"succeeded","transaction_id":"T_1"}`),
				Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "T_1"}},
			{Reply: body(`{"id":"cos-1","checkout_status":"complete","payment_status":"succeeded","transaction_id":null}`),
				Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "cos-1"}},
			{Reply: body(`{"id":"cos-1","checkout_status":"complete","payment_status":"cancelled","last_payment_error":{"code":"payment-failed","message":"The payment failed."}}`),
				Want: failed("cos-1", "cancelled: payment-failed: The payment failed.")},
			{Reply: body(`{"id":"cos-1","checkout_status":"open","payment_status":"cancelled","last_payment_error":null}`),
				Want: failed("cos-1", "cancelled")},
			{Reply: body(`{"id":"cos-1","checkout_status":"expired","payment_status":"processing"}`), Want: failed("cos-1", "expired")},
			{Reply: body(`{"id":"cos-1","checkout_status":"expired","payment_status":"succeeded","transaction_id":"T_2"}`),
				Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "T_2"}},
			// Statuses Wave does not document conclude nothing.
			{Reply: body(`{"id":"cos-1","checkout_status":"open","payment_status":"refunded"}`), Err: lasting("unknown")},
			{Reply: body(`{"id":"cos-1","checkout_status":"archived","payment_status":"processing"}`), Err: lasting("unknown")},
			{Reply: body(`{"id":"cos-1"}`), Err: lasting("unknown")},
		},
		Callbacks: []gatewaytest.CallbackCase{
			valid("signed", signedAt(now, webhook)),
			valid("several v1, one good", sig("t="+ts+",v1="+strings.Repeat("00", 32)+",v1="+good)),
			valid("spaces", sig("t="+ts+", v1="+good)),
			valid("4 minutes old", signedAt(now.Add(-4*time.Minute), webhook)),
			valid("shared secret", http.Header{"Authorization": {"Bearer " + secret}}),
			forged("no signature", http.Header{}),
			forged("another secret", sig(Sign("wave_sn_WHS_other", now.Unix(), webhook))),
			{Name: "tampered body", Header: signedAt(now, webhook), Body: body(tampered), Err: true},
			forged("with a separator", sig("t="+ts+",v1="+signed(secret, ts+".", webhook))),
			forged("every v1 wrong", sig("t="+ts+",v1="+strings.Repeat("ab", 32)+",v1=zz")),
			forged("no timestamp", sig("v1="+good)),
			forged("no v1", sig("t="+ts)),
			forged("6 minutes old", signedAt(now.Add(-6*time.Minute), webhook)),
			forged("6 minutes ahead", signedAt(now.Add(6*time.Minute), webhook)),
			forged("another timestamp", sig("t="+strconv.FormatInt(now.Unix()-1, 10)+",v1="+good)),
			forged("wrong shared secret", http.Header{"Authorization": {"Bearer guess"}}),
			noReference("client_reference null", `{"id":"AE_1","type":"checkout.session.completed","data":{"id":"cos-1","client_reference":null}}`),
			noReference("a merchant payment", `{"id":"AE_1","type":"merchant.payment_received","data":{"id":"T_1"}}`),
			noReference("not JSON", `not json`),
		},
		Payout: &gatewaytest.PayoutSpec{
			Payout: gateway.Payout{Reference: payoutRef, Amount: 15000, Currency: "XOF", Phone: "+221761110001", Operator: "wave", Country: "SN",
				RecipientName: "Moustapha Mbengue", Description: "Salary March 2024", Created: record},
			Initiation: "POST /v1/payout",
			Initiated:  gatewaytest.Case{Reply: fixture("payout_processing.json"), Want: pending(payoutID)},
			// Our reference is the payout's client_reference, and its
			// idempotency-key header too (a header the suite does not see:
			// TestPayout_IdempotencyKeyHeader).
			Reference: clientReference,
			Request:   "payout_request.json",
			Sent: []gatewaytest.Case{
				{Reply: fixture("payout_succeeded.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: payoutID}},
				{Reply: fixture("payout_failed_insufficient.json"), Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: payoutID,
					LowBalance: true, Reason: "failed: insufficient-funds: The wallet does not have enough funds."}},
				{Reply: gatewaytest.Reply{Fixture: "error_insufficient_funds.json", Code: http.StatusBadRequest},
					Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true, Reason: "400 insufficient-funds"}},
				{Reply: gatewaytest.Reply{Body: `{"code":"request-validation-error","message":"mobile is invalid"}`, Code: http.StatusBadRequest},
					Want: gateway.Status{Outcome: gateway.Failed, Reason: "400 request-validation-error: mobile is invalid"}},
				{Reply: gatewaytest.Reply{Fixture: "error_auth.json", Code: http.StatusUnauthorized}, Err: lasting("credentials")},
			},
			StatusRef: gateway.Ref{Reference: payoutRef, ProviderRef: payoutID},
			Status: []gatewaytest.Case{
				{Reply: fixture("payout_succeeded.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: payoutID}},
				{Reply: fixture("payout_processing.json"), Want: pending(payoutID)},
				{Reply: fixture("payout_failed_insufficient.json"), Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: payoutID,
					LowBalance: true, Reason: "failed: insufficient-funds"}},
				{Replies: map[string]gatewaytest.Reply{"GET /v1/payout/" + payoutID: notFound, "GET /v1/payouts/search": fixture("payouts_search.json")},
					Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: payoutID}},
				{Replies: map[string]gatewaytest.Reply{"GET /v1/payout/" + payoutID: notFound, "GET /v1/payouts/search": body(`{"result": []}`)},
					Want: gateway.Status{Outcome: gateway.NotFound}},
				{Reply: body(`{"id":"pt-185sewgm8100t","status":"succeeded","client_reference":"another"}`), Err: lasting("is not transfer " + payoutRef)},
				// Each documented status, and payout_error's two shapes.
				{Reply: body(`{"id":"pt-1","status":"processing"}`), Want: pending("pt-1")},
				{Reply: body(`{"id":"pt-1","status":"succeeded"}`), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "pt-1"}},
				{Reply: body(`{"id":"pt-1","status":"failed","payout_error":{"error_code":"recipient-limit-exceeded","error_message":"Limit"}}`),
					Want: failed("pt-1", "failed: recipient-limit-exceeded: Limit")},
				{Reply: body(`{"id":"pt-1","status":"failed","payout_error":{"code":"insufficient-funds","message":"Not enough"}}`),
					Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "pt-1", Reason: "failed: insufficient-funds: Not enough", LowBalance: true}},
				{Reply: body(`{"id":"pt-1","status":"failed","payout_error":null}`), Want: failed("pt-1", "failed")},
				{Reply: body(`{"id":"pt-1","status":"reversed"}`), Want: failed("pt-1", "reversed")},
				{Reply: body(`{"id":"pt-1","status":"cancelled"}`), Err: lasting("unknown")},
			},
		},
	})
	mu.Lock()
	defer mu.Unlock()
	for _, id := range recorded {
		if id != session && id != payoutID {
			t.Errorf("recorded %q; want Wave's id of the documented session or payout", id)
		}
	}
	if len(recorded) == 0 {
		t.Error("no Wave id recorded")
	}
}
