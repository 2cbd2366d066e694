package web

import (
	"context"
	"errors"
	"testing"

	"github.com/cauri-pay/cauri/client"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestTransfers_RecipientName asks a recipient's name before a payout
// through the API and the Go client, end to end against MTN MoMo's
// simulator (a live gateway for Côte d'Ivoire) beside pawaPay's (Senegal,
// no lookup); then a transfer with recipient_name_check: refused with
// nom_different when MTN's name differs, writing nothing and leaving its
// key free; created when it matches, and replayed without a second lookup.
func TestTransfers_RecipientName(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		te := newTransferEnv(t, st)
		creds := map[string]string{"api_user": "0b0c2f36-0d6b-4a8b-9d36-2f7f3c1f2a10", "api_key": "momo-api-key", "collection_key": "col-sub-key",
			"disbursement_key": "dis-sub-key"}
		sim := &mtnmomo.Simulator{APIUser: creds["api_user"], APIKey: creds["api_key"], CollectionKey: creds["collection_key"], DisbursementKey: creds["disbursement_key"]}
		te.addGateway(te.ws, "mtnmomo", sim, creds, "CI")
		secret := bearer(te.keys["live_secret"])
		lookup := func(body any, headers ...string) response {
			return te.do("POST", "/v1/transfers/recipient", body, append(secret, headers...)...)
		}
		r := lookup(map[string]string{"country": "CI", "operator": "mtn_momo", "phone": "05 05 12 34 56"})
		if r.status != 200 || r.str("name") != "Jean Kouassi" || r.body["name_available"] != true || r.body["unavailable_reason"] != nil ||
			r.str("phone") != "+2250505123456" || r.str("provider") != "mtnmomo" {
			t.Fatalf("an MTN holder = %d %s", r.status, r.raw)
		}
		r = lookup(map[string]string{"country": "CI", "operator": "mtn_momo", "phone": "0505120000"})
		if r.status != 200 || r.body["name"] != nil || r.body["name_available"] != false || r.str("unavailable_reason") != "not_found" {
			t.Fatalf("an account MTN does not know = %d %s", r.status, r.raw)
		}
		api := client.New(te.url, te.keys["live_secret"])
		rec, err := api.TransferRecipient(ctx, client.TransferRecipientRequest{Country: "SN", Operator: "wave", Phone: "771234567"})
		if err != nil || rec.NameAvailable || rec.Name != nil || rec.UnavailableReason == nil || *rec.UnavailableReason != "not_supported" {
			t.Fatalf("pawaPay's Wave through the client = %+v, %v; want not_supported", rec, err)
		}
		var apiErr *client.APIError
		if _, err := client.New(te.url, te.keys["test_secret"]).TransferRecipient(ctx, client.TransferRecipientRequest{Country: "CI", Operator: "mtn_momo", Phone: "0505123456"}); !errors.As(err, &apiErr) || apiErr.Status != 403 || apiErr.Code != "test_mode" {
			t.Fatalf("a test key = %v; want 403 test_mode", err)
		}
		looked := sim.NameLookups()
		wantCode(t, lookup(map[string]string{"country": "CI", "operator": "mtn_momo", "phone": "12"}), 400, "telephone_invalide")
		wantCode(t, lookup(map[string]string{"country": "CI", "operator": "orange_money", "phone": "0707123456"}), 400, "operateur_non_desservi")
		wantCode(t, lookup(map[string]any{"country": "CI", "operator": "mtn_momo", "phone": "0505123456", "amount": 5}), 400, "invalid_body")
		wantCode(t, te.do("POST", "/v1/transfers/recipient", map[string]string{"country": "CI", "operator": "mtn_momo", "phone": "0505123456"}), 401, "unauthorized")
		if sim.NameLookups() != looked {
			t.Fatalf("refused lookups asked MTN %d times", sim.NameLookups()-looked)
		}

		// A transfer with the check.
		momo := map[string]any{"amount": 2500, "country": "CI", "operator": "mtn_momo", "phone": "0505123456", "recipient_name": "Fatou Kouassi",
			"recipient_name_check": true}
		wantCode(t, te.send(with(momo, "recipient_name", nil), "Idempotency-Key", "momo-name"), 400, "nom_manquant")
		wantCode(t, te.send(momo, "Idempotency-Key", "momo-name"), 400, "nom_different")
		if n, _ := st.Transfers(ctx, te.ws.ID, true, "", 200); len(n) != 0 || sim.Payouts() != 0 {
			t.Fatalf("a refused transfer wrote %d transfers, sent %d payouts", len(n), sim.Payouts())
		}
		right := with(momo, "recipient_name", "KOUASSI Jean")
		tr := te.send(right, "Idempotency-Key", "momo-name")
		if tr.status != 201 || tr.body["recipient_name_checked"] != true || sim.Payouts() != 1 {
			t.Fatalf("the right name = %d %s", tr.status, tr.raw)
		}
		looked = sim.NameLookups()
		again := te.send(right, "Idempotency-Key", "momo-name")
		if again.status != 200 || again.str("id") != tr.str("id") || again.header.Get("Idempotent-Replayed") != "true" || sim.NameLookups() != looked {
			t.Fatalf("replay = %d %s after %d lookups; want the transfer, no lookup", again.status, again.raw, sim.NameLookups()-looked)
		}
		if got := te.do("GET", "/v1/transfers/"+tr.str("id"), nil, secret...); got.body["recipient_name_checked"] != true {
			t.Fatalf("read = %s", got.raw)
		}
		// No name to compare: sent, recipient_name_checked false; without the
		// check, null.
		if r := te.send(with(wave, "recipient_name_check", true)); r.status != 201 || r.body["recipient_name_checked"] != false {
			t.Fatalf("pawaPay with the check = %d %s", r.status, r.raw)
		}
		if r := te.send(wave); r.status != 201 || r.body["recipient_name_checked"] != nil {
			t.Fatalf("without the check = %d %s", r.status, r.raw)
		}
		// In a batch, each item is checked on its own.
		batch := te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": []any{momo, with(right, "amount", 1000)}},
			append(secret, "Idempotency-Key", "batch-names")...)
		data, _ := batch.body["data"].([]any)
		if batch.status != 200 || len(data) != 2 || data[0].(map[string]any)["code"] != "nom_different" || data[1].(map[string]any)["status"] != float64(201) {
			t.Fatalf("batch = %d %s", batch.status, batch.raw)
		}
		// 30 lookups a minute per workspace.
		var limited response
		for i := 0; i < 31 && limited.status != 429; i++ {
			limited = lookup(map[string]string{"country": "SN", "operator": "wave", "phone": "771234567"})
		}
		wantCode(t, limited, 429, "rate_limited")
	})
}
