package web

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// Paystack's documented references (internal/gateway/paystack/testdata):
// replaced by ours in its documented answers. Charges, transfers, and the
// transfer of the reversed webhook.
var paystackIDs = []string{"5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b40", "5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b41",
	"5e1c7a2b-0f4d-4c1e-9a7b-3d2f6e8a1b43", "acv_9ee55786-2323-4760-98e2-6380c9cb3f68", "acv_9ee55786-2323-4760-98e2-6380c9cb3f67",
	"a1111111-2222-4333-8444-555555555555"}

// paystackSigned is the x-paystack-signature Paystack sends with body: the
// lowercase hex HMAC-SHA512 of the raw body under the secret key
// (testdata/SOURCES.md, "Webhooks": doc-code-snippets
// src/doc/payments/webhooks/verifying-transaction).
func paystackSigned(body []byte, secretKey string) http.Header {
	mac := hmac.New(sha512.New, []byte(secretKey))
	mac.Write(body)
	return http.Header{"X-Paystack-Signature": {hex.EncodeToString(mac.Sum(nil))}}
}

// paystackWithStatus is the documented answer fixture with its
// data.status set to status: a status word Paystack documents without an
// answer of its own, in its documented envelope (as conformance_test.go's
// edited does).
func paystackWithStatus(t *testing.T, d *documented, fixture, status string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, fixture))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["data"].(map[string]any)["status"] = status
	out, _ := json.Marshal(m)
	return string(out)
}

