package transfer

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// withMTN adds to setup's workspace a live MTN MoMo gateway for Côte
// d'Ivoire pointed at MTN's simulator over HTTP on loopback.
func withMTN(t *testing.T, s *Service, st *store.Store, ws *cauri.Workspace) (*mtnmomo.Simulator, *cauri.Gateway) {
	t.Helper()
	creds := map[string]string{"api_user": "0b0c2f36-0d6b-4a8b-9d36-2f7f3c1f2a10", "api_key": "momo-api-key", "collection_key": "col-sub-key",
		"disbursement_key": "dis-sub-key"}
	sim := &mtnmomo.Simulator{APIUser: creds["api_user"], APIKey: creds["api_key"], CollectionKey: creds["collection_key"], DisbursementKey: creds["disbursement_key"]}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, storetest.Gateway(t, st, ws, "mtnmomo", srv.URL, creds, s.Now(), "CI")
}

func TestRecipientName(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _ := setup(t, st, 200)
		sim, g := withMTN(t, s, st, ws)
		for _, tc := range []struct {
			name  string
			p     RecipientParams
			want  string // the name, or why there is none
			found bool
		}{
			{"an MTN holder", RecipientParams{"CI", "mtn_momo", "05 05 12 34 56"}, "Jean Kouassi", true},
			{"an account MTN does not know", RecipientParams{"CI", "mtn_momo", "0505120000"}, NameNotFound, false},
			{"pawaPay tells no name", RecipientParams{"SN", "wave", "771234567"}, NameNotSupported, false},
		} {
			r, err := s.RecipientName(ctx, ws, true, tc.p, nil)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got := ""
			switch {
			case r.NameAvailable && r.Name != nil && r.UnavailableReason == nil:
				got = *r.Name
			case !r.NameAvailable && r.Name == nil && r.UnavailableReason != nil:
				got = *r.UnavailableReason
			}
			if got != tc.want || r.NameAvailable != tc.found || r.Object != "recipient" || r.Country != tc.p.Country {
				t.Errorf("%s: %+v (%q); want %q", tc.name, r, got, tc.want)
			}
		}
		if r, _ := s.RecipientName(ctx, ws, true, RecipientParams{"CI", "mtn_momo", "0505123456"}, nil); r.Phone != "+2250505123456" || *r.Provider != "mtnmomo" {
			t.Errorf("recipient = %+v; want the E.164 number and MTN MoMo", r)
		}
		looked := sim.NameLookups()
		for _, tc := range []struct {
			name    string
			keyLive bool
			p       RecipientParams
			code    string
		}{
			{"a test key", false, RecipientParams{"CI", "mtn_momo", "0505123456"}, "test_mode"},
			{"a country not served", true, RecipientParams{"GH", "mtn_momo", "0241234567"}, "pays_non_desservi"},
			{"no operator", true, RecipientParams{"CI", "", "0505123456"}, "operateur_manquant"},
			{"an operator not served", true, RecipientParams{"CI", "orange_money", "0707123456"}, "operateur_non_desservi"},
			{"a number of another country", true, RecipientParams{"CI", "mtn_momo", "+221771234567"}, "telephone_invalide"},
		} {
			if _, err := s.RecipientName(ctx, ws, tc.keyLive, tc.p, nil); cauri.ErrorReason(err) != tc.code {
				t.Errorf("%s: %v; want %s", tc.name, err, tc.code)
			}
		}
		if sim.NameLookups() != looked {
			t.Errorf("refused lookups asked MTN %d times", sim.NameLookups()-looked)
		}
		// MTN cannot be reached: the name is unavailable, not an error.
		down := *g
		down.ID, down.BaseURL = cauri.NewID("gw_"), "http://127.0.0.1:1"
		if err := st.CreateGateway(ctx, &down, map[string]string{"api_user": "u", "api_key": "k", "collection_key": "c", "disbursement_key": "d"}); err != nil {
			t.Fatal(err)
		}
		st.SetGatewayEnabled(ctx, ws.ID, g.ID, false, s.Now())
		if r, err := s.RecipientName(ctx, ws, true, RecipientParams{"CI", "mtn_momo", "0505123456"}, nil); err != nil || r.NameAvailable || *r.UnavailableReason != NameLookupFailed {
			t.Fatalf("MTN down: %+v, %v; want lookup_failed", r, err)
		}
	})
}

