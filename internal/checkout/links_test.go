package checkout

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/connectors"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

func TestCreateLink(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, _, _, clk := setup(t, st)
		base := LinkParams{Title: "Robe wax", Amount: "15000"}
		many := map[string]string{}
		for i := range 51 {
			many[fmt.Sprint("k", i)] = "v"
		}
		for _, tc := range []struct {
			name string
			edit func(p *LinkParams)
			want string // the start of the message
		}{
			{"ErrExpiresAtFormat", func(p *LinkParams) { p.ExpiresAt = "tomorrow" }, "expires_at \"tomorrow\" is not an RFC 3339"},
			{"ErrExpiresAtPast", func(p *LinkParams) { p.ExpiresAt = clk.Now().Add(-time.Minute).Format(time.RFC3339) }, "expires_at 2026-11-25T09:59:00Z is not in the future"},
			{"ErrExpiresAtNow", func(p *LinkParams) { p.ExpiresAt = clk.Now().Format(time.RFC3339) }, "expires_at 2026-11-25T10:00:00Z is not in the future"},
			{"ErrExpiresAtTooFar", func(p *LinkParams) { p.ExpiresAt = clk.Now().AddDate(1, 0, 2).Format(time.RFC3339) }, "expires_at 2027-11-27T10:00:00Z is more than a year away"},
			{"ErrMaxPaymentsZero", func(p *LinkParams) { p.MaxPayments = "0" }, "max_payments must be a whole number from 1 to 10000"},
			{"ErrMaxPaymentsTooMany", func(p *LinkParams) { p.MaxPayments = "10001" }, "max_payments must be"},
			{"ErrMaxPaymentsFraction", func(p *LinkParams) { p.MaxPayments = "1.5" }, "max_payments must be"},
			{"ErrPhoneNational", func(p *LinkParams) { p.Phone = "77 123 45 67" }, "phone must be in international format"},
			{"ErrPhoneImpossible", func(p *LinkParams) { p.Phone = "+221 12" }, "phone \"+221 12\" is not a possible phone number"},
			{"ErrMetadataReserved", func(p *LinkParams) { p.Metadata = map[string]string{"payment_link": "x"} }, "metadata.payment_link is set by Cauri"},
			{"ErrMetadataTooMany", func(p *LinkParams) { p.Metadata = many }, "metadata has 51 keys; at most 50"},
			{"ErrMetadataLongValue", func(p *LinkParams) { p.Metadata = map[string]string{"a": strings.Repeat("x", 501)} }, "metadata.a is longer than 500"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := base
				tc.edit(&p)
				_, err := s.CreateLink(ctx, ws, true, p)
				if cauri.ErrorCode(err) != cauri.EInvalid || !strings.HasPrefix(cauri.ErrorMessage(err), tc.want) {
					t.Fatalf("got %s %q; want %s %q...", cauri.ErrorCode(err), cauri.ErrorMessage(err), cauri.EInvalid, tc.want)
				}
			})
		}
		t.Run("ErrPhoneCountryNotServed", func(t *testing.T) {
			p := base
			p.Phone = "+225 07 07 12 34 56" // the gateway collects in Senegal only
			if _, err := s.CreateLink(ctx, ws, true, p); cauri.ErrorCode(err) != cauri.EConflict || !strings.Contains(cauri.ErrorMessage(err), "+2250707123456") {
				t.Fatalf("got %v; want %s naming the number", err, cauri.EConflict)
			}
		})
		t.Run("OK", func(t *testing.T) {
			p := base
			p.ExpiresAt, p.MaxPayments, p.Phone = "2026-12-01T12:00:00+01:00", "1", "+221 77 123 45 67"
			p.Metadata = map[string]string{"order_id": "A-1"}
			l, err := s.CreateLink(ctx, ws, true, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Link(ctx, ws.ID, l.ID)
			if err != nil || !got.ExpiresAt.Equal(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)) || got.MaxPayments != 1 ||
				got.Phone != "+221771234567" || got.Metadata["order_id"] != "A-1" {
				t.Fatalf("stored = %+v, %v", got, err)
			}
			methods, _ := s.LinkMethods(ctx, got)
			for _, m := range methods {
				if m.Type != TypeMobileMoney || m.Flag != "SN" {
					t.Errorf("a link restricted to a Senegalese number offers %+v", m)
				}
			}
			if len(methods) == 0 {
				t.Error("no method")
			}
		})
	})
}

