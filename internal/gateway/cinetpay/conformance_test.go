package cinetpay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func fixture(name string) gatewaytest.Reply { return gatewaytest.Reply{Fixture: name} }

func body(s string) gatewaytest.Reply { return gatewaytest.Reply{Body: s} }

// The documented code table (docs.cinetpay.com/api/1.0-en/checkout/tableau;
// testdata/SOURCES.md) and what a check answering each code, with no
// payment status, means: every code has an outcome or an error.
var (
	tableSucceeded = []string{"00"}
	tablePending   = []string{"201", "623", "662", "663", "664"}
	tableFailed    = []string{"600", "602", "603", "604", "606", "620", "621", "622", "625", "626", "627", "635", "636", "637",
		"641", "642", "804", "807", "808", "809", "810", "811", "812"}
	tableAccount = []string{"609", "613"}                                                                       // lasting errors
	tableRequest = []string{"608", "610", "611", "612", "614", "615", "616", "617", "618", "619", "624", "628"} // transient, concludes nothing
)

// notification is a payment's notification (docs.cinetpay.com,
// checkout/notification: a form with the cpm_ fields; checkout/hmac: its
// x-token), our values, and its x-token under secret.
func notification(site, ref, secret string) (string, http.Header) {
	form := url.Values{"cpm_site_id": {site}, "cpm_trans_id": {ref}, "cpm_trans_date": {"2026-11-25 14:07:24"}, "cpm_amount": {"100"},
		"cpm_currency": {"XOF"}, "signature": {"6ed34c3d22fd7e4d"}, "payment_method": {"OM"}, "cel_phone_num": {"0707123456"},
		"cpm_phone_prefixe": {"225"}, "cpm_language": {"fr"}, "cpm_version": {"V4"}, "cpm_payment_config": {"SINGLE"},
		"cpm_page_action": {"PAYMENT"}, "cpm_custom": {ref}, "cpm_designation": {"TEST INTEGRATION"}, "cpm_error_message": {"SUCCES"}}
	return form.Encode(), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Token": {Sign(secret, form)}}
}

