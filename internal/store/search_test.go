package store_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestStore_Search: what a merchant types finds a payment by its
// customer's name (any word, accents and case aside), e-mail or its
// domain, order id, phone number in the formats customers write it (its
// own or the one it was paid from), session id, payment reference or the
// aggregator's; never another workspace's, nor the other mode's. The
// terms written for sessions stored before the terms' table (the
// migration's backfill) find the same.
func TestStore_Search(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		other, _ := newWorkspace(t, s)
		g := storetest.Gateway(t, s, ws, "pawapay", "http://127.0.0.1:1", map[string]string{"api_token": "x"}, t0, "SN", "CI")
		add := func(ws *cauri.Workspace, live bool, name, email, order, phone string) *cauri.Session {
			t.Helper()
			sess := newSession(ws, 1000)
			sess.Livemode, sess.CustomerName, sess.CustomerEmail, sess.CustomerPhone = live, name, email, phone
			sess.Metadata = map[string]string{"order_id": order}
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			return sess
		}
		awa := add(ws, true, "Awa Diop", "Awa.Diop@Example.com", "ORD-1042", "+221771234567")
		aicha := add(ws, true, "Aïcha N'Diaye", "aicha@boutique.sn", "ORD-2000", "")
		jp := add(ws, true, "Jean-Paul Kouassi", "", "", "")
		add(other, true, "Awa Diop", "awa.diop@example.com", "ORD-1042", "+221771234567") // another workspace's
		add(ws, false, "Awa Test", "awa.test@example.com", "ORD-1042", "+221771234567")   // test mode
		att := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: aicha.ID, GatewayID: g.ID, Provider: "pawapay",
			Reference: cauri.NewUUID(), Country: "CI", Operator: "orange_money", OperatorCode: "ORANGE_CIV", Phone: "+2250707123456",
			Status: cauri.AttemptPending, ProviderRef: "PP-77-XYZ", CreatedAt: t0, UpdatedAt: t0}
		if err := s.StartAttempt(ctx, att, nil, nil); err != nil {
			t.Fatal(err)
		}
		// search returns the first limit sessions a search finds, newest
		// first; find all of them, sorted.
		search := func(q string, limit int) []string {
			t.Helper()
			var ids []string
			if err := s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Search: q, Limit: limit}, func(r store.ExportRow) error {
				ids = append(ids, r.Session.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return ids
		}
		find := func(q string) []string {
			t.Helper()
			ids := search(q, 50)
			slices.Sort(ids)
			return ids
		}
		ids := func(ss ...*cauri.Session) []string {
			var out []string
			for _, s := range ss {
				out = append(out, s.ID)
			}
			slices.Sort(out)
			return out
		}
		cases := map[string][]string{
			"awa": ids(awa), "AWA": ids(awa), "diop": ids(awa), "Awa Diop": ids(awa), "awa d": ids(awa),
			"aicha": ids(aicha), "AÏCHA": ids(aicha), "ndiaye": ids(aicha), "n'diaye": ids(aicha),
			"jean-paul": ids(jp), "jean paul kou": ids(jp), "kouassi": ids(jp),
			"awa.diop@example.com": ids(awa), "awa.diop@ex": ids(awa), "aicha@": ids(aicha),
			"ORD-1042": ids(awa), "ord-": ids(awa, aicha),
			"+221 77 123 45 67": ids(awa), "77 123 45 67": ids(awa), "771234567": ids(awa), "0771234567": ids(awa),
			"00221771234567": ids(awa), "77-123-45": ids(awa),
			"07 07 12 34 56": ids(aicha), "+225 07 07 12 34 56": ids(aicha),
			jp.ID: ids(jp), att.Reference: ids(aicha), "PP-77-XYZ": ids(aicha),
			"di": nil, "zz": nil, "nobody": nil, "%": nil, "_": nil, "awa test": nil,
		}
		check := func(when string) {
			t.Helper()
			for q, want := range cases {
				if got := find(q); !slices.Equal(got, want) {
					t.Errorf("%s: search %q = %v; want %v", when, q, got, want)
				}
			}
		}
		check("as written")
		// Each search's newest match, walking the sessions (TestStore_SearchWalk)
		// and from the terms.
		for q := range cases {
			want := search(q, 1)
			restore := store.SetSearchWalkFrom(1)
			got := search(q, 1)
			restore()
			if !slices.Equal(got, want) {
				t.Errorf("search %q, walking the sessions: %v; from the terms: %v", q, got, want)
			}
		}
		if err := s.RefillSearchTerms(ctx); err != nil {
			t.Fatal(err)
		}
		check("after the backfill")
		// Migration 37 makes the terms' table again, with the sessions'
		// times, on a store that has terms without them.
		if err := s.MigrateDownTo(ctx, 36); err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		check("after migration 37 on a store with terms")
	})
}