// paystackCalls are the calls the fake has answered so far.
func paystackCalls(d *documented) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// TestDocumented_Paystack is a merchant's first payments through Paystack
// in Ghana and Kenya, answered only by Paystack's documented answers: Telecel
// (ex-Vodafone) Cash, whose charge asks for the customer's voucher (send_otp,
// then Submit OTP); MTN, whose charge waits for the customer with
// Paystack's instructions (pay_offline), as M-Pesa's in Kenya; each to SUCCESS by the signed
// charge.success webhook. And transfers to an MTN wallet (a recipient, then
// the transfer): one Paystack answers success at once, one it answers
// pending and ends by the signed transfer.success webhook.
func TestDocumented_Paystack(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Accra shop", true)
		const secretKey = "sk_live_documented"
		fake := newDocumented(t, "paystack", jsonRef("reference"), paystackIDs...)
		g := e.addDocumented(ws, "paystack", fake, map[string]string{"secret_key": secretKey}, "GH", "KE")
		// A charge not yet settled: Verify Transaction says so, Check
		// Pending Charge says which step it waits on.
		waiting := func(step string) {
			fake.on("GET /transaction/verify/", "verify_ongoing.json").on("GET /charge/", step)
		}
		paid := func(t *testing.T, id string) {
			t.Helper()
			fake.on("GET /transaction/verify/", "verify_success.json")
			fake.callback(e, g, "webhook_charge_success.json", paystackSigned(fake.body("webhook_charge_success.json"), secretKey))
			settled(t, st, "Paystack's charge.success", id)
			if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
				t.Fatalf("the merchant reads %s; want SUCCESS", got)
			}
		}

		// 25 GHS: the 2500 pesewas of the documented charge_request.json.
		t.Run("TelecelGhana", func(t *testing.T) {
			fake.on("POST /charge", "charge_send_otp.json")
			waiting("charge_send_otp.json")
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 25, "currency": "GHS", "customer_email": "ama.mensah@example.com"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "vod", "phone": "020 123 4567"})
			next := nextOf(r)
			if r.status != 200 || r.str("status") != "PENDING" || next["type"] != "enter_code" ||
				!strings.Contains(next["instructions"].(string), "Dial *110# for a payment voucher") {
				t.Fatalf("initiate = %d %s; want the voucher asked for, in Paystack's words", r.status, r.raw)
			}
			// Submit OTP answers the charge's next step: pending (snippets
			// submit-otp/response.json "200_pending").
			fake.on("POST /charge/submit_otp", "charge_pending.json")
			waiting("charge_pending.json")
			before := len(paystackCalls(fake))
			c := e.do("POST", "/checkout/code", map[string]string{"transactionId": id, "code": "482913"})
			if calls := paystackCalls(fake)[before:]; len(calls) == 0 || calls[0] != "POST /charge/submit_otp" {
				t.Errorf("calls = %v; want the voucher sent to Submit OTP", calls)
			}
			if c.status != 200 || c.str("status") != "PENDING" || nextOf(c)["type"] == "enter_code" {
				t.Fatalf("code = %d %s; want the payment waiting, no code asked any more", c.status, c.raw)
			}
			paid(t, id)
		})

		t.Run("MTNGhana", func(t *testing.T) {
			fake.on("POST /charge", "charge_pay_offline.json")
			waiting("charge_pay_offline.json")
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 25, "currency": "GHS", "customer_email": "ama.mensah@example.com"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "mtn", "phone": "024 123 4567"})
			next := nextOf(r)
			if r.status != 200 || r.str("status") != "PENDING" || next["type"] != "approve" ||
				next["instructions"] != "Approve the prompt on your phone to finish paying" {
				t.Fatalf("initiate = %d %s; want the customer's approval with Paystack's instructions", r.status, r.raw)
			}
			paid(t, id)
		})

		// M-Pesa Kenya: 150 KES, the 15000 cents of the documented
		// charge_request_kes.json, waiting for the customer as MTN's.
		t.Run("MPesaKenya", func(t *testing.T) {
			fake.on("POST /charge", "charge_pay_offline.json")
			waiting("charge_pay_offline.json")
			id := e.mustSession(keys["live_public"], map[string]any{"amount": 150, "currency": "KES", "customer_email": "wanjiru@example.com"})
			r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": "mpesa", "phone": "0712 345678"})
			if r.status != 200 || r.str("status") != "PENDING" || nextOf(r)["type"] != "approve" {
				t.Fatalf("initiate = %d %s; want the customer's approval", r.status, r.raw)
			}
			var sent map[string]any
			json.Unmarshal(fake.last("POST /charge"), &sent)
			if mm, _ := sent["mobile_money"].(map[string]any); mm["provider"] != "mpesa" || mm["phone"] != "254712345678" {
				t.Errorf("charge = %v; want charge_request_kes.json's provider and phone", sent)
			}
			paid(t, id)
		})

		// A transfer: its recipient, then the transfer to it (Paystack's
		// four steps, paystack.com/docs/transfers/single-transfers).
		transfer := func(t *testing.T, key string) response {
			t.Helper()
			before := len(paystackCalls(fake))
			defer func() {
				if calls := paystackCalls(fake)[before:]; len(calls) < 2 || calls[0] != "POST /transferrecipient" || calls[1] != "POST /transfer" {
					t.Errorf("calls = %v; want the recipient, then the transfer", calls)
				}
			}()
			body := map[string]any{"amount": 1000, "country": "GH", "operator": "mtn_momo", "phone": "055 123 4987", "recipient_name": "Abina Nana",
				"description": "Bonus for the week"}
			return e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", key)...)
		}
		fake.on("POST /transferrecipient", "transfer_recipient_created.json")

		// 1000 GHS: the 100000 pesewas of the documented transfer_request.json.
		t.Run("TransferSucceeded", func(t *testing.T) {
			// Initiate Transfer's documented answer: "Transfer has been
			// queued", status success (conclusive: "How Transfers Work").
			fake.on("POST /transfer", "transfer_queued.json").on("GET /transfer/verify/", "transfer_verify_success.json")
			r := transfer(t, "first-transfer")
			if r.status != 201 || r.str("status") != "succeeded" {
				t.Fatalf("create = %d %s; want succeeded as Paystack answered", r.status, r.raw)
			}
		})

		t.Run("TransferPendingThenWebhook", func(t *testing.T) {
			// pending: "Transfer is being processed", not conclusive
			// (paystack.com/docs/transfers/how-transfers-work), in Initiate
			// Transfer's documented envelope.
			pending := paystackWithStatus(t, fake, "transfer_queued.json", "pending")
			fake.on("POST /transfer", pending).on("GET /transfer/verify/", paystackWithStatus(t, fake, "transfer_verify_success.json", "pending"))
			r := transfer(t, "second-transfer")
			if r.status != 201 || r.str("status") != "processing" {
				t.Fatalf("create = %d %s; want processing", r.status, r.raw)
			}
			fake.on("GET /transfer/verify/", "transfer_verify_success.json")
			fake.callback(e, g, "webhook_transfer_success.json", paystackSigned(fake.body("webhook_transfer_success.json"), secretKey))
			if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
				t.Fatalf("after Paystack's transfer.success = %s", got.raw)
			}
		})
	})
}