// payer pays a link as its page does, through node s.
func payer(s *Service, slug, gatewayID, phone string) (*cauri.Session, error) {
	return s.PayLink(context.Background(), slug, LinkPayment{Name: "Awa Diop", Phone: phone, GatewayID: gatewayID, Code: "ORANGE_SEN"})
}

// TestPayLink_MaxPaymentsAcrossNodes: payers of a limited link arriving
// at once through two nodes of one database are admitted up to the limit
// and no further; a payment that fails frees its place; once the limit's
// payments succeeded nobody pays again, from the link's page or from a
// session's.
func TestPayLink_MaxPaymentsAcrossNodes(t *testing.T) {
	for _, db := range []struct {
		name string
		url  func(testing.TB) string
	}{{"sqlite", storetest.SQLiteURL}, {"postgres", storetest.PostgresURL}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			u := db.url(t)
			st1, st2 := storetest.Open(t, u), storetest.Open(t, u)
			s1, ws, g, simURL, clk := setup(t, st1)
			s2 := *s1
			s2.Store, s2.Connectors = st2, &movement.Connectors{Store: st2, Build: connectors.New, Failures: s1.Failures}
			nodes := []*Service{s1, &s2}

			l, err := s1.CreateLink(ctx, ws, true, LinkParams{Title: "Atelier", Amount: "5000", MaxPayments: "2"})
			if err != nil {
				t.Fatal(err)
			}
			const payers = 12
			var wg sync.WaitGroup
			sessions, errs := make([]*cauri.Session, payers), make([]error, payers)
			for i := range payers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sessions[i], errs[i] = payer(nodes[i%2], l.Slug, g.ID, fmt.Sprintf("+2217712345%02d", 10+i))
				}()
			}
			wg.Wait()
			var started []*cauri.Session
			var refused []*cauri.Session
			for i, err := range errs {
				switch {
				case err == nil:
					started = append(started, sessions[i])
				case cauri.ErrorReason(err) == "link_busy":
					if sessions[i] != nil {
						refused = append(refused, sessions[i]) // created before its admission was refused
					}
				default:
					t.Fatalf("payer %d: %v; want started or link_busy", i, err)
				}
			}
			if len(started) != 2 {
				t.Fatalf("%d payments started at once; want the limit, 2", len(started))
			}
			// One of the two fails: its place is free again.
			if _, err := payer(s1, l.Slug, g.ID, "+221771234599"); cauri.ErrorReason(err) != "link_busy" {
				t.Fatalf("a payer while two pay = %v; want link_busy", err)
			}
			attempt := func(sess *cauri.Session) *cauri.PaymentAttempt {
				a, err := st1.Attempts(ctx, sess.ID)
				if err != nil || len(a) == 0 {
					t.Fatalf("attempts of %s = %v, %v", sess.ID, a, err)
				}
				return a[0]
			}
			settle(t, simURL, attempt(started[0]).Reference)
			clk.Add(movement.StatusCheck)
			if got, err := s1.Refresh(ctx, started[0].ID); err != nil || got.Status != cauri.SessionSuccess {
				t.Fatalf("first payment = %+v, %v; want SUCCESS", got, err)
			}
			if _, err := payer(&s2, l.Slug, g.ID, "+221771234595"); cauri.ErrorReason(err) != "link_busy" {
				t.Fatalf("a payer while one pays and one paid = %v; want link_busy", err)
			}
			// The second payment is declined by the payer: the place frees.
			second := started[1]
			a := attempt(second)
			if err := failPayment(ctx, s1, a.ID); err != nil {
				t.Fatal(err)
			}
			third, err := payer(&s2, l.Slug, g.ID, "+221771234598")
			if err != nil {
				t.Fatalf("a payer after a payment failed = %v; want started", err)
			}
			settle(t, simURL, attempt(third).Reference)
			clk.Add(movement.StatusCheck)
			if got, err := s2.Refresh(ctx, third.ID); err != nil || got.Status != cauri.SessionSuccess {
				t.Fatalf("third payment = %+v, %v; want SUCCESS", got, err)
			}
			// Used up: the link's page, and every session of the link, refuse.
			if _, err := payer(s1, l.Slug, g.ID, "+221771234597"); cauri.ErrorReason(err) != "link_used_up" {
				t.Fatalf("a payer after the limit = %v; want link_used_up", err)
			}
			for _, sess := range append(refused, second) {
				if _, err := nodes[0].Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "ORANGE_SEN", Phone: "+221771234596"}); cauri.ErrorReason(err) != "link_used_up" {
					t.Fatalf("another try on session %s = %v; want link_used_up", sess.ID, err)
				}
			}
			if state, _ := s1.LinkState(ctx, l); state != LinkUsedUp {
				t.Fatalf("state = %s; want %s", state, LinkUsedUp)
			}
			use, err := st2.LinkUse(ctx, l)
			if err != nil || use.Completed != 2 || use.InFlight != 0 {
				t.Fatalf("use = %+v, %v; want 2 payments, none under way", use, err)
			}
		})
	}
}

