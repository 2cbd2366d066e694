package partner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// guard is a webhook address policy: https only (the service's is
// delivery.Guard, tested with it).
type guard struct{}

func (guard) CheckURL(_ context.Context, u string) error {
	if !strings.HasPrefix(u, "https://") {
		return cauri.Errorf(cauri.EInvalid, "webhook url must use https")
	}
	return nil
}

var now = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func service(st *store.Store, secret string) *Service {
	clock := func() time.Time { return now }
	return &Service{Store: st, Gateways: &gateways.Service{Store: st, Now: clock}, Guard: guard{}, Secret: secret, Now: clock}
}

func TestAuthenticate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := service(st, "").Authenticate(ctx, "psk_anything"); cauri.ErrorCode(err) != cauri.EUnavailable {
			t.Fatalf("no secret, no partner: %v; want %s", err, cauri.EUnavailable)
		}
		issued := &store.Partner{ID: cauri.NewID("ptn_"), Name: "Shopmaker", CreatedAt: now}
		if err := st.CreatePartner(ctx, issued, "psk_issued_secret"); err != nil {
			t.Fatal(err)
		}
		s := service(st, "the-single-secret")
		for _, tc := range []struct {
			secret string
			want   string // partner id, or error code
		}{
			{"the-single-secret", Default.ID},
			{"psk_issued_secret", issued.ID},
			{"", cauri.EUnauthorized},
			{"the-single-secreT", "invalid"},
			{strings.Repeat("x", 200), "invalid"},
		} {
			p, err := s.Authenticate(ctx, tc.secret)
			got := cauri.ErrorCode(err)
			switch {
			case errors.Is(err, ErrInvalidSecret):
				got = "invalid"
			case err == nil:
				got = p.ID
			}
			if got != tc.want {
				t.Errorf("Authenticate(%.20q) = %s; want %s", tc.secret, got, tc.want)
			}
		}
	})
}

func TestMerchants(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := service(st, "secret")
		other := &store.Partner{ID: "ptn_other", Name: "Other"}

		// Refused whole: nothing is stored.
		for _, in := range []NewMerchant{
			{Name: "Boutique", Email: "not-an-address"},
			{Name: "Boutique", Email: "awa@example.com", WebhookURL: "http://plain.example"},
			{Name: "Boutique", Email: "awa@example.com", Password: "password12"},
			{Name: "Boutique", Email: "awa@example.com", DefaultCurrency: "XYZ"},
		} {
			if _, err := s.CreateMerchant(ctx, Default, in); cauri.ErrorCode(err) != cauri.EInvalid {
				t.Errorf("CreateMerchant(%+v) = %v; want %s", in, err, cauri.EInvalid)
			}
		}
		if list, _ := s.Merchants(ctx, Default, 50); len(list) != 0 {
			t.Fatalf("after refusals, %d merchants; want none", len(list))
		}

		invited, err := s.CreateMerchant(ctx, Default, NewMerchant{Name: "Boutique Adjoa", Email: "Awa@Example.com", Events: []string{"payment.completed"}})
		if err != nil {
			t.Fatal(err)
		}
		if invited.InvitationToken == "" || invited.OwnerEmail != "awa@example.com" || len(invited.Keys) != 4 || invited.Verified || invited.TransfersEnabled() {
			t.Fatalf("invited = %+v; want an invitation, 4 keys, unverified, no transfers", invited)
		}
		withPassword, err := s.CreateMerchant(ctx, Default, NewMerchant{Name: "Kofi Store", Email: "kofi@example.com", Password: "correct horse battery"})
		if err != nil || withPassword.InvitationToken != "" {
			t.Fatalf("with a password = %+v, %v; want no invitation", withPassword, err)
		}

		if _, err := s.Merchant(ctx, other, invited.ID); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("another partner's merchant: %v; want %s", err, cauri.ENotFound)
		}
		ws, err := s.Workspace(ctx, Default, invited.ID)
		if err != nil {
			t.Fatal(err)
		}
		empty, hook, bad := "", "https://shop.example/hooks", "http://shop.example/hooks"
		if _, err := s.UpdateMerchant(ctx, ws, Update{Name: &empty}); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("empty name: %v", err)
		}
		if _, err := s.UpdateMerchant(ctx, ws, Update{Name: &hook, TestWebhookURL: &bad}); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("a bad test webhook: %v", err)
		}
		m, err := s.UpdateMerchant(ctx, ws, Update{WebhookURL: &hook})
		if err != nil || m.Name != "Boutique Adjoa" || m.Webhook.URL != hook {
			t.Fatalf("after updates = %+v, %v; want the name unchanged by the refused update, the webhook set", m, err)
		}
		list, err := s.Merchants(ctx, Default, 50)
		if err != nil || len(list) != 2 {
			t.Fatalf("merchants = %d, %v; want 2", len(list), err)
		}

		if _, err := s.AddGateway(ctx, ws, gateways.New{Provider: "nobody"}); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("unknown provider: %v", err)
		}
		ws.Connect = true
		if _, err := s.AddGateway(ctx, ws, gateways.New{Provider: "pawapay"}); cauri.ErrorCode(err) != cauri.EForbidden {
			t.Fatalf("a Connect merchant's gateway: %v; want %s", err, cauri.EForbidden)
		}
	})
}