// TestStore_SearchDuringRollingUpgrade: the terms a node older than
// migration 37 writes (without their session's time) still find their
// session, last (once, in its place, when it has a term with the time
// too), and `cauri search rebuild` puts it in its place (it removes the
// terms without the time).
func TestStore_SearchDuringRollingUpgrade(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		var sessions []*cauri.Session
		for i := range 3 {
			sess := newSession(ws, 1000)
			sess.Livemode, sess.CustomerName = true, "Awa Diop"
			sess.CreatedAt = t0.Add(time.Duration(i) * time.Hour)
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			sessions = append(sessions, sess)
		}
		newest := sessions[2]
		if err := s.WriteTermAsBeforeTime(ctx, ws.ID, true, newest.ID, "diop"); err != nil {
			t.Fatal(err)
		}
		find := func() []string {
			t.Helper()
			var ids []string
			if err := s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Search: "diop", Limit: 50}, func(r store.ExportRow) error {
				ids = append(ids, r.Session.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return ids
		}
		if got, want := find(), []string{sessions[1].ID, sessions[0].ID, newest.ID}; !slices.Equal(got, want) {
			t.Errorf("before the rebuild: %v; want %v (the session without time last)", got, want)
		}
		// A term of its written with the time meanwhile (by a new node):
		// found once, in its place.
		if err := s.WriteTerm(ctx, ws.ID, true, newest.ID, "diop", newest.CreatedAt); err != nil {
			t.Fatal(err)
		}
		if got, want := find(), []string{newest.ID, sessions[1].ID, sessions[0].ID}; !slices.Equal(got, want) {
			t.Errorf("with terms with and without the time: %v; want %v (once, newest first)", got, want)
		}
		if _, err := s.RebuildSearchTerms(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := find(), []string{newest.ID, sessions[1].ID, sessions[0].ID}; !slices.Equal(got, want) {
			t.Errorf("after the rebuild: %v; want %v (newest first, each once)", got, want)
		}
	})
}

// TestStore_ExportDecidingAttempt: an exported transaction names its
// deciding attempt's operator and aggregator reference: the attempt that
// succeeded, else the latest; none without an attempt. A reference keeps
// every character (Orange Money's hold a "|").
func TestStore_ExportDecidingAttempt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, _ := newWorkspace(t, s)
		g := storetest.Gateway(t, s, ws, "pawapay", "http://127.0.0.1:1", map[string]string{"api_token": "x"}, t0, "SN", "CI")
		session := func(name string, at time.Time) *cauri.Session {
			t.Helper()
			sess := newSession(ws, 1000)
			sess.Livemode, sess.CustomerName, sess.CreatedAt = true, name, at
			if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
				t.Fatal(err)
			}
			return sess
		}
		attempt := func(sess *cauri.Session, operator, ref string, at time.Time, ends cauri.AttemptStatus) {
			t.Helper()
			a := &cauri.PaymentAttempt{ID: cauri.NewID("att_"), SessionID: sess.ID, GatewayID: g.ID, Provider: "pawapay",
				Reference: cauri.NewUUID(), Country: "SN", Operator: operator, OperatorCode: "X", Phone: "+221771234567",
				Status: cauri.AttemptPending, ProviderRef: ref, CreatedAt: at, UpdatedAt: at}
			if err := s.StartAttempt(ctx, a, nil, func(*cauri.Session) *cauri.Event { return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdateAttempt(ctx, a.ID, func(sess *cauri.Session, a *cauri.PaymentAttempt) (*cauri.Event, error) {
				a.Status = ends
				if ends == cauri.AttemptSucceeded {
					sess.Status = cauri.SessionSuccess
				}
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		paid := session("Awa", t0)
		attempt(paid, "orange_money", "OM-1", t0.Add(time.Minute), cauri.AttemptFailed)
		attempt(paid, "mtn_momo", "MTN-2", t0.Add(2*time.Minute), cauri.AttemptSucceeded)
		failed := session("Binta", t0.Add(time.Hour))
		attempt(failed, "wave", "W-1", t0.Add(time.Hour+time.Minute), cauri.AttemptFailed)
		attempt(failed, "orange_money", "tok-9f2c|1000", t0.Add(time.Hour+2*time.Minute), cauri.AttemptFailed)
		none := session("Coumba", t0.Add(2*time.Hour))
		want := map[string][2]string{paid.ID: {"mtn_momo", "MTN-2"}, failed.ID: {"orange_money", "tok-9f2c|1000"}, none.ID: {"", ""}}
		got := map[string][2]string{}
		if err := s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Limit: 50}, func(r store.ExportRow) error {
			got[r.Session.ID] = [2]string{r.Operator, r.ProviderRef}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("export: %v; want %v", got, want)
		}
	})
}
