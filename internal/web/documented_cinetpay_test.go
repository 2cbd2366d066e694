package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// CinetPay's documented ids (internal/gateway/cinetpay/testdata): the
// payment of the checkout's example, the transfer of the transfer API's,
// the API v1's merchant_transaction_id; replaced by our reference.
var cinetpayIDs = []string{"YOUR_TRANSACTION_ID", "Test_retrait_20230301_01", "CMD-1764080000"}

// cinetpayRef reads our reference from a request to CinetPay: the
// checkout's transaction_id (payment and check), the API v1's
// merchant_transaction_id (its payment, and its status read's path), the
// transfer's client_transaction_id (in the send's form, its data field
// a JSON list; in the check's query).
func cinetpayRef(r *http.Request, body []byte) string {
	for _, field := range []string{"transaction_id", "merchant_transaction_id"} {
		if id := jsonRef(field)(r, body); id != "" {
			return id
		}
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/payment/"); ok {
		return id
	}
	if form, err := url.ParseQuery(string(body)); err == nil {
		var sends []map[string]any
		if json.Unmarshal([]byte(form.Get("data")), &sends) == nil && len(sends) == 1 {
			if id, _ := sends[0]["client_transaction_id"].(string); id != "" {
				return id
			}
		}
	}
	return r.URL.Query().Get("client_transaction_id")
}

// cinetpayRequests keeps the last body the documented fake received per call, so
// that a test can read what the service asked CinetPay.
type cinetpayRequests struct {
	mu   sync.Mutex
	last map[string][]byte
}

func (q *cinetpayRequests) ref(r *http.Request, body []byte) string {
	q.mu.Lock()
	q.last[r.Method+" "+r.URL.Path] = body
	q.mu.Unlock()
	return cinetpayRef(r, body)
}

func (q *cinetpayRequests) json(t *testing.T, call string) map[string]any {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(q.last[call], &m); err != nil {
		t.Fatalf("%s: %v (%q)", call, err, q.last[call])
	}
	return m
}

// cinetpayNotify posts a CinetPay notification, a form (checkout/notification,
// transfert/notification), to the gateway's callback address; signed with
// an x-token under secret when secret is not empty (checkout/hmac: the
// transfer's notification is not signed).
func cinetpayNotify(e *env, gatewayID string, form url.Values, secret string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/callbacks/"+gatewayID, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.Header.Set("X-Token", cinetpay.Sign(secret, form))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		e.t.Fatalf("notification answered %d", res.StatusCode)
	}
}

