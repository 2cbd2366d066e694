package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/gateway/fedapay"
	"github.com/cauri-pay/cauri/internal/gateway/flutterwave"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// transferEnv is a verified workspace with a live pawaPay gateway sending
// money to Senegal, its simulator calling back to the gateway's address.
type transferEnv struct {
	*env
	ws     *cauri.Workspace
	keys   map[string]string
	g      *cauri.Gateway
	sim    *pawapay.Simulator
	simURL string
}

func newTransferEnv(t *testing.T, st *store.Store) *transferEnv {
	e := newEnv(t, st)
	ws, keys := e.newWorkspace("Payroll shop", true)
	g, sim, simURL := e.addSimulatedGateway(ws, "SN")
	sim.CallbackURL = e.url + "/callbacks/" + g.ID
	return &transferEnv{env: e, ws: ws, keys: keys, g: g, sim: sim, simURL: simURL}
}

func (te *transferEnv) send(body any, headers ...string) response {
	return te.do("POST", "/v1/transfers", body, append(bearer(te.keys["live_secret"]), headers...)...)
}

func wantCode(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status || r.str("code") != code || r.str("error") == "" {
		t.Fatalf("answer = %d %s; want %d with code %q", r.status, r.raw, status, code)
	}
}

var wave = map[string]any{"amount": 5000, "country": "SN", "operator": "wave", "phone": "77 123 45 67", "recipient_name": "Awa Diop"}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// TestTransfers_Codes reaches every code of SPEC section 7 through the API.
func TestTransfers_Codes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		te := newTransferEnv(t, st)
		ctx := context.Background()
		// 401
		wantCode(t, te.do("POST", "/v1/transfers", wave), 401, "unauthorized")
		wantCode(t, te.do("POST", "/v1/transfers", wave, bearer(te.keys["live_public"])...), 401, "unauthorized")
		wantCode(t, te.do("GET", "/v1/transfers", nil, bearer(te.keys["live_public"])...), 401, "unauthorized")
		// 403, in the documented order
		wantCode(t, te.do("POST", "/v1/transfers", wave, bearer(te.keys["test_secret"])...), 403, "test_mode")
		wantCode(t, te.do("GET", "/v1/transfers", nil, bearer(te.keys["test_secret"])...), 403, "test_mode")
		_, unverified := te.newWorkspace("Unverified", false)
		wantCode(t, te.do("POST", "/v1/transfers", wave, bearer(unverified["live_secret"])...), 403, "identite_non_verifiee")
		connect, _ := cauri.NewWorkspace("Connect shop", te.clock.Now())
		connect.Verified, connect.Connect = true, true
		ck := cauri.NewKey(connect.ID, cauri.KeySecret, true, te.clock.Now())
		if err := st.CreateWorkspace(ctx, connect, []*cauri.Key{ck}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, te.do("POST", "/v1/transfers", wave, bearer(ck.Plaintext)...), 403, "connect_non_disponible")
		st.SetTransfersClosed(ctx, te.ws.ID, true, te.clock.Now())
		wantCode(t, te.send(wave), 403, "transferts_inactifs")
		wantCode(t, te.do("POST", "/v1/transfers", wave, bearer(te.keys["test_secret"])...), 403, "transferts_inactifs") // the workspace first
		st.SetTransfersClosed(ctx, te.ws.ID, false, te.clock.Now())
		// 400
		wantCode(t, te.send(`{"amount": 5000,`), 400, "invalid_body")
		wantCode(t, te.send(with(wave, "tip", 1)), 400, "invalid_body")
		wantCode(t, te.send(with(wave, "idempotency_key", "a"), "Idempotency-Key", "b"), 400, "invalid_body")
		wantCode(t, te.send(with(wave, "amount", nil)), 400, "montant_invalide")
		wantCode(t, te.send(with(wave, "amount", -5)), 400, "montant_invalide")
		wantCode(t, te.send(with(wave, "amount", "5000")), 400, "montant_invalide")
		wantCode(t, te.send(with(wave, "amount", 10.5)), 400, "montant_invalide") // XOF has no minor unit
		wantCode(t, te.send(with(wave, "country", "GH")), 400, "pays_non_desservi")
		wantCode(t, te.send(with(wave, "country", "Senegal")), 400, "pays_non_desservi")
		wantCode(t, te.send(with(wave, "operator", nil)), 400, "operateur_manquant")
		wantCode(t, te.send(with(wave, "operator", "mpesa")), 400, "operateur_non_desservi")
		wantCode(t, te.send(with(wave, "phone", "+2250707123456")), 400, "telephone_invalide")
		wantCode(t, te.send(with(wave, "phone", "12")), 400, "telephone_invalide")
		wantCode(t, te.send(with(wave, "currency", "GHS")), 400, "devise_invalide")
		wantCode(t, te.send(with(wave, "currency", "ABC")), 400, "devise_invalide")
		st.SetGatewayEnabled(ctx, te.ws.ID, te.g.ID, false, te.clock.Now())
		wantCode(t, te.send(wave), 400, "methode_desactivee")
		st.SetGatewayEnabled(ctx, te.ws.ID, te.g.ID, true, te.clock.Now())
		// 402: the wallet lacks funds; the transfer is kept failed.
		r := te.send(with(wave, "phone", "+221770000049"))
		wantCode(t, r, 402, "solde_insuffisant")
		list := te.do("GET", "/v1/transfers?status=failed", nil, bearer(te.keys["live_secret"])...)
		data, _ := list.body["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["failure_code"] != "solde_insuffisant" {
			t.Fatalf("failed transfers = %s", list.raw)
		}
		// 404
		wantCode(t, te.do("GET", "/v1/transfers/tr_nope", nil, bearer(te.keys["live_secret"])...), 404, "transfert_introuvable")
		wantCode(t, te.do("GET", "/v1/transfers/"+cauri.NewID("tr_"), nil, bearer(te.keys["live_secret"])...), 404, "transfert_introuvable")
		// 500: the aggregator could not be reached; nothing was created.
		before := te.do("GET", "/v1/transfers", nil, bearer(te.keys["live_secret"])...).body["count"]
		down := *te.g
		st.SetGatewayEnabled(ctx, te.ws.ID, te.g.ID, false, te.clock.Now())
		// Nothing listens on 127.0.0.1:1: the connection is refused.
		gw2 := &cauri.Gateway{ID: cauri.NewID("gw_"), WorkspaceID: te.ws.ID, Provider: "pawapay", Name: "pawaPay down", Live: true,
			BaseURL: "http://127.0.0.1:1", Collect: true, Payout: true, Enabled: true, Routes: te.g.Routes, CreatedAt: te.clock.Now()}
		if err := st.CreateGateway(ctx, gw2, map[string]string{"api_token": "x"}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, te.send(wave, "Idempotency-Key", "after-500"), 500, "internal")
		if after := te.do("GET", "/v1/transfers", nil, bearer(te.keys["live_secret"])...).body["count"]; after != before {
			t.Fatalf("transfers %v -> %v after a 500; want none created", before, after)
		}
		st.SetGatewayEnabled(ctx, te.ws.ID, gw2.ID, false, te.clock.Now())
		st.SetGatewayEnabled(ctx, te.ws.ID, down.ID, true, te.clock.Now())
		if r := te.send(wave, "Idempotency-Key", "after-500"); r.status != 201 {
			t.Fatalf("the key of a transfer never created = %d %s; want it usable", r.status, r.raw)
		}
		// 429: the daily cap, then 30 a minute.
		st.SetTransferDailyCap(ctx, te.ws.ID, 3, te.clock.Now())
		wantStatus(t, te.send(wave), 201)
		wantCode(t, te.send(wave), 429, "plafond_journalier")
		te.clock.Add(14*time.Hour + time.Minute) // past midnight GMT
		wantStatus(t, te.send(wave), 201)
		st.SetTransferDailyCap(ctx, te.ws.ID, 1000, te.clock.Now())
		var limited response
		for i := 0; i < 31 && limited.status != 429; i++ {
			limited = te.send(wave)
		}
		wantCode(t, limited, 429, "rate_limited")
		if limited.header.Get("Retry-After") == "" {
			t.Fatal("429 rate_limited without Retry-After")
		}
	})
}

