package gateways

import (
	"context"
	"strings"
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

// TestRemove: a gateway with a payment pending or a transfer processing
// is kept (its credentials learn their outcome), counted in the refusal;
// once none waits, it is removed, and then unknown.
func TestRemove(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		s := &Service{Store: st, Now: func() time.Time { return now }}
		ws := storetest.Workspace(t, st, "Boutique Adjoa", true, now)
		g := storetest.Gateway(t, st, ws, "pawapay", "http://127.0.0.1:1", map[string]string{"api_token": "t"}, now, "SN")

		sess := &cauri.Session{ID: cauri.NewID("cs_"), WorkspaceID: ws.ID, Livemode: true, Status: cauri.SessionPending, Amount: 1000,
			Currency: "XOF", Metadata: map[string]string{}, CreatedAt: now, UpdatedAt: now}
		if _, _, err := st.CreateSession(ctx, sess, nil); err != nil {
			t.Fatal(err)
		}
		a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: "pawapay", Reference: cauri.NewUUID(),
			Country: "SN", Operator: "wave", Phone: "+221771234567", Status: cauri.AttemptPending, CreatedAt: now, UpdatedAt: now}
		if err := st.StartAttempt(ctx, a, nil, nil); err != nil {
			t.Fatal(err)
		}
		tr := &cauri.Transfer{ID: cauri.NewID("tr_"), WorkspaceID: ws.ID, Livemode: true, Reference: cauri.NewUUID(), Status: cauri.TransferProcessing,
			Amount: 500, Currency: "XOF", Country: "SN", Operator: "wave", Phone: "+221771234567", GatewayID: g.ID, Provider: "pawapay",
			CreatedAt: now, UpdatedAt: now}
		if _, err := st.CreateTransfer(ctx, tr, nil, now, func(int, int) error { return nil }); err != nil {
			t.Fatal(err)
		}

		err := s.Remove(ctx, ws.ID, g.ID)
		if got, want := cauri.ErrorCode(err), cauri.EConflict; got != want {
			t.Fatalf("remove with two waiting: got %s (%v); want %s", got, err, want)
		}
		want := "Gateway " + g.ID + " has 2 payment(s), transfer(s) or refund(s) waiting for their outcome; disable it now and remove it once they have ended"
		if got := cauri.ErrorMessage(err); got != want {
			t.Fatalf("remove with two waiting: got %q; want %q", got, want)
		}
		if _, err := st.GatewayCredentials(ctx, g.ID); err != nil {
			t.Fatalf("credentials of a gateway kept: %v", err)
		}

		if _, _, err := st.FinishTransfer(ctx, tr.ID, func(x *cauri.Transfer) error {
			x.Status, x.FailureCode, x.UpdatedAt = cauri.TransferFailed, "rejected", now
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got := cauri.ErrorMessage(s.Remove(ctx, ws.ID, g.ID)); !strings.Contains(got, " has 1 payment(s), transfer(s) or refund(s) waiting") {
			t.Fatalf("remove with one waiting: got %q; want it counted", got)
		}
		if _, err := st.UpdateAttempt(ctx, a.ID, func(_ *cauri.Session, x *cauri.PaymentAttempt) (*cauri.Event, error) {
			x.Status, x.UpdatedAt = cauri.AttemptFailed, now
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}

		if err := s.Remove(ctx, "ws_another", g.ID); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("another workspace's gateway: got %v; want %s", err, cauri.ENotFound)
		}
		if err := s.Remove(ctx, ws.ID, g.ID); err != nil {
			t.Fatalf("remove with none waiting: %v", err)
		}
		if list, _, _ := s.List(ctx, ws.ID); len(list) != 0 {
			t.Fatalf("after removal, listed: %+v", list)
		}
		err = s.Remove(ctx, ws.ID, g.ID)
		if got, want := cauri.ErrorCode(err), cauri.ENotFound; got != want {
			t.Fatalf("remove again: got %s (%v); want %s", got, err, want)
		}
		if got, want := cauri.ErrorMessage(err), "Gateway "+g.ID+" not found"; got != want {
			t.Fatalf("remove again: got %q; want %q", got, want)
		}
	})
}