// cinetpayForm is a form fixture with the documented ids replaced by ours.
func cinetpayForm(t *testing.T, d *documented, fixture string) url.Values {
	t.Helper()
	form, err := url.ParseQuery(strings.TrimSpace(string(d.body(fixture))))
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// TestDocumented_CinetPay is a merchant's first payments through a
// CinetPay account on the checkout API v2 (apikey, site_id, secret key,
// transfer password), answered only by CinetPay's documented answers: a
// Mobile Money payment in Côte d'Ivoire and a card payment, each sent to
// CinetPay's page and ACCEPTED by the signed notification and the check it
// calls for, and a transfer to a Côte d'Ivoire wallet through the transfer
// API (login, contact, send) to VAL by the transfer's notification.
func TestDocumented_CinetPay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Abidjan shop", true)
		sent := &cinetpayRequests{last: map[string][]byte{}}
		fake := newDocumented(t, "cinetpay", sent.ref, cinetpayIDs...).
			on("POST /v2/payment", "payment_created.json").
			on("POST /v2/payment/check", "check_waiting.json").
			// The transfer API, which a gateway pointed elsewhere serves under /v1.
			on("POST /v1/auth/login", "transfer_login.json").
			on("POST /v1/transfer/contact", "transfer_contact_exists.json").
			on("POST /v1/transfer/money/send/contact", "transfer_send_accepted.json").
			on("GET /v1/transfer/check/money", "transfer_check_new.json")
		// The checkout's documented account (the PHP SDK README's site_id).
		const secret = "secret-ci-1"
		g := e.addDocumented(ws, "cinetpay", fake, map[string]string{"apikey": "12912847765bc0db748fdd44.40081707",
			"site_id": "445160", "secret_key": secret, "transfer_password": "transfer-pw"}, "CI")
		const page = "https://checkout.cinetpay.com/payment/6ed34c3d22fd7e4d9bb4c6a3b7c5b0a6a2d7f0e31f4f3c8c1fb1a1d54e4a3f4c2ad0f6b6c"

		t.Run("MoovMoneyCoteDIvoire", func(t *testing.T) {
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 100, "currency": "XOF"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "FLOOZ",
				"phone": "01 02 32 43 73"})
			if next := nextOf(r); r.status != 200 || r.str("status") != "PENDING" || next["type"] != "redirect" || next["url"] != page {
				t.Fatalf("initiate = %d %s; want the customer sent to CinetPay's page", r.status, r.raw)
			}
			if req := sent.json(t, "POST /v2/payment"); req["channels"] != "MOBILE_MONEY" || req["customer_phone_number"] != "+2250102324373" ||
				req["lock_phone_number"] != true {
				t.Fatalf("payment request = %v; want Mobile Money with the customer's number locked", req)
			}
			// The customer pays on CinetPay's page; CinetPay notifies, and
			// the check says ACCEPTED.
			fake.on("POST /v2/payment/check", "check_accepted.json")
			cinetpayNotify(e, g.ID, cinetpayForm(t, fake, "payment_notification.form"), secret)
			settled(t, st, "CinetPay's notification", id)
			if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
				t.Fatalf("after CinetPay's notification = %s", got)
			}
		})

		t.Run("Card", func(t *testing.T) {
			fake.on("POST /v2/payment/check", "check_waiting.json")
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 5000, "currency": "XOF", "customer_email": "awa@example.com"})
			holder := map[string]string{"name": "Awa Kone", "address": "Rue des Jardins 12", "city": "Abidjan", "state": "CI", "zipCode": "00225"}
			r := e.do("POST", "/checkout/initiate", map[string]any{"transactionId": id, "gatewayId": g.ID, "code": "CARD_UEMOA",
				"phone": "+225 07 07 12 34 56", "holder": holder})
			if next := nextOf(r); r.status != 200 || r.str("status") != "PENDING" || next["type"] != "redirect" || next["url"] != page {
				t.Fatalf("initiate = %d %s; want the card holder sent to CinetPay's page", r.status, r.raw)
			}
			// The card fields of checkout/initialisation, as in
			// payment_card_request.json.
			req := sent.json(t, "POST /v2/payment")
			for field, want := range map[string]any{"channels": "CREDIT_CARD", "customer_name": "Kone", "customer_surname": "Awa",
				"customer_email": "awa@example.com", "customer_phone_number": "+2250707123456", "customer_address": "Rue des Jardins 12",
				"customer_city": "Abidjan", "customer_country": "CI", "customer_state": "CI", "customer_zip_code": "00225"} {
				if req[field] != want {
					t.Errorf("card request's %s = %v; want %v", field, req[field], want)
				}
			}
			// Paid by card: the documented check's answer with the card's
			// payment_method (VISAM, Côte d'Ivoire's card in the tableau's
			// payment_method table), and its notification.
			accepted, err := os.ReadFile(filepath.Join(fake.dir, "check_accepted.json"))
			if err != nil {
				t.Fatal(err)
			}
			fake.on("POST /v2/payment/check", strings.Replace(string(accepted), `"FLOOZ"`, `"VISAM"`, 1))
			form := cinetpayForm(t, fake, "payment_notification.form")
			form.Set("cpm_amount", "5000")
			form.Set("payment_method", "VISAM")
			cinetpayNotify(e, g.ID, form, secret)
			settled(t, st, "CinetPay's notification", id)
			if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
				t.Fatalf("after CinetPay's notification = %s", got)
			}
		})

		t.Run("Transfer", func(t *testing.T) {
			body := map[string]any{"amount": 500, "country": "CI", "operator": "orange_money", "phone": "+225 07 07 12 34 56",
				"recipient_name": "Awa Kone"}
			r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "first-transfer")...)
			if r.status != 201 || r.str("status") != "processing" {
				t.Fatalf("create = %d %s", r.status, r.raw)
			}
			if !cinetpayCalled(fake, "POST /v1/auth/login", "POST /v1/transfer/contact", "POST /v1/transfer/money/send/contact") {
				t.Fatalf("calls = %v; want the documented login, contact and send", fake.calls)
			}
			// CinetPay treats the transfer (VAL) and notifies: an unsigned
			// form, which the check confirms.
			fake.on("GET /v1/transfer/check/money", "transfer_check_val.json")
			cinetpayNotify(e, g.ID, cinetpayForm(t, fake, "transfer_notification.form"), "")
			// Read in the store: the notification, not a later read, settled it.
			tr, err := st.Transfer(context.Background(), ws.ID, r.str("id"))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Status != cauri.TransferSucceeded || tr.ProviderRef != "EA230301.165358.X622533" {
				t.Fatalf("after CinetPay's notification the transfer is %s (%q); want succeeded, with CinetPay's transaction_id", tr.Status, tr.ProviderRef)
			}
			if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
				t.Fatalf("after CinetPay's notification = %s", got.raw)
			}
		})
	})
}