// TestConformance holds the checkout API v2 connector (collections) and
// its transfer API (payouts) to CinetPay's documented answers (testdata/,
// sources in SOURCES.md) and to what every connector owes the service
// (gatewaytest.Run). The checkout takes no access token (apikey and
// site_id in each body): no TokenCall. The transfer API's token (POST
// /auth/login) serves payouts only, which the suite's single-flight check
// does not read (it reads collection statuses).
func TestConformance(t *testing.T) {
	const (
		site   = "445160"
		secret = "secret-1"
		ref    = "YOUR_TRANSACTION_ID"
		payout = "Test_retrait_20230301_01"
		ea     = "EA230301.165358.X622533"
	)
	pending := gatewaytest.Pending
	failed := gatewaytest.Failed
	check := func(code, status string) gatewaytest.Reply {
		data := "[]"
		if status != "" {
			data = `{"status":"` + status + `"}`
		}
		return body(fmt.Sprintf(`{"code":%q,"message":"M","data":%s}`, code, data))
	}

	status := []gatewaytest.Case{
		{Reply: fixture("check_waiting.json"), Want: pending},
		{Reply: fixture("check_success_short.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "8210407187720"}},
		{Reply: fixture("check_accepted.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: "MP220117.1402.C99563"}},
		{Reply: fixture("check_refused.json"), Want: failed("600 PAYMENT_FAILED")},
		// The payment's status decides over the code.
		{Reply: check("662", "WAITING_FOR_CUSTOMER"), Want: pending},
		{Reply: check("604", "WAITING_FOR_CUSTOMER"), Want: pending}, // a wrong code the customer may enter again
		{Reply: check("600", "REFUSED"), Want: failed("600")},
		{Reply: check("627", "REFUSED"), Want: failed("627")},
		{Reply: check("00", "ACCEPTED"), Want: gateway.Status{Outcome: gateway.Succeeded}},
		{Reply: check("00", "REFUSED"), Err: &gatewaytest.Err{}}, // CinetPay contradicts itself: no conclusion
		// A transaction CinetPay never received (not documented; SOURCES.md).
		{Reply: gatewaytest.Reply{Body: `{"code":"404","message":"TRANSACTION_NOT_FOUND","data":[]}`, Code: http.StatusNotFound},
			Want: gateway.Status{Outcome: gateway.NotFound}},
		{Reply: body(`{"code":"999","message":"SOMETHING_NEW","data":[]}`), Err: &gatewaytest.Err{}},
	}
	for _, c := range tableSucceeded {
		status = append(status, gatewaytest.Case{Reply: check(c, ""), Want: gateway.Status{Outcome: gateway.Succeeded}})
	}
	for _, c := range tablePending {
		status = append(status, gatewaytest.Case{Reply: check(c, ""), Want: pending})
	}
	for _, c := range tableFailed {
		status = append(status, gatewaytest.Case{Reply: check(c, ""), Want: failed(c + " M")})
	}
	for _, c := range tableAccount {
		status = append(status, gatewaytest.Case{Reply: check(c, ""), Err: &gatewaytest.Err{Contains: c}})
	}
	for _, c := range tableRequest {
		status = append(status, gatewaytest.Case{Reply: check(c, ""), Err: &gatewaytest.Err{Transient: true, Contains: c}})
	}

	signed, header := notification(site, ref, secret)
	other, otherHeader := notification("999999", ref, secret)
	transferSend := func(send string) gatewaytest.Case {
		return gatewaytest.Case{Reply: body(send), Replies: map[string]gatewaytest.Reply{"POST /transfer/contact": fixture("transfer_contact_exists.json")}}
	}
	sent := func(send string, want gateway.Status) gatewaytest.Case {
		c := transferSend(send)
		c.Want = want
		return c
	}
	low := func(reason string) gateway.Status {
		return gateway.Status{Outcome: gateway.Failed, LowBalance: true, Reason: reason}
	}

	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return &Client{BaseURL: baseURL, APIKey: "12912847765bc0db748fdd44.40081707", SiteID: site, SecretKey: secret, HTTP: hc,
				TransferBaseURL: baseURL, TransferPassword: "pw"}
		},
		Setup: map[string]gatewaytest.Reply{"POST /auth/login": fixture("transfer_login.json")},
		// The documented request's values (payment_request.json).
		Collection: gateway.Collection{Reference: ref, Amount: 100, Currency: "XOF", Phone: "+225004315545",
			Description: "TEST INTEGRATION", Name: "KOUADIO", Email: "test@cinetpay.com",
			NotifyURL: "https://webhook.site/d1dbbb89-52c7-49af-a689-b3c412df820d", ReturnURL: "https://webhook.site/d1dbbb89-52c7-49af-a689-b3c412df820d"},
		Initiation: "POST /v2/payment",
		Initiated: gatewaytest.Case{Reply: fixture("payment_created.json"), Want: gateway.Status{Outcome: gateway.Pending,
			RedirectURL: "https://checkout.cinetpay.com/payment/6ed34c3d22fd7e4d9bb4c6a3b7c5b0a6a2d7f0e31f4f3c8c1fb1a1d54e4a3f4c2ad0f6b6c"}},
		Reference: gatewaytest.JSONField("transaction_id"),
		Request:   "payment_request.json",
		Collect: []gatewaytest.Case{
			{Reply: fixture("payment_error.json"), Want: failed("608 MINIMUM_REQUIRED_FIELDS")}, // nothing created: failed
			{Reply: body(`{"code":"609","message":"AUTH_NOT_FOUND","description":"apikey","data":[]}`), Err: &gatewaytest.Err{Contains: "609"}},
			{Reply: body(`{"code":"613","message":"ERROR_SITE_ID_NOTVALID","data":[]}`), Err: &gatewaytest.Err{Contains: "613"}},
		},
		StatusRef: gateway.Ref{Reference: ref},
		Status:    status,
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "payment notification", Header: header, Body: body(signed), Want: ref},
			{Name: "payment notification unsigned", Body: body(signed), Err: true},
			{Name: "payment notification forged", Header: http.Header{"X-Token": {strings.Repeat("ab", 32)}}, Body: body(signed), Err: true},
			{Name: "payment notification altered", Header: header, Body: body(strings.Replace(signed, "cpm_amount=100", "cpm_amount=5", 1)), Err: true},
			{Name: "payment notification of another site", Header: otherHeader, Body: body(other), Err: true},
			// The transfer's notification is not signed (transfert/notification):
			// a signal, confirmed by PayoutStatus.
			{Name: "transfer notification", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
				Body: fixture("transfer_notification.form"), Want: payout},
			{Name: "transfer notification without its id", Body: body("client_transaction_id=&treatment_status=VAL"), Err: true},
			{Name: "transfer notification by CinetPay's id only", Body: body("transaction_id=EA1&treatment_status=VAL"), Err: true},
			{Name: "unsigned payment fields with a transfer id", Body: body("cpm_trans_id=r1&client_transaction_id=r2"), Err: true},
			{Name: "unsigned site with a transfer id", Body: body("cpm_site_id=445160&client_transaction_id=r2"), Err: true},
		},
		Payout: &gatewaytest.PayoutSpec{
			// The transfer of transfer_send_request.json (Mali).
			Payout: gateway.Payout{Reference: payout, Amount: 500, Currency: "XOF", Phone: "+22369844969", Operator: "OMML",
				Country: "ML", RecipientName: "Test A", NotifyURL: "https://cinetpay.com"},
			Initiation: "POST /transfer/money/send/contact",
			Initiated: gatewaytest.Case{Reply: fixture("transfer_send_accepted.json"), Replies: map[string]gatewaytest.Reply{
				"POST /transfer/contact": fixture("transfer_contact_exists.json")}, Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: ea}},
			// Our reference is the transfer's client_transaction_id, in the
			// form's data (a JSON list), which the suite holds to the
			// documented request.
			Request: "transfer_send_request.json",
			Reference: func(b []byte, _ string) string {
				form, _ := url.ParseQuery(string(b))
				var sends []map[string]any
				json.Unmarshal([]byte(form.Get("data")), &sends)
				if len(sends) != 1 {
					return ""
				}
				s, _ := sends[0]["client_transaction_id"].(string)
				return s
			},
			Sent: []gatewaytest.Case{
				// 805 CLIENT_TRANSACTION_ID_EXIST: CinetPay holds this transfer already (our retry).
				sent(`{"code":"805","message":"CLIENT_TRANSACTION_ID_EXIST","description":"Your transaction ID already exists on CinetPay","data":[]}`, pending),
				sent(`{"code":0,"message":"OPERATION_SUCCES","data":[[{"code":805,"status":"CLIENT_TRANSACTION_ID_EXIST"}]]}`, pending),
				sent(`{"code":"602","message":"INSUFFICIENT_BALANCE","description":"Your CinetPay transfer balance is insufficient","data":[]}`, low("602")),
				sent(`{"code":0,"message":"OPERATION_SUCCES","data":[[{"code":602,"status":"INSUFFICIENT_BALANCE"}]]}`, low("602")),
				sent(`{"code":0,"message":"OPERATION_SUCCES","data":[[{"code":802,"status":"INVALID_PHONE"}]]}`, failed("802 INVALID_PHONE")),
				func() gatewaytest.Case { // an unknown code when sending: outcome unknown
					c := transferSend(`{"code":"715","message":"UNEXPECTED_ERROR","data":[]}`)
					c.Err = &gatewaytest.Err{Transient: true, Contains: "715"}
					return c
				}(),
				{ // the contact refused: nothing sent
					Reply: fixture("transfer_send_accepted.json"), Replies: map[string]gatewaytest.Reply{
						"POST /transfer/contact": body(`{"code":0,"message":"OPERATION_SUCCES","data":[[{"code":802,"status":"INVALID_PHONE"}]]}`)},
					Want: failed("802 INVALID_PHONE")},
				{ // the transfer password refused: a lasting error, nothing sent
					Reply: fixture("transfer_send_accepted.json"), Replies: map[string]gatewaytest.Reply{
						"POST /auth/login": fixture("transfer_login_refused.json")},
					Err: &gatewaytest.Err{NotSent: true, Contains: "701"}},
			},
			StatusRef: gateway.Ref{Reference: payout},
			Status: []gatewaytest.Case{
				{Reply: fixture("transfer_check_new.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: ea}},
				{Reply: fixture("transfer_check_rec.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: ea}},
				{Reply: fixture("transfer_check_nos.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: ea}},
				{Reply: fixture("transfer_check_val.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: ea}},
				{Reply: fixture("transfer_check_rej.json"), Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: ea, Reason: "REJ REJECTED"}},
				{Reply: body(`{"code":"723","message":"NOT_FOUND","description":"No results for this search","data":[]}`),
					Want: gateway.Status{Outcome: gateway.NotFound}},
				{Reply: body(`{"code":0,"message":"OPERATION_SUCCES","data":[]}`), Want: gateway.Status{Outcome: gateway.NotFound}},
				{Reply: body(`{"code":0,"message":"OPERATION_SUCCES","data":[{"client_transaction_id":"` + payout + `","treatment_status":"XYZ"}]}`),
					Err: &gatewaytest.Err{Contains: "XYZ"}},
				// An answer about other transfers says nothing of this one.
				{Reply: body(`{"code":0,"message":"OPERATION_SUCCES","data":[{"client_transaction_id":"another","treatment_status":"VAL"}]}`),
					Err: &gatewaytest.Err{}},
			},
		},
	})
}

// TestConformance_V1 holds the API v1 connector (V1Client: collections
// only) to CinetPay's SDKs' answers (testdata/, SOURCES.md) and to what
// every connector owes the service. Its token comes from POST
// /v1/oauth/login.
func TestConformance_V1(t *testing.T) {
	const ref = "CMD-1764080000"
	const id = "27ba5590f3ae4c6f9585ae1e4f5265dd"
	pending := gatewaytest.Pending
	failed := gatewaytest.Failed
	gatewaytest.Run(t, gatewaytest.Spec{
		New: func(baseURL string, hc *http.Client) gateway.Connector {
			return NewV1(baseURL, "sk_test_4f1c2b7a9e", "pw-sandbox-1", hc)
		},
		Setup:     map[string]gatewaytest.Reply{"POST /v1/oauth/login": fixture("v1_login.json")},
		TokenCall: "POST /v1/oauth/login",
		// The documented request's values (v1_payment_request.json).
		Collection: gateway.Collection{Reference: ref, Amount: 5000, Currency: "XOF", Description: "Commande",
			Email: "client@email.com", Name: "Jean Dupont", ReturnURL: "https://monsite.com/success", NotifyURL: "https://monsite.com/webhook"},
		Initiation: "POST /v1/payment",
		Initiated: gatewaytest.Case{Reply: fixture("v1_payment_created.json"),
			Want: gateway.Status{Outcome: gateway.Pending, RedirectURL: "https://secure.cinetpay.net/payment/a1b2c3d4e5f60718293a4b5c6d7e8f90"}},
		Reference: gatewaytest.JSONField("merchant_transaction_id"),
		Request:   "v1_payment_request.json",
		Collect: []gatewaytest.Case{
			// Created without a page: the check tells.
			{Reply: body(`{"payment_token":"a1b2c3d4e5f60718293a4b5c6d7e8f90"}`), Err: &gatewaytest.Err{Transient: true}},
			{Reply: gatewaytest.Reply{Body: `{"code":400,"status":"DUPLICATE","description":"merchant_transaction_id exists"}`, Code: 400},
				Want: failed("400")},
		},
		StatusRef: gateway.Ref{Reference: ref},
		Status: []gatewaytest.Case{
			{Reply: fixture("v1_status_success.json"), Want: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}},
			{Reply: fixture("v1_status_pending.json"), Want: gateway.Status{Outcome: gateway.Pending, ProviderRef: id}},
			{Reply: fixture("v1_status_failed.json"), Want: gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: "FAILED"}},
			// Every status and code of CinetPay's SDKs (SOURCES.md).
			{Reply: body(`{"code":100}`), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: body(`{"code":2001,"status":"INITIATED"}`), Want: pending},
			{Reply: body(`{"code":2002}`), Want: pending},
			{Reply: body(`{"code":2003,"status":"EXPIRED"}`), Want: failed("EXPIRED")},
			{Reply: body(`{"code":2005,"status":"INSUFFICIENT_BALANCE"}`), Want: failed("INSUFFICIENT_BALANCE")},
			{Reply: body(`{"code":2010}`), Want: failed("2010")},
			{Reply: body(`{"data":{"code":100,"status":"SUCCESS"}}`), Want: gateway.Status{Outcome: gateway.Succeeded}},
			{Reply: gatewaytest.Reply{Body: `{"code":404,"status":"NOT_FOUND"}`, Code: http.StatusNotFound}, Want: gateway.Status{Outcome: gateway.NotFound}},
			{Reply: body(`{"code":9999,"status":"SOMETHING_NEW"}`), Err: &gatewaytest.Err{Contains: "SOMETHING_NEW"}},
		},
		// The v1 notification's body and signature are not documented
		// (SOURCES.md): our reference comes back in notify_url's query, and
		// the notification is only a signal that CollectionStatus confirms;
		// nothing signed to refuse.
		Callbacks: []gatewaytest.CallbackCase{
			{Name: "our reference in the notification's address", Header: http.Header{gateway.CallbackQueryHeader: {"cauri_ref=" + ref}},
				Body: body(`{}`), Want: ref},
			{Name: "merchant_transaction_id in a JSON body", Body: body(`{"merchant_transaction_id":"` + ref + `","transaction_id":"` + id + `","status":"SUCCESS"}`), Want: ref},
			{Name: "merchant_transaction_id in a form", Body: body("merchant_transaction_id=" + ref + "&status=SUCCESS"), Want: ref},
			{Name: "CinetPay's id only", Body: body(`{"transaction_id":"` + id + `","status":"SUCCESS"}`), Err: true},
		},
	})
}
