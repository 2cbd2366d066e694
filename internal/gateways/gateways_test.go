package gateways

import (
	"context"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestAddListSwitch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		s := &Service{Store: st, Now: func() time.Time { return now }}
		ws := storetest.Workspace(t, st, "Boutique Adjoa", false, now)
		for _, tc := range []struct {
			in   New
			code string
		}{
			{New{Provider: "stripe"}, cauri.EInvalid},
			{New{Provider: "pawapay"}, cauri.EInvalid}, // no credentials
			{New{Provider: "pawapay", Credentials: map[string]string{"api_token": "t", "extra": "x"}}, cauri.EInvalid},              // an unknown one
			{New{Provider: "pawapay", Countries: []string{"FR"}, Credentials: map[string]string{"api_token": "t"}}, cauri.EInvalid}, // not served
		} {
			if _, err := s.Add(ctx, ws, tc.in); cauri.ErrorCode(err) != tc.code {
				t.Errorf("Add(%+v) = %v; want %s", tc.in, err, tc.code)
			}
		}
		g, err := s.Add(ctx, ws, New{Provider: "pawapay", Live: true, Countries: []string{"SN"}, Credentials: map[string]string{"api_token": "secret-token"}})
		if err != nil {
			t.Fatal(err)
		}
		sim, err := s.Add(ctx, ws, New{Provider: "pawapay", Countries: []string{"SN"}, Credentials: map[string]string{"api_token": "t"},
			BaseURL: "http://127.0.0.1:8090/", NoPayout: true})
		if err != nil || sim.BaseURL != "http://127.0.0.1:8090" || sim.Payout || !sim.Collect {
			t.Fatalf("a gateway at a simulator, collecting only = %+v, %v", sim, err)
		}
		list, _, err := s.List(ctx, ws.ID)
		if err != nil || len(list) != 2 {
			t.Fatalf("list = %d, %v; want the two gateways", len(list), err)
		}
		for _, x := range list {
			if x.CredentialHints["api_token"] == "secret-token" || x.CredentialHints["api_token"] == "" {
				t.Fatalf("%s's credentials shown as %q; want only a hint", x.ID, x.CredentialHints["api_token"])
			}
		}
		if g, err = s.SetEnabled(ctx, ws.ID, g.ID, false); err != nil || g.Enabled {
			t.Fatalf("switched off = %+v, %v", g, err)
		}
		if _, err := s.SetEnabled(ctx, "ws_another", g.ID, true); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("another workspace's gateway: %v; want %s", err, cauri.ENotFound)
		}
		connect := *ws
		connect.Connect = true
		if _, err := s.Add(ctx, &connect, New{Provider: "pawapay", Credentials: map[string]string{"api_token": "t"}}); cauri.ErrorCode(err) != cauri.EForbidden {
			t.Fatalf("a Connect workspace's own gateway: %v; want %s", err, cauri.EForbidden)
		}
	})
}
