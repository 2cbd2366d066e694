package fedapay

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestConformance holds the connector to FedaPay's documented answers
// (testdata/, sources in SOURCES.md) and to what every connector owes the
// service (gatewaytest.Run). A collection is three calls (the transaction,
// its token, the push to the phone) and a payout two (the payout, its
// start): Case.Replies answers each. FedaPay keeps its own ids (the
// transaction's, the payout's; our reference only in custom_metadata):
// no Reference. Its secret key is the bearer: no access token, no
// TokenCall.
func TestConformance(t *testing.T) {
	const (
		ref     = "11111111-2222-4333-8444-555555555555"
		payout  = "a1111111-2222-4333-8444-555555555555"
		secret  = "wh_sandbox_conformance"
		created = "POST /transactions"
		token   = "POST /transactions/104/token"
		push    = "POST /mtn_open"
		create  = "POST /payouts"
		start   = "PUT /payouts/start"
	)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	fixture := gatewaytest.Fixture
	body := func(s string) gatewaytest.Reply { return gatewaytest.Reply{Body: s} }
	pending := gateway.Status{Outcome: gateway.Pending, ProviderRef: "104"}
	failed := func(reason string) gateway.Status {
		return gateway.Status{Outcome: gateway.Failed, ProviderRef: "104", Reason: reason}
	}
	// object is the object of a documented answer under its class, changed
	// by set (a status, another reference).
	object := func(name, class string, set map[string]any) map[string]any {
		var e map[string]map[string]any
		if err := json.Unmarshal(gatewaytest.Golden(t, name), &e); err != nil {
			t.Fatal(err)
		}
		for k, v := range set {
			e[class][k] = v
		}
		return e[class]
	}
	answer := func(class string, o map[string]any) gatewaytest.Reply {
		b, _ := json.Marshal(map[string]any{class: o})
		return body(string(b))
	}
	transaction := func(set map[string]any) gatewaytest.Reply {
		return answer("v1/transaction", object("transaction_approved.json", "v1/transaction", set))
	}
	payoutWith := func(set map[string]any) gatewaytest.Reply {
		return answer("v1/payout", object("payout_sent.json", "v1/payout", set))
	}
	collect := func(replies map[string]gatewaytest.Reply) map[string]gatewaytest.Reply {
		all := map[string]gatewaytest.Reply{created: fixture("transaction_created.json"), token: fixture("token.json"), push: fixture("send_answer.json")}
		for k, v := range replies {
			all[k] = v
		}
		return all
	}
	// startedWith is the start's answer (payout_started.json), the payout changed by set.
	startedWith := func(set map[string]any) gatewaytest.Reply {
		var e map[string][]map[string]any
		if err := json.Unmarshal(gatewaytest.Golden(t, "payout_started.json"), &e); err != nil {
			t.Fatal(err)
		}
		for k, v := range set {
			e["v1/payouts"][0][k] = v
		}
		b, _ := json.Marshal(e)
		return body(string(b))
	}
	sent := map[string]gatewaytest.Reply{create: fixture("payout_created.json"), start: fixture("payout_started.json")}
	withStart := func(r gatewaytest.Reply) map[string]gatewaytest.Reply {
		return map[string]gatewaytest.Reply{create: fixture("payout_created.json"), start: r}
	}

	// Webhooks (X-FEDAPAY-SIGNATURE, SOURCES.md): an event whose entity is
	// the documented transaction or payout.
	event := func(name, entityFixture, class string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "entity": object(entityFixture, class, nil)})
		return string(b)
	}
	signed := func(b string, at time.Time) http.Header {
		return http.Header{"X-Fedapay-Signature": {Sign(secret, at, []byte(b))}}
	}
	approved := event("transaction.approved", "transaction_approved.json", "v1/transaction")
	paidOut := event("payout.sent", "payout_sent.json", "v1/payout")
	var started []map[string]any
	json.Unmarshal(gatewaytest.Golden(t, "payouts_start_reference.json"), &started)
	anonymous, _ := json.Marshal(map[string]any{"name": "payout.sent", "entity": started[0]}) // custom_metadata {}

	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, SecretKey: "sk_sandbox_conformance", WebhookSecret: secret, HTTP: hc,
				Now: func() time.Time { return now }}
		},
		// The documented request's values (transaction_request.json).
		Collection: gateway.Collection{Reference: ref, Amount: 2000, Currency: "XOF", Phone: "+22997808080", Country: "BJ",
			Operator: "mtn_open", Description: "Transaction for payer@example.org", Name: "Koffi Adjovi", Email: "payer@example.org",
			ReturnURL: "https://pay.example.org/return/104"},
		Initiation: created,
		Initiated:  gatewaytest.Case{Replies: collect(nil), Want: pending},
		Request:    "transaction_request.json",
		Collect: []gatewaytest.Case{
			{Replies: collect(map[string]gatewaytest.Reply{created: {Body: `{"message":"Invalid phone number"}`, Code: 400}}),
				Want: gateway.Status{Outcome: gateway.Failed, Reason: "400 Invalid phone number"}},
			{Replies: collect(map[string]gatewaytest.Reply{token: {Body: `{"message":"Transaction not payable"}`, Code: 422}}),
				Want: failed("422 Transaction not payable")},
			{Replies: collect(map[string]gatewaytest.Reply{push: {Body: `{"message":"Numéro de téléphone invalide"}`, Code: 400}}),
				Want: failed("400 Numéro de téléphone invalide")},
			{Replies: collect(map[string]gatewaytest.Reply{created: {Body: `{"message":"Unauthenticated."}`, Code: 401}}),
				Err: &gatewaytest.Err{Contains: "401"}},
			// The push's answer lost: the transaction exists, the push may
			// have gone; its status tells.
			{Replies: collect(map[string]gatewaytest.Reply{push: {Body: "<html>502</html>", Code: 502}}), Err: &gatewaytest.Err{Transient: true}},
		},
		StatusRef: gateway.Ref{Reference: ref, ProviderRef: "104"},
		Status: []gatewaytest.Case{
			{Reply: fixture("transaction_created.json"), Want: pending},
			{Reply: fixture("transaction_approved.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "104"}},
			// Every status FedaPay's SDKs and docs name (SOURCES.md).
			{Reply: transaction(map[string]any{"status": "transferred"}), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: transaction(map[string]any{"status": "refunded"}), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: transaction(map[string]any{"status": "approved_partially_refunded"}), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: transaction(map[string]any{"status": "transferred_partially_refunded"}), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: transaction(map[string]any{"status": "declined", "last_error_code": "insufficient_funds"}), Want: failed("declined: insufficient_funds")},
			{Reply: transaction(map[string]any{"status": "canceled"}), Want: failed("canceled")},
			{Reply: transaction(map[string]any{"status": "expired"}), Want: failed("expired")},
			{Reply: transaction(map[string]any{"status": "reversed"}), Err: &gatewaytest.Err{Contains: "reversed"}},
			// A transaction about another payment is not this one.
			{Reply: transaction(map[string]any{"custom_metadata": map[string]string{metadataKey: "another"}}), Err: &gatewaytest.Err{}},
			// With FedaPay's id, a 404 proves nothing (never "not found").
			{Reply: gatewaytest.Reply{Body: `{"message":"Transaction not found"}`, Code: 404}, Err: &gatewaytest.Err{}},
		},
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "transaction.approved", Header: signed(approved, now), Body: body(approved), Want: ref},
			{Name: "payout.sent", Header: signed(paidOut, now.Add(-SignatureTolerance+time.Second)), Body: body(paidOut), Want: payout},
			{Name: "unsigned", Body: body(approved), Err: true},
			{Name: "forged", Header: http.Header{"X-Fedapay-Signature": {"t=1764072000,s=abcd"}}, Body: body(approved), Err: true},
			{Name: "signed with another secret", Header: http.Header{"X-Fedapay-Signature": {Sign("wh_other", now, []byte(approved))}},
				Body: body(approved), Err: true},
			{Name: "altered", Header: signed(approved, now), Body: body(strings.Replace(approved, `"approved"`, `"declined"`, 1)), Err: true},
			{Name: "replayed", Header: signed(approved, now.Add(-10*time.Minute)), Body: body(approved), Err: true},
			{Name: "from the future", Header: signed(approved, now.Add(10*time.Minute)), Body: body(approved), Err: true},
			{Name: "about no Cauri payment", Header: signed(string(anonymous), now), Body: body(string(anonymous)), Err: true},
		},
		Payout: &gatewaytest.PayoutSpec{
			Payout: gateway.Payout{Reference: payout, Amount: 2000, Currency: "XOF", Phone: "+22997808080", Operator: "mtn_open",
				Country: "BJ", RecipientName: "Koffi Adjovi"},
			// The creation, which the documented request is; the money moves
			// at the start (PUT /payouts/start), held in Sent below.
			Initiation: create,
			Sends:      start,
			Initiated:  gatewaytest.Case{Replies: sent, Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "17"}},
			Request:    "payout_request.json",
			Sent: []gatewaytest.Case{
				{Replies: withStart(startedWith(map[string]any{"status": "sent"})), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "17"}},
				{Replies: withStart(startedWith(map[string]any{"status": "failed", "last_error_code": "insufficient_balance"})),
					Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "17", LowBalance: true, Reason: "failed: insufficient_balance"}},
				{Replies: withStart(gatewaytest.Reply{Body: `{"message":"Solde insuffisant"}`, Code: 400}),
					Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: "17", LowBalance: true, Reason: "400 Solde insuffisant"}},
				{Replies: map[string]gatewaytest.Reply{create: {Body: `{"message":"Invalid phone number"}`, Code: 400}},
					Want: gateway.Status{Outcome: gateway.Failed, Reason: "400 Invalid phone number"}},
				// The start's answer lost: the payout may have gone; its status tells.
				{Replies: withStart(gatewaytest.Reply{Body: "<html>502</html>", Code: 502}), Err: &gatewaytest.Err{Transient: true}},
			},
			StatusRef: gateway.Ref{Reference: payout, ProviderRef: "17"},
			Status: []gatewaytest.Case{
				{Reply: fixture("payout_created.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: "17"}},
				{Reply: fixture("payout_sent.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "17"}},
				{Reply: payoutWith(map[string]any{"status": "started"}), Want: gateway.Status{Outcome: gateway.Pending}},
				{Reply: payoutWith(map[string]any{"status": "scheduled"}), Want: gateway.Status{Outcome: gateway.Pending}},
				{Reply: payoutWith(map[string]any{"status": "failed", "last_error_code": "insufficient_balance"}),
					Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true, Reason: "failed: insufficient_balance"}},
				// last_error_code a number, as FedaPay's SDKs have it.
				{Reply: payoutWith(map[string]any{"status": "failed", "last_error_code": 42, "last_error_message": "Solde insuffisant"}),
					Want: gateway.Status{Outcome: gateway.Failed, LowBalance: true, Reason: "failed: 42: Solde insuffisant"}},
				{Reply: payoutWith(map[string]any{"status": "failed", "last_error_code": "invalid_account"}),
					Want: gateway.Status{Outcome: gateway.Failed, Reason: "failed: invalid_account"}},
				// Without our reference in custom_metadata, trusted by the id we stored.
				{Reply: payoutWith(map[string]any{"status": "failed", "custom_metadata": map[string]string{}}),
					Want: gateway.Status{Outcome: gateway.Failed, Reason: "failed"}},
				{Reply: payoutWith(map[string]any{"status": "reversed"}), Err: &gatewaytest.Err{Contains: "reversed"}},
				{Reply: payoutWith(map[string]any{"custom_metadata": map[string]string{metadataKey: "another"}}), Err: &gatewaytest.Err{}},
				{Reply: gatewaytest.Reply{Body: `{"message":"Payout not found"}`, Code: 404}, Err: &gatewaytest.Err{}},
			},
		},
	})
}