// TestTransfers_ExactlyOnce: a storm of 50 concurrent replays of one key
// makes one transfer and one payout at the aggregator.
func TestTransfers_ExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		te := newTransferEnv(t, st)
		var wg sync.WaitGroup
		answers := make([]response, 50)
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = te.send(wave, "Idempotency-Key", "payroll-2026-11-awa")
			}()
		}
		wg.Wait()
		created, ids := 0, map[string]bool{}
		for _, r := range answers {
			switch r.status {
			case 201:
				created++
				ids[r.str("id")] = true
			case 200:
				ids[r.str("id")] = true
				if r.header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("replay without Idempotent-Replayed: %s", r.raw)
				}
			case 429:
				if r.str("code") != "rate_limited" {
					t.Fatalf("429 = %s", r.raw)
				}
			default:
				t.Fatalf("answer = %d %s", r.status, r.raw)
			}
		}
		if created != 1 || len(ids) != 1 || te.sim.Payouts() != 1 {
			t.Fatalf("%d created, %d distinct transfers, %d payouts at the aggregator; want 1, 1, 1", created, len(ids), te.sim.Payouts())
		}
		// A replay with another request under the same key is refused.
		wantCode(t, te.send(with(wave, "amount", 6000), "Idempotency-Key", "payroll-2026-11-awa"), 422, "idempotency_key_reused")
		// The body's key works as the header's.
		te.clock.Add(time.Minute)
		first := te.send(with(wave, "idempotency_key", "body-key"))
		again := te.send(with(wave, "idempotency_key", "body-key"))
		if first.status != 201 || again.status != 200 || first.str("id") != again.str("id") || te.sim.Payouts() != 2 {
			t.Fatalf("body key: %d %s then %d %s, %d payouts", first.status, first.raw, again.status, again.raw, te.sim.Payouts())
		}
	})
}