// TestDocumented_CinetPayV1 is a merchant's first payment through a
// CinetPay account on the API v1 (api_key and api_password), answered only
// by what CinetPay's SDKs document: the login, the payment sent to
// CinetPay's page, and its status read SUCCESS. The v1 notification's body
// is documented nowhere (testdata/SOURCES.md): the payment ends as the
// cinetpay-seamless README recommends, by the status read
// ("Vérification statut recommandée": GET /v1/payment/{merchant_transaction_id}),
// here when the customer's page asks.
func TestDocumented_CinetPayV1(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Abidjan shop", true)
		fake := newDocumented(t, "cinetpay", cinetpayRef, cinetpayIDs...).
			on("POST /v1/oauth/login", "v1_login.json").
			on("POST /v1/payment", "v1_payment_created.json").
			on("GET /v1/payment/", "v1_status_pending.json")
		g := e.addDocumented(ws, "cinetpay", fake, map[string]string{"api_key": "sk_live_4f1c2b7a9e", "api_password": "pw-live-1"}, "CI")

		id := e.mustSession(keys["live_public"], map[string]any{"amount": 5000, "currency": "XOF"})
		r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "OM", "phone": "07 07 12 34 56"})
		if next := nextOf(r); r.status != 200 || r.str("status") != "PENDING" || next["type"] != "redirect" ||
			next["url"] != "https://secure.cinetpay.net/payment/a1b2c3d4e5f60718293a4b5c6d7e8f90" {
			t.Fatalf("initiate = %d %s; want the customer sent to CinetPay's page", r.status, r.raw)
		}
		if !cinetpayCalled(fake, "POST /v1/oauth/login", "POST /v1/payment") {
			t.Fatalf("calls = %v; want the documented login, then the payment", fake.calls)
		}
		fake.on("GET /v1/payment/", "v1_status_success.json")
		e.clock.Add(9 * time.Second) // past the page's check interval
		if v := e.do("POST", "/checkout/verify", map[string]string{"transactionId": id}); v.status != 200 {
			t.Fatalf("verify = %d %s", v.status, v.raw)
		}
		settled(t, st, "the page's check", id)
		if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
			t.Fatalf("after CinetPay's status read = %s", got)
		}
		attempts, err := st.Attempts(context.Background(), id)
		if err != nil || len(attempts) != 1 || attempts[0].ProviderRef != "27ba5590f3ae4c6f9585ae1e4f5265dd" ||
			attempts[0].Status != cauri.AttemptSucceeded {
			t.Fatalf("attempts = %+v, %v; want CinetPay's transaction_id on the paid attempt", attempts, err)
		}
	})
}

// cinetpayCalled reports whether the fake received each call, in that order.
func cinetpayCalled(d *documented, calls ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := 0
	for _, c := range d.calls {
		if i < len(calls) && c == calls[i] {
			i++
		}
	}
	return i == len(calls)
}