// TestSend_RecipientNameCheck: a name that clearly differs refuses the
// transfer before anything is written (the key stays free); a matching one
// marks it matched; no name sends it unchecked; a replay never looks the
// name up again.
func TestSend_RecipientNameCheck(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _ := setup(t, st, 200)
		sim, _ := withMTN(t, s, st, ws)
		momo := Params{Amount: "2500", Country: "CI", Operator: "mtn_momo", Phone: "0505123456", RecipientName: "Fatou Kouassi", CheckRecipientName: true}
		if _, _, err := s.Send(ctx, ws, momo, "pay-jean", nil); cauri.ErrorReason(err) != "nom_different" || cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("another name = %v; want 400 nom_different", err)
		}
		if list, _ := st.Transfers(ctx, ws.ID, true, "", 200); len(list) != 0 || sim.Payouts() != 0 {
			t.Fatalf("a refused transfer wrote %d transfers, sent %d payouts", len(list), sim.Payouts())
		}
		momo.RecipientName = "KOUASSI J."
		tr, replayed, err := s.Send(ctx, ws, momo, "pay-jean", nil)
		if err != nil || replayed || tr.RecipientNameCheck != cauri.NameCheckMatched || sim.Payouts() != 1 {
			t.Fatalf("the right name = %+v, %v, %v; want created, matched", tr, replayed, err)
		}
		if saved, _ := st.Transfer(ctx, ws.ID, tr.ID); saved.RecipientNameCheck != cauri.NameCheckMatched || *saved.Object().RecipientNameChecked != true {
			t.Fatalf("stored = %+v", saved)
		}
		looked := sim.NameLookups()
		if again, replayed, err := s.Send(ctx, ws, momo, "pay-jean", nil); err != nil || !replayed || again.ID != tr.ID || sim.NameLookups() != looked {
			t.Fatalf("replay = %+v, %v, %v after %d more lookups; want the transfer, none", again, replayed, err, sim.NameLookups()-looked)
		}
		unchecked := momo
		unchecked.CheckRecipientName = false
		if _, _, err := s.Send(ctx, ws, unchecked, "pay-jean", nil); cauri.ErrorCode(err) != cauri.EUnprocessable {
			t.Fatalf("the key with the check left out = %v; want 422, another request", err)
		}
		unknown := momo
		unknown.Phone = "0505120000"
		if tr, _, err := s.Send(ctx, ws, unknown, "", nil); err != nil || tr.RecipientNameCheck != cauri.NameCheckUnavailable || tr.Object().RecipientNameChecked == nil || *tr.Object().RecipientNameChecked {
			t.Fatalf("no name = %+v, %v; want sent, recipient_name_checked false", tr, err)
		}
		wave := params(1000)
		wave.CheckRecipientName = true
		if tr, _, err := s.Send(ctx, ws, wave, "", nil); err != nil || tr.RecipientNameCheck != cauri.NameCheckUnavailable {
			t.Fatalf("pawaPay = %+v, %v; want sent unchecked", tr, err)
		}
		wave.RecipientName = " "
		if _, _, err := s.Send(ctx, ws, wave, "", nil); cauri.ErrorReason(err) != "nom_manquant" {
			t.Fatalf("a check without a name = %v; want nom_manquant", err)
		}
		if tr, _, err := s.Send(ctx, ws, params(1000), "", nil); err != nil || tr.Object().RecipientNameChecked != nil {
			t.Fatalf("without the check = %+v, %v; want recipient_name_checked null", tr, err)
		}
	})
}