// TestTransfers_ReplayNeverAGhost: while the first request of a key is
// still running, a replay waits for it and never answers with a transfer
// that then vanishes. The aggregator here answers slowly and refuses the
// credentials (nothing sent: the first request deletes its transfer and
// answers 500 "not created"): every answer is then a refusal, no 2xx names
// a transfer, and no transfer is left (issue 16: 35-46 such ghosts were
// answered 200 on three nodes, 12 on one).
func TestTransfers_ReplayNeverAGhost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Ghost shop", true)
		refusing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(300 * time.Millisecond)
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"errorCode": "AUTHENTICATION_ERROR", "errorMessage": "The token is not valid"}`))
		})
		e.addGateway(ws, "pawapay", refusing, map[string]string{"api_token": "revoked"}, "SN")
		var wg sync.WaitGroup
		answers := make([]response, 12)
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = e.do("POST", "/v1/transfers", wave, "Authorization", "Bearer "+keys["live_secret"], "Idempotency-Key", "ghost-1")
			}()
		}
		wg.Wait()
		for _, r := range answers {
			if r.status/100 == 2 {
				t.Fatalf("answer = %d %s; want no transfer answered (none was created)", r.status, r.raw)
			}
			if r.status != 500 && r.status != 409 && r.status != 429 {
				t.Fatalf("answer = %d %s; want 500 not created, 409 in use or 429", r.status, r.raw)
			}
			if r.status == 409 && (r.str("code") != "idempotency_key_in_use" || r.header.Get("Retry-After") == "") {
				t.Fatalf("409 = %s %v", r.raw, r.header)
			}
		}
		if list := e.do("GET", "/v1/transfers", nil, bearer(keys["live_secret"])...); strings.Contains(list.raw, `"id"`) {
			t.Fatalf("transfers left = %s; want none", list.raw)
		}
	})
}

// TestTransfers_Outcomes: the callback and the reconciler end transfers
// with their webhooks; a crash between commit and payout call pays once.
func TestTransfers_Outcomes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		te := newTransferEnv(t, st)
		ctx := context.Background()
		get := func(id string) response {
			return te.do("GET", "/v1/transfers/"+id, nil, bearer(te.keys["live_secret"])...)
		}
		r := te.send(wave)
		if r.status != 201 || r.str("status") != "processing" || r.str("provider_operator") != "WAVE_SEN" || r.str("phone") != "+221771234567" ||
			r.body["fee"] != 0.0 || r.body["livemode"] != true || r.str("reference") == "" {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		id := r.str("id")
		gatewaytest.Control(t, te.simURL, "/_sim/settle/"+r.str("reference")) // the callback arrives at once
		if got := get(id); got.str("status") != "succeeded" || got.body["completed_at"] == nil {
			t.Fatalf("after the callback = %s", got.raw)
		}
		events, _ := st.TransferEvents(ctx, id)
		if len(events) != 1 || events[0].Type != cauri.EventTransferSucceeded || !events[0].Livemode {
			t.Fatalf("events = %+v", events)
		}
		gatewaytest.Control(t, te.simURL, "/_sim/callback/"+r.str("reference")+"?status=FAILED") // stale: changes nothing
		if events, _ := st.TransferEvents(ctx, id); len(events) != 1 || get(id).str("status") != "succeeded" {
			t.Fatal("a stale callback changed a succeeded transfer")
		}

		// A lost callback: the reconciler asks.
		te.sim.CallbackURL = ""
		lost := te.send(with(wave, "phone", "+221770000029"))
		gatewaytest.Control(t, te.simURL, "/_sim/settle/"+lost.str("reference"))
		if get(lost.str("id")).str("status") != "processing" {
			t.Fatal("settled without a callback")
		}
		te.clock.Add(time.Minute)
		if _, err := te.srv.Transfers.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		failed := get(lost.str("id"))
		if failed.str("status") != "failed" || failed.str("failure_code") != "rejected" {
			t.Fatalf("after the reconciler = %s", failed.raw)
		}
		if events, _ := st.TransferEvents(ctx, lost.str("id")); len(events) != 1 || events[0].Type != cauri.EventTransferFailed {
			t.Fatalf("events = %+v", events)
		}

		// A crash between the commit and the payout call: the transfer is
		// processing, never initiated. After restart the reconciler sends it once.
		te.sim.CallbackURL = te.url + "/callbacks/" + te.g.ID
		now := te.clock.Now()
		orphan := &cauri.Transfer{ID: cauri.NewID("tr_"), WorkspaceID: te.ws.ID, Livemode: true, Reference: cauri.NewUUID(),
			Status: cauri.TransferProcessing, Amount: 7000, Currency: "XOF", Country: "SN", Operator: "wave", ProviderOperator: "WAVE_SEN",
			Phone: "+221771112233", GatewayID: te.g.ID, Provider: "pawapay", CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateTransfer(ctx, orphan, nil, now.Add(-time.Hour), func(int, int) error { return nil }); err != nil {
			t.Fatal(err)
		}
		payouts := te.sim.Payouts()
		te.srv.Transfers.Reconcile(ctx)
		if te.sim.Payouts() != payouts {
			t.Fatal("the reconciler sent a transfer whose payout call may still be running")
		}
		te.clock.Add(movement.InitiationDeadline + time.Second)
		for range 3 {
			te.srv.Transfers.Reconcile(ctx)
			te.clock.Add(10 * time.Second)
		}
		if te.sim.Payouts() != payouts+1 {
			t.Fatalf("%d payouts for the orphan; want exactly 1", te.sim.Payouts()-payouts)
		}
		gatewaytest.Control(t, te.simURL, "/_sim/settle/"+orphan.Reference)
		if got := get(orphan.ID); got.str("status") != "succeeded" {
			t.Fatalf("orphan after its payout = %s", got.raw)
		}

		// The list and its filters; the options.
		list := te.do("GET", "/v1/transfers?limit=2", nil, bearer(te.keys["live_secret"])...)
		if list.body["count"] != 2.0 || list.str("object") != "list" {
			t.Fatalf("list = %s", list.raw)
		}
		wantCode(t, te.do("GET", "/v1/transfers?limit=0", nil, bearer(te.keys["live_secret"])...), 400, "invalid_body")
		wantCode(t, te.do("GET", "/v1/transfers?limit=201", nil, bearer(te.keys["live_secret"])...), 400, "invalid_body")
		wantCode(t, te.do("GET", "/v1/transfers?status=pending", nil, bearer(te.keys["live_secret"])...), 400, "invalid_body")
		// The dashboard's transfers page lists them, by status.
		addUser(t, st, "payroll@example.com", "correct horse battery", te.ws.ID)
		b := te.newBrowserish()
		b.login("payroll@example.com", "correct horse battery")
		if res, body := b.get("/dashboard/transfers"); res.StatusCode != 200 || strings.Count(body, "<tr data-id=") != 3 || !strings.Contains(body, "(rejected)") {
			t.Fatalf("transfers page = %d, %d rows", res.StatusCode, strings.Count(body, "<tr data-id="))
		}
		if _, body := b.get("/dashboard/transfers?status=failed"); strings.Count(body, "<tr data-id=") != 1 {
			t.Fatalf("failed transfers = %d rows", strings.Count(body, "<tr data-id="))
		}
		opts := te.do("GET", "/v1/transfers?options=1", nil, bearer(te.keys["live_secret"])...)
		if opts.str("object") != "transfer_options" || fmt.Sprint(opts.body["currencies"]) != "[XOF]" {
			t.Fatalf("options = %s", opts.raw)
		}
	})
}

// TestTransfers_Batch: each item validated, capped and idempotent on its
// own; a batch sent again pays each item once.
func TestTransfers_Batch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		te := newTransferEnv(t, st)
		items := []any{
			wave,
			with(wave, "phone", "+221770000049"),    // the wallet lacks funds
			with(wave, "operator", "mpesa"),         // not served
			with(wave, "amount", 7000, "tip", true), // unknown field
			with(wave, "idempotency_key", "own-key"),
		}
		send := func() response {
			return te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": items}, append(bearer(te.keys["live_secret"]), "Idempotency-Key", "payroll-11")...)
		}
		r := send()
		if r.status != 200 || r.body["created"] != 2.0 || r.body["refused"] != 3.0 {
			t.Fatalf("batch = %d %s", r.status, r.raw)
		}
		data := r.body["data"].([]any)
		want := []struct {
			status float64
			code   any
		}{{201, nil}, {402, "solde_insuffisant"}, {400, "operateur_non_desservi"}, {400, "invalid_body"}, {201, nil}}
		for i, w := range want {
			it := data[i].(map[string]any)
			if it["index"] != float64(i) || it["status"] != w.status || it["code"] != w.code {
				t.Fatalf("item %d = %v; want status %v code %v", i, it, w.status, w.code)
			}
		}
		payouts := te.sim.Payouts()
		again := send()
		if again.body["replayed"] != 3.0 || again.body["created"] != 0.0 || te.sim.Payouts() != payouts {
			t.Fatalf("batch again = %s; %d more payouts; want the three transfers (one failed) replayed, none paid again", again.raw, te.sim.Payouts()-payouts)
		}
		wantCode(t, te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": []any{}}, bearer(te.keys["live_secret"])...), 400, "invalid_body")
		wantCode(t, te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": []any{wave}}, bearer(te.keys["test_secret"])...), 403, "test_mode")
	})
}

// TestTransfers_BatchResentAfterChanges: a batch sent again after its
// items were paid answers each paid item as a replay, whatever changed
// since (the operator disabled on the gateway, transfers closed): refusing
// it would tell the merchant it was not paid, and they would pay it again.
// A new item in the resent batch is refused with the reason, and a batch
// with nothing made answers the reason alone.
func TestTransfers_BatchResentAfterChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		te := newTransferEnv(t, st)
		items := []any{wave, with(wave, "phone", "+221770000002")}
		send := func(items []any, key string) response {
			return te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": items}, append(bearer(te.keys["live_secret"]), "Idempotency-Key", key)...)
		}
		if r := send(items, "payroll-12"); r.status != 200 || r.body["created"] != 2.0 {
			t.Fatalf("batch = %d %s", r.status, r.raw)
		}
		paid := te.sim.Payouts()
		if _, err := st.SetGatewayOperator(ctx, te.ws.ID, te.g.ID, "SN", "wave", false, te.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if r := send(items, "payroll-12"); r.status != 200 || r.body["replayed"] != 2.0 || r.body["refused"] != 0.0 {
			t.Fatalf("the batch again, Wave disabled since = %d %s; want both items replayed", r.status, r.raw)
		}
		if _, err := st.SetGatewayOperator(ctx, te.ws.ID, te.g.ID, "SN", "wave", true, te.clock.Now()); err != nil {
			t.Fatal(err)
		}
		st.SetTransfersClosed(ctx, te.ws.ID, true, te.clock.Now())
		r := send(append(items, with(wave, "phone", "+221770000003")), "payroll-12")
		if r.status != 200 || r.body["replayed"] != 2.0 || r.body["refused"] != 1.0 {
			t.Fatalf("the batch again with a new item, transfers closed since = %d %s", r.status, r.raw)
		}
		if it := r.body["data"].([]any)[2].(map[string]any); it["status"] != 403.0 || it["code"] != "transferts_inactifs" {
			t.Fatalf("the new item = %v; want 403 transferts_inactifs", it)
		}
		wantCode(t, send(items, "payroll-13"), 403, "transferts_inactifs")
		// An item answered anything but the refusal keeps the item list:
		// here a key of the first batch sent with another amount.
		r = send([]any{with(wave, "amount", 9999, "idempotency_key", "payroll-12:0")}, "payroll-14")
		if it := r.body["data"]; r.status != 200 || it == nil || it.([]any)[0].(map[string]any)["code"] != "idempotency_key_reused" {
			t.Fatalf("a closed workspace's batch with a reused key = %d %s; want 200 with the item's 422", r.status, r.raw)
		}
		if te.sim.Payouts() != paid {
			t.Fatalf("%d payouts more; want none", te.sim.Payouts()-paid)
		}
	})
}

// TestTransfers_BatchNameChecksLimited: a batch's items asking a recipient
// name check each take a turn of the name lookups' limit (30 a minute per
// workspace), as POST /v1/transfers/recipient does: a batch cannot probe
// more names than lookups may.
func TestTransfers_BatchNameChecksLimited(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		te := newTransferEnv(t, st)
		creds := map[string]string{"api_user": "0b0c2f36-0d6b-4a8b-9d36-2f7f3c1f2a10", "api_key": "momo-api-key", "collection_key": "col-sub-key",
			"disbursement_key": "dis-sub-key"}
		sim := &mtnmomo.Simulator{APIUser: creds["api_user"], APIKey: creds["api_key"], CollectionKey: creds["collection_key"], DisbursementKey: creds["disbursement_key"]}
		te.addGateway(te.ws, "mtnmomo", sim, creds, "CI")
		items := make([]any, 32)
		for i := range items {
			// A name MTN does not hold: refused nom_different, nothing paid.
			items[i] = map[string]any{"amount": 2500, "country": "CI", "operator": "mtn_momo", "phone": "0505123456",
				"recipient_name": "Fatou Traore", "recipient_name_check": true}
		}
		items[31] = wave // no check asked: not limited by it
		r := te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": items}, append(bearer(te.keys["live_secret"]), "Idempotency-Key", "names-1")...)
		if r.status != 200 {
			t.Fatalf("batch = %d %s", r.status, r.raw)
		}
		codes := map[any]int{}
		for _, raw := range r.body["data"].([]any) {
			codes[raw.(map[string]any)["code"]]++
		}
		if codes["nom_different"] != 30 || codes["rate_limited"] != 1 || codes[nil] != 1 || sim.NameLookups() != 30 {
			t.Fatalf("codes = %v, %d lookups; want 30 nom_different, 1 rate_limited, the Wave item sent, 30 lookups", codes, sim.NameLookups())
		}
	})
}

// TestTransfers_BatchDrains: a server that begins to shut down during a
// batch ends what is in flight, starts nothing more, and answers at once
// with each unsent item as 503 shutting_down; the same batch sent again
// (to a server up again) replays what was sent and sends the rest: every
// item paid once.
func TestTransfers_BatchDrains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		draining := make(chan struct{})
		e := newEnv(t, st, func(d *Deps) { d.Draining = draining })
		ws, keys := e.newWorkspace("Payroll shop", true)
		_, sim, simURL := e.addSimulatedGateway(ws, "SN")
		gatewaytest.Control(t, simURL, "/_sim/fault?mode=slow&seconds=0.2") // each payout takes its time
		items := make([]any, 40)
		for i := range items {
			items[i] = wave
		}
		send := func(e *env) response {
			return e.do("POST", "/v1/transfers/batch", map[string]any{"transfers": items}, "Authorization", "Bearer "+keys["live_secret"],
				"Idempotency-Key", "payroll-drain")
		}
		go func() { time.Sleep(300 * time.Millisecond); close(draining) }()
		r := send(e)
		if r.status != 200 {
			t.Fatalf("batch while draining = %d %s", r.status, r.raw)
		}
		created, unsent := 0, 0
		for _, raw := range r.body["data"].([]any) {
			it := raw.(map[string]any)
			switch {
			case it["status"] == 201.0:
				created++
			case it["status"] == 503.0 && it["code"] == "shutting_down" && strings.Contains(it["error"].(string), "same Idempotency-Key"):
				unsent++
			default:
				t.Fatalf("item = %v; want created or shutting_down", it)
			}
		}
		if created == 0 || unsent == 0 || created+unsent != 40 || sim.Payouts() != created {
			t.Fatalf("%d created, %d unsent, %d payouts; want some of each, adding up to 40, each created paid once", created, unsent, sim.Payouts())
		}
		up := newEnv(t, st) // the server up again, on the same store
		again := send(up)
		if again.status != 200 || again.body["replayed"] != float64(created) || again.body["created"] != float64(unsent) || sim.Payouts() != 40 {
			t.Fatalf("the batch again = %d %v replayed, %v created, %d payouts; want %d, %d, 40", again.status, again.body["replayed"],
				again.body["created"], sim.Payouts(), created, unsent)
		}
	})
}

// TestTransfers_EveryConnector sends a transfer through each connector that
// can send money, against its simulator over HTTP: committed, paid once,
// settled by the aggregator's callback with its transfer.succeeded webhook.
func TestTransfers_EveryConnector(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("Payouts everywhere", true)
		cases := []struct {
			provider, country, operator, phone string
			sim                                interface {
				http.Handler
				Payouts() int
			}
			creds   map[string]string
			webhook func(url string)
		}{
			{provider: "cinetpay", country: "CI", operator: "orange_money", phone: "07 07 12 34 56",
				sim:   &cinetpay.Simulator{APIKey: "k", SiteID: "1", SecretKey: "s", TransferPassword: "pw"},
				creds: map[string]string{"apikey": "k", "site_id": "1", "secret_key": "s", "transfer_password": "pw"}},
			{provider: "fedapay", country: "BJ", operator: "mtn_momo", phone: "97 12 34 56",
				sim: &fedapay.Simulator{SecretKey: "sk", WebhookSecret: "wh"}, creds: map[string]string{"secret_key": "sk", "webhook_secret": "wh"}},
			{provider: "paystack", country: "GH", operator: "mtn_momo", phone: "024 123 4567",
				sim: &paystack.Simulator{SecretKey: "sk_live"}, creds: map[string]string{"secret_key": "sk_live"}},
			{provider: "flutterwave", country: "UG", operator: "mtn_momo", phone: "0771 234567",
				sim: &flutterwave.Simulator{SecretKey: "FLWSECK", SecretHash: "h"}, creds: map[string]string{"secret_key": "FLWSECK", "secret_hash": "h"}},
		}
		for _, c := range cases {
			t.Run(c.provider, func(t *testing.T) {
				g, simURL := e.addGateway(ws, c.provider, c.sim, c.creds, c.country)
				switch sim := c.sim.(type) {
				case *fedapay.Simulator:
					sim.WebhookURL = e.url + "/callbacks/" + g.ID
				case *paystack.Simulator:
					sim.WebhookURL = e.url + "/callbacks/" + g.ID
				case *flutterwave.Simulator:
					sim.WebhookURL = e.url + "/callbacks/" + g.ID
				}
				body := map[string]any{"amount": 2000, "country": c.country, "operator": c.operator, "phone": c.phone, "recipient_name": "Kofi Mensah"}
				r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "pay-"+c.provider)...)
				if r.status != 201 || r.str("status") != "processing" || r.str("provider") != c.provider {
					t.Fatalf("create = %d %s", r.status, r.raw)
				}
				again := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "pay-"+c.provider)...)
				if again.status != 200 || again.str("id") != r.str("id") || c.sim.Payouts() != 1 {
					t.Fatalf("replay = %d %s; %d payouts", again.status, again.raw, c.sim.Payouts())
				}
				gatewaytest.Control(t, simURL, "/_sim/settle/"+r.str("reference"))
				got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...)
				if got.str("status") != "succeeded" {
					t.Fatalf("after the aggregator's callback = %s", got.raw)
				}
				if events, _ := st.TransferEvents(context.Background(), r.str("id")); len(events) != 1 || events[0].Type != cauri.EventTransferSucceeded {
					t.Fatalf("events = %+v", events)
				}
			})
		}
		// Flutterwave collects in Kenya but cannot pay out there.
		e.addGateway(ws, "flutterwave", &flutterwave.Simulator{SecretKey: "k", SecretHash: "h"}, map[string]string{"secret_key": "k", "secret_hash": "h"}, "KE")
		r := e.do("POST", "/v1/transfers", map[string]any{"amount": 100, "country": "KE", "operator": "mpesa", "phone": "0712345678"}, bearer(keys["live_secret"])...)
		wantCode(t, r, 400, "pays_non_desservi")
	})
}

// TestTransfers_MpesaB2C: a transfer to a Kenyan M-Pesa wallet through a
// workspace's own Daraja B2C credentials, against the simulator: sent once
// (a replay sends nothing), processing until Daraja's result reaches the
// gateway's callback address with its token; a forged result (no token)
// changes nothing; a lost result is recovered by the reconciler's
// transaction status query, whose own result ends the transfer; a
// failure ends it with Daraja's code; an M-Pesa gateway without B2C
// credentials does not pay out.
func TestTransfers_MpesaB2C(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Nairobi payroll", true)
		cred := base64.StdEncoding.EncodeToString(make([]byte, 256))
		sim := &mpesa.Simulator{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "174379", PassKey: "pk",
			InitiatorName: "testapi", B2CCredential: cred, B2CShortCode: "600996"}
		creds := map[string]string{"consumer_key": "ck", "consumer_secret": "cs", "shortcode": "174379", "passkey": "pk",
			"initiator_name": "testapi", "security_credential": cred, "b2c_shortcode": "600996", "command_id": "SalaryPayment"}
		g, simURL := e.addGateway(ws, "mpesa", sim, creds, "KE")
		send := func(phone, key string) response {
			body := map[string]any{"amount": 2500, "country": "KE", "operator": "mpesa", "phone": phone, "recipient_name": "John Doe"}
			return e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", key)...)
		}
		get := func(id string) response {
			return e.do("GET", "/v1/transfers/"+id, nil, bearer(keys["live_secret"])...)
		}

		r := send("0708374149", "ke-1")
		if r.status != 201 || r.str("status") != "processing" || r.str("provider") != "mpesa" {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		if v, ok := r.body["recipient_name_reported"]; !ok || v != nil {
			t.Fatalf("recipient_name_reported before the result = %v (present %v); want null", v, ok)
		}
		if again := send("0708374149", "ke-1"); again.status != 200 || again.str("id") != r.str("id") || sim.Payouts() != 1 {
			t.Fatalf("replay = %d %s; %d payouts", again.status, again.raw, sim.Payouts())
		}
		// A forged result, without the token Daraja was given, ends nothing.
		forged := fmt.Sprintf(`{"Result":{"ResultType":0,"ResultCode":0,"ResultDesc":"The service request is processed successfully.","OriginatorConversationID":%q,"TransactionID":"FAKE000001"}}`, r.str("reference"))
		for _, q := range []string{"", "/result." + r.str("reference") + "...forged"} {
			if res := e.do("POST", "/callbacks/"+g.ID+q, json.RawMessage(forged)); res.status != 200 {
				t.Fatalf("forged callback = %d %s", res.status, res.raw)
			}
		}
		if got := get(r.str("id")); got.str("status") != "processing" {
			t.Fatalf("after a forged result = %s", got.raw)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+r.str("reference"))
		got := get(r.str("id"))
		if got.str("status") != "succeeded" || sim.B2CPaid(r.str("reference")) != 1 {
			t.Fatalf("after Daraja's result = %s; paid %d", got.raw, sim.B2CPaid(r.str("reference")))
		}
		// The result's ReceiverPartyPublicName ("254708374149 - John Doe"),
		// the name only, is kept on the transfer and in its event.
		if got.str("recipient_name_reported") != mpesa.SimRecipientName {
			t.Fatalf("recipient_name_reported = %q in %s; want %q", got.str("recipient_name_reported"), got.raw, mpesa.SimRecipientName)
		}
		if events, _ := st.TransferEvents(ctx, r.str("id")); len(events) != 1 || events[0].Type != cauri.EventTransferSucceeded ||
			!strings.Contains(string(events[0].Data), `"recipient_name_reported":"John Doe"`) {
			t.Fatalf("events = %+v", events)
		}
		// And on the dashboard's transfers page, beside the name the
		// merchant gave.
		addUser(t, st, "payroll@example.com", "correct horse battery", ws.ID)
		b := e.newBrowserish()
		b.login("payroll@example.com", "correct horse battery")
		if _, body := b.get("/dashboard/transfers"); !strings.Contains(body, `<span class="reported">(registered name: John Doe)</span>`) {
			t.Fatalf("the transfers page does not show the registered name:\n%s", body)
		}

		// The result lost: the reconciler's status query recovers it, and
		// nothing is sent twice.
		sim.LoseResults.Store(true)
		lost := send("0708374150", "ke-2")
		gatewaytest.Control(t, simURL, "/_sim/settle/"+lost.str("reference"))
		if got := get(lost.str("id")); got.str("status") != "processing" {
			t.Fatalf("result lost = %s", got.raw)
		}
		e.clock.Add(time.Hour)
		e.srv.Transfers.Reconcile(ctx)
		deadline := time.Now().Add(5 * time.Second)
		for get(lost.str("id")).str("status") != "succeeded" {
			if time.Now().After(deadline) {
				t.Fatalf("after the status query = %s", get(lost.str("id")).raw)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := get(lost.str("id")); got.str("recipient_name_reported") != mpesa.SimRecipientName {
			t.Fatalf("after the status query, recipient_name_reported = %s", got.raw)
		}
		if sim.Payouts() != 2 || sim.B2CPaid(lost.str("reference")) != 1 {
			t.Fatalf("%d payouts, %d of the lost one paid", sim.Payouts(), sim.B2CPaid(lost.str("reference")))
		}
		sim.LoseResults.Store(false)

		// A failure, with Daraja's code; a number Daraja refuses at once.
		failed := send("0708370029", "ke-3")
		gatewaytest.Control(t, simURL, "/_sim/settle/"+failed.str("reference"))
		if got := get(failed.str("id")); got.str("status") != "failed" || got.str("failure_code") != "rejected" || !strings.Contains(got.raw, "2040") ||
			got.body["recipient_name_reported"] != nil {
			t.Fatalf("failed = %s", got.raw)
		}
		if refused := send("0708370039", "ke-4"); refused.str("status") != "failed" || !strings.Contains(refused.raw, "Invalid PartyB") {
			t.Fatalf("refused = %d %s", refused.status, refused.raw)
		}
		// Whole shillings only.
		body := map[string]any{"amount": 2500.5, "country": "KE", "operator": "mpesa", "phone": "0708374149"}
		if cents := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "ke-5")...); cents.str("status") != "failed" || !strings.Contains(cents.raw, "whole shillings") {
			t.Fatalf("cents = %d %s; %d payouts; later %s", cents.status, cents.raw, sim.Payouts(), get(cents.str("id")).raw)
		}
		if sim.Payouts() != 3 {
			t.Fatalf("%d payouts sent; want 3", sim.Payouts())
		}
	})
}

// TestTransfers_MpesaB2CWrongCredentials: a B2C payout whose initiator
// credential Daraja refuses (its result 2001 "The initiator information is
// invalid.") moved no money: the transfer fails with identifiants_refuses,
// does not count toward the daily cap, and the gateway's page says what
// to fix, until a payout through it succeeds.
func TestTransfers_MpesaB2CWrongCredentials(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		ws, keys := e.newWorkspace("Nairobi payroll", true)
		if _, err := st.SetTransferDailyCap(ctx, ws.ID, 1, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		right := base64.StdEncoding.EncodeToString(make([]byte, 256))
		wrong := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 256))
		sim := &mpesa.Simulator{ConsumerKey: "ck", ConsumerSecret: "cs", ShortCode: "174379", PassKey: "pk",
			InitiatorName: "testapi", B2CCredential: right, B2CShortCode: "600996"}
		creds := map[string]string{"consumer_key": "ck", "consumer_secret": "cs", "shortcode": "174379", "passkey": "pk",
			"initiator_name": "testapi", "security_credential": wrong, "b2c_shortcode": "600996"}
		g, simURL := e.addGateway(ws, "mpesa", sim, creds, "KE")
		send := func(key string) response {
			body := map[string]any{"amount": 2500, "country": "KE", "operator": "mpesa", "phone": "0708374149"}
			return e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", key)...)
		}
		r := send("wrong-1")
		if r.status != 201 || r.str("status") != "processing" {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+r.str("reference"))
		got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...)
		if got.str("status") != "failed" || got.str("failure_code") != cauri.FailureCredentialsRefused ||
			!strings.Contains(got.str("failure_message"), "2001") || sim.B2CPaid(r.str("reference")) != 0 {
			t.Fatalf("after Daraja's 2001 = %s; paid %d", got.raw, sim.B2CPaid(r.str("reference")))
		}
		g2, err := st.GatewayByID(ctx, g.ID)
		if err != nil || !strings.HasPrefix(g2.Problem, movement.CredentialsProblem) || !strings.Contains(g2.Problem, "The initiator information is invalid.") ||
			!strings.Contains(g2.Problem, "initiator_password") {
			t.Fatalf("gateway problem = %q, %v", g2.Problem, err)
		}
		// Shown on the dashboard's gateways page; kept when the connector is
		// built again (a status check, another payout).
		addUser(t, st, "payroll@example.com", "correct horse battery", ws.ID)
		b := e.newBrowserish()
		b.login("payroll@example.com", "correct horse battery")
		if _, body := b.get("/dashboard/gateways"); !strings.Contains(body, "The initiator information is invalid.") {
			t.Fatal("the gateways page does not show the refused credentials")
		}
		// It moved no money: the daily cap of 1 still lets one through, and
		// with the right credential it is paid and clears the problem.
		sim.B2CCredential = wrong
		ok := send("wrong-2")
		if ok.status != 201 {
			t.Fatalf("after a refused transfer, with a cap of 1 = %d %s", ok.status, ok.raw)
		}
		if g2, _ := st.GatewayByID(ctx, g.ID); g2.Problem == "" {
			t.Fatal("the problem was cleared before a payout succeeded")
		}
		gatewaytest.Control(t, simURL, "/_sim/settle/"+ok.str("reference"))
		if got := e.do("GET", "/v1/transfers/"+ok.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
			t.Fatalf("with the right credential = %s", got.raw)
		}
		if g2, _ := st.GatewayByID(ctx, g.ID); g2.Problem != "" {
			t.Fatalf("after a payout succeeded, problem = %q", g2.Problem)
		}
		wantCode(t, send("wrong-3"), 429, "plafond_journalier")
	})
}

// TestTransfers_NeverPaidTwice holds the review's scenarios: a 5xx at
// initiation keeps the transfer (it may have arrived) and the reconciler
// ends it; a replay is answered after transfers were closed; two
// reconcilers adopting one orphan send it once; a batch needs a key.
func TestTransfers_NeverPaidTwice(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		te := newTransferEnv(t, st)
		ctx := context.Background()
		gatewaytest.Control(t, te.simURL, "/_sim/fault?mode=500-initiate")
		r := te.send(wave, "Idempotency-Key", "five-hundred")
		gatewaytest.Control(t, te.simURL, "/_sim/fault?mode=none")
		if r.status != 201 || r.str("status") != "processing" {
			t.Fatalf("after a 5xx = %d %s; want the transfer kept, processing (it may have arrived)", r.status, r.raw)
		}
		if again := te.send(wave, "Idempotency-Key", "five-hundred"); again.status != 200 || again.str("id") != r.str("id") {
			t.Fatalf("retry after a 5xx = %d %s; want the same transfer, never a second", again.status, again.raw)
		}
		te.clock.Add(movement.NotFoundIsFinal + time.Minute)
		te.srv.Transfers.Reconcile(ctx)
		got := te.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(te.keys["live_secret"])...)
		if got.str("status") != "failed" || got.str("failure_code") != "not_received" {
			t.Fatalf("after the reconciler = %s; want failed, not_received", got.raw)
		}

		// A replay wins over a change of the workspace.
		first := te.send(wave, "Idempotency-Key", "before-closing")
		st.SetTransfersClosed(ctx, te.ws.ID, true, te.clock.Now())
		if again := te.send(wave, "Idempotency-Key", "before-closing"); again.status != 200 || again.str("id") != first.str("id") {
			t.Fatalf("replay after closing = %d %s", again.status, again.raw)
		}
		wantCode(t, te.send(wave, "Idempotency-Key", "after-closing"), 403, "transferts_inactifs")
		st.SetTransfersClosed(ctx, te.ws.ID, false, te.clock.Now())

		// Two nodes' reconcilers, one orphan of FedaPay (which has no
		// idempotency key: only the adoption stops a second payout).
		feda := &fedapay.Simulator{SecretKey: "sk", WebhookSecret: "wh"}
		fg, _ := te.addGateway(te.ws, "fedapay", feda, map[string]string{"secret_key": "sk", "webhook_secret": "wh"}, "BJ")
		now := te.clock.Now()
		orphan := &cauri.Transfer{ID: cauri.NewID("tr_"), WorkspaceID: te.ws.ID, Livemode: true, Reference: cauri.NewUUID(),
			Status: cauri.TransferProcessing, Amount: 7000, Currency: "XOF", Country: "BJ", Operator: "mtn_momo", ProviderOperator: "mtn_open",
			Phone: "+22997112233", GatewayID: fg.ID, Provider: "fedapay", CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateTransfer(ctx, orphan, nil, now.Add(-time.Hour), func(int, int) error { return nil }); err != nil {
			t.Fatal(err)
		}
		te.clock.Add(movement.InitiationDeadline + time.Second)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); te.srv.Transfers.Reconcile(ctx) }()
		}
		wg.Wait()
		if feda.Payouts() != 1 {
			t.Fatalf("%d FedaPay payouts for one orphan and four reconcilers; want 1", feda.Payouts())
		}

		wantCode(t, te.do("POST", "/v1/transfers/batch", map[string]any{"transfers": []any{wave}}, bearer(te.keys["live_secret"])...), 400, "invalid_body")
	})
}