// failPayment ends a pending attempt as its aggregator's failure would.
func failPayment(ctx context.Context, s *Service, attemptID string) error {
	_, err := s.finish(ctx, attemptID, gateway.Status{Outcome: gateway.Failed, Reason: "PAYER_DECLINED"}, true)
	return err
}

func TestPayLink_Controls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, ws, g, _, clk := setup(t, st)
		l, err := s.CreateLink(ctx, ws, true, LinkParams{Title: "Loyer", Amount: "75000", Phone: "+221 77 123 45 67",
			ExpiresAt: clk.Now().Add(time.Hour).Format(time.RFC3339), Metadata: map[string]string{"tenant": "B-12"}})
		if err != nil {
			t.Fatal(err)
		}
		// Only from its number, whichever way it is written.
		if _, err := payer(s, l.Slug, g.ID, "77 123 45 68"); cauri.ErrorReason(err) != "link_phone" || cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("another number = %v; want 400 link_phone", err)
		}
		sess, err := payer(s, l.Slug, g.ID, "77 123 45 67")
		if err != nil {
			t.Fatalf("its number = %v", err)
		}
		if sess.Metadata["tenant"] != "B-12" || sess.Metadata["payment_link"] != l.ID || sess.LinkID != l.ID {
			t.Fatalf("session = %+v; want the link's metadata and its id", sess)
		}
		// Another try from the session's page is held to the number, and
		// to Mobile Money, too.
		attempts, _ := st.Attempts(ctx, sess.ID)
		if err := failPayment(ctx, s, attempts[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Initiate(ctx, sess.ID, Payment{GatewayID: g.ID, Code: "ORANGE_SEN", Phone: "77 123 45 68"}); cauri.ErrorReason(err) != "link_phone" {
			t.Fatalf("another number from the session's page = %v; want link_phone", err)
		}
		// Expired: the page refuses; a new expiry reopens it.
		clk.Add(time.Hour)
		if _, err := payer(s, l.Slug, g.ID, "77 123 45 67"); cauri.ErrorReason(err) != "link_expired" {
			t.Fatalf("after expires_at = %v; want link_expired", err)
		}
		past := clk.Now().Add(-time.Second).Format(time.RFC3339)
		if _, err := s.UpdateLink(ctx, ws, true, l.ID, LinkUpdate{ExpiresAt: &past}); cauri.ErrorCode(err) != cauri.EInvalid {
			t.Fatalf("a past expiry = %v; want %s", err, cauri.EInvalid)
		}
		none := ""
		if got, err := s.UpdateLink(ctx, ws, true, l.ID, LinkUpdate{ExpiresAt: &none}); err != nil || got.ExpiresAt != nil {
			t.Fatalf("remove the expiry = %+v, %v", got, err)
		}
		off := false
		if _, err := s.UpdateLink(ctx, ws, true, l.ID, LinkUpdate{Active: &off}); err != nil {
			t.Fatal(err)
		}
		if _, err := payer(s, l.Slug, g.ID, "77 123 45 67"); cauri.ErrorReason(err) != "link_inactive" {
			t.Fatalf("inactive = %v; want link_inactive", err)
		}
		// Another workspace's link is not found; a test key is refused.
		other := storetest.Workspace(t, st, "Autre", true, clk.Now())
		if _, err := s.UpdateLink(ctx, other, true, l.ID, LinkUpdate{Active: &off}); cauri.ErrorCode(err) != cauri.ENotFound {
			t.Fatalf("another workspace's = %v; want %s", err, cauri.ENotFound)
		}
		if _, err := s.GetLink(ctx, ws, false, l.ID); cauri.ErrorReason(err) != "test_mode" {
			t.Fatalf("a test key = %v; want test_mode", err)
		}
	})
}
