package store_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// tables are the tables that grow with a merchant's history: a query of a
// read path that scans one whole is a query whose cost grows with it.
var tables = []string{"checkout_sessions", "payment_attempts", "events", "webhook_deliveries", "transfers",
	"notifications", "idempotency_keys", "payment_rollups", "payment_rollup_changes", "ledger_movements", "ledger_entries", "audit_log",
	"api_keys", "workspaces", "payment_links", "refunds", "search_terms"}

// TestStore_ReadPathsUseIndexes runs each read path a merchant's history
// weighs on (issue 18, point 4: status reads, the delivery list with its
// filters, the transfer list, the dashboard's overview and transactions,
// the export) with a query log, and asks the database for the plan of
// every query it sent: none may scan a whole table. The payment links'
// list and what a link's payments are counted by (issue 19, point 3) too.
func TestStore_ReadPathsUseIndexes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws, keys := newWorkspace(t, s)
		sess := newSession(ws, 1000)
		if _, _, err := s.CreateSession(ctx, sess, nil); err != nil {
			t.Fatal(err)
		}
		now := t0.Add(24 * time.Hour)
		link := &cauri.PaymentLink{ID: cauri.NewID("pl_"), WorkspaceID: ws.ID, Slug: cauri.NewSlug(), Title: "Robe", Amount: 1000, Currency: "XOF",
			Active: true, MaxPayments: 2, CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateLink(ctx, link); err != nil {
			t.Fatal(err)
		}
		paid := paidSession(t, s, ws, 1000)
		refund := newRefund(paid, 0, t0)
		if _, err := s.CreateRefund(ctx, refund, nil, admit); err != nil {
			t.Fatal(err)
		}
		rows := func(store.ExportRow) error { return nil }
		paths := []struct {
			name  string
			run   func(ctx context.Context) error
			byKey string // a table the plan must reach by its primary key
		}{
			{"status read", func(ctx context.Context) error {
				if _, _, err := s.Authenticate(ctx, keys[1].Plaintext, now); err != nil {
					return err
				}
				_, err := s.Session(ctx, sess.ID)
				return err
			}, ""},
			{"deliveries", func(ctx context.Context) error {
				_, err := s.Deliveries(ctx, ws.ID, true, store.DeliveryFilter{Limit: 20})
				return err
			}, ""},
			{"deliveries, failed", func(ctx context.Context) error {
				_, err := s.Deliveries(ctx, ws.ID, true, store.DeliveryFilter{Status: "failed", Limit: 20})
				return err
			}, ""},
			{"deliveries, of an event", func(ctx context.Context) error {
				_, err := s.Deliveries(ctx, ws.ID, true, store.DeliveryFilter{Event: "payment.completed", Limit: 20})
				return err
			}, ""},
			{"deliveries, of a transaction", func(ctx context.Context) error {
				_, err := s.Deliveries(ctx, ws.ID, true, store.DeliveryFilter{TransactionID: sess.ID, Limit: 20})
				return err
			}, ""},
			{"transfers", func(ctx context.Context) error {
				_, err := s.Transfers(ctx, ws.ID, true, "", 20)
				return err
			}, ""},
			{"transfers, failed", func(ctx context.Context) error {
				_, err := s.Transfers(ctx, ws.ID, true, cauri.TransferFailed, 20)
				return err
			}, ""},
			{"refunds", func(ctx context.Context) error {
				_, err := s.Refunds(ctx, ws.ID, true, store.RefundFilter{Limit: 20})
				return err
			}, ""},
			{"refunds, succeeded", func(ctx context.Context) error {
				_, err := s.Refunds(ctx, ws.ID, true, store.RefundFilter{Status: cauri.RefundSucceeded, Limit: 20})
				return err
			}, ""},
			{"refunds, of a transaction", func(ctx context.Context) error {
				_, err := s.Refunds(ctx, ws.ID, true, store.RefundFilter{SessionID: sess.ID, Limit: 20})
				return err
			}, ""},
			{"refunds, the next page", func(ctx context.Context) error {
				_, err := s.Refunds(ctx, ws.ID, true, store.RefundFilter{After: refund.ID, Limit: 20})
				return err
			}, ""},
			{"a transaction's refunds", func(ctx context.Context) error {
				_, err := s.SessionRefunds(ctx, sess.ID)
				return err
			}, ""},
			{"refunds due", func(ctx context.Context) error {
				_, err := s.DueRefunds(ctx, now, 8*time.Second, time.Hour, 100)
				return err
			}, ""},
			// By the key (workspace first), whatever the statistics: the
			// daily purge's index holds test counts alone.
			{"overview, 30 days", func(ctx context.Context) error {
				_, err := s.Stats(ctx, ws.ID, true, now.Add(-30*24*time.Hour), now)
				return err
			}, "payment_rollups"},
			{"transactions page", func(ctx context.Context) error {
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Limit: 50}, rows)
			}, ""},
			{"transactions page, failed", func(ctx context.Context) error {
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Status: cauri.SessionFailed, Limit: 50}, rows)
			}, ""},
			{"export of a month", func(ctx context.Context) error {
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{From: now.Add(-30 * 24 * time.Hour), To: now}, rows)
			}, ""},
			{"search, a name", func(ctx context.Context) error {
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Search: "awa", Limit: 50}, rows)
			}, ""},
			{"search, a phone number", func(ctx context.Context) error {
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Search: "+221 77 123 45 67", Limit: 50}, rows)
			}, ""},
			// A search whose terms are too many to sort walks the sessions
			// (here whatever it matches), then reads the terms when the
			// walk did not fill its page: each of its three queries.
			{"search, the sessions walked", func(ctx context.Context) error {
				defer store.SetSearchWalkFrom(0)()
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Search: "+221 77 123 45 67", Limit: 1}, rows)
			}, ""},
			{"search, a short word, failed payments", func(ctx context.Context) error {
				return s.ExportTransactions(ctx, ws.ID, true, store.ExportFilter{Search: "ab", Status: cauri.SessionFailed, Limit: 50}, rows)
			}, ""},
			{"payment links", func(ctx context.Context) error {
				_, err := s.Links(ctx, ws.ID, store.LinkPage{Limit: 51})
				return err
			}, ""},
			{"payment links, the next page", func(ctx context.Context) error {
				_, err := s.Links(ctx, ws.ID, store.LinkPage{Limit: 51, After: link})
				return err
			}, ""},
			{"payment links' payments", func(ctx context.Context) error {
				_, err := s.LinkPayments(ctx, []string{link.ID, cauri.NewID("pl_")})
				return err
			}, ""},
			// What a link's page and the admission of its payments count.
			{"payment link's use", func(ctx context.Context) error {
				_, err := s.LinkUse(ctx, link)
				return err
			}, ""},
			// The dashboard's first-run checklist, on every overview.
			{"first-run checklist", func(ctx context.Context) error {
				_, err := s.Setup(ctx, ws.ID)
				return err
			}, ""},
			// The webhook worker's claim runs under SQLite's write lock: by
			// primary key, never along the backlog's status index.
			{"webhook claim", func(ctx context.Context) error {
				_, _, err := s.ClaimDeliveries(ctx, []string{cauri.NewID("whd_"), cauri.NewID("whd_")}, now, now.Add(time.Minute))
				return err
			}, "webhook_deliveries"},
			// A customer's earlier failures by phone, at every payment
			// initiation: through the search terms' index, not the attempts.
			{"a phone's failed attempts", func(ctx context.Context) error {
				_, err := s.FailedAttemptsForPhone(ctx, ws.ID, true, "+221771234567", now.Add(-time.Hour), now)
				return err
			}, ""},
			{"webhook due endpoints", func(ctx context.Context) error {
				_, err := s.DueEndpoints(ctx, now.Add(-5*time.Second), now, 100)
				return err
			}, ""},
			// The reconcilers' passes, every 10 seconds on every node: their
			// cost follows what is pending, not the history (issue 24).
			{"reconciler: expired sessions", func(ctx context.Context) error {
				_, err := s.ExpiredSessions(ctx, now, 100)
				return err
			}, ""},
			{"reconciler: orphan attempts", func(ctx context.Context) error {
				_, err := s.AdoptOrphanAttempts(ctx, now.Add(-5*time.Minute), now)
				return err
			}, ""},
			{"reconciler: due attempts", func(ctx context.Context) error {
				_, err := s.DueAttempts(ctx, now, 8*time.Second, time.Hour, 100)
				return err
			}, ""},
			{"reconciler: due transfers", func(ctx context.Context) error {
				_, err := s.DueTransfers(ctx, now, 8*time.Second, time.Hour, 100)
				return err
			}, ""},
			{"reconciler: orphan transfers", func(ctx context.Context) error {
				_, err := s.OrphanTransfers(ctx, now.Add(-5*time.Minute), 100)
				return err
			}, ""},
			{"webhooks page's notifications", func(ctx context.Context) error {
				_, _, err := s.UnreadNotifications(ctx, ws.ID, true, 10)
				return err
			}, ""},
			{"daily purge of test data", func(ctx context.Context) error {
				_, err := s.PurgeTestData(ctx, now.Add(-90*24*time.Hour))
				return err
			}, ""},
			{"daily purge of the webhook log", func(ctx context.Context) error {
				_, err := s.PurgeEventLog(ctx, now.Add(-180*24*time.Hour))
				return err
			}, ""},
			{"hourly purge of idempotency keys", func(ctx context.Context) error {
				_, err := s.PurgeIdempotencyKeys(ctx, now.Add(-24*time.Hour))
				return err
			}, ""},
			// Each endpoint's due deliveries, the first few in order, not
			// all of its backlog sorted.
			{"webhook due deliveries", func(ctx context.Context) error {
				_, err := s.DueDeliveries(ctx, now, map[store.Endpoint]int{{WorkspaceID: ws.ID, Livemode: true}: 16})
				return err
			}, ""},
		}
		// The index one of a path's queries must read: a filtered page's
		// rows alone, in order, not the whole list's filtered (a rare
		// event type read 700 deliveries for 20).
		reads := map[string]string{"deliveries, of an event": "webhook_deliveries_event_list",
			// An event is kept while a delivery of it is pending: probed
			// among the pending deliveries alone, not every workspace's.
			"daily purge of the webhook log": "webhook_deliveries_pending_event"}
		// SQLite's whole-table scan (SCAN without USING INDEX: of a table
		// or of its alias in the query), PostgreSQL's.
		// SQLite's SCAN of a table through an index reads the whole index.
		scan := regexp.MustCompile(`^SCAN (\w+)(?: USING (?:COVERING )?INDEX \w+)?$|Seq Scan on (\w+)`)
		// A page read newest first (or the worker's oldest due first) that
		// sorts every row it matched rather than reading them in an index's
		// order (PostgreSQL shows it; SQLite
		// sorts ties only, "FOR LAST TERM OF ORDER BY", whatever the index).
		sortAll := regexp.MustCompile(`Sort Key: ((\w+\.)?created_at DESC, (\w+\.)?id DESC|(\w+\.)?next_attempt_at, (\w+\.)?id)`)
		alias := regexp.MustCompile(`(?i)\b(?:FROM|JOIN)\s+(\w+)(?:\s+(?:AS\s+)?(\w+))?`)
		// PostgreSQL's index scan with no condition on the index's first
		// column reads the whole index (SQLite says SCAN, above).
		leads, err := s.IndexLeads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		indexScan := regexp.MustCompile(`(?:Index Scan|Index Only Scan)(?: Backward)? using (\w+) on (\w+)|Bitmap Index Scan on (\w+)`)
		for _, p := range paths {
			t.Run(p.name, func(t *testing.T) {
				type sent struct {
					q    string
					args []any
				}
				var queries []sent
				if err := p.run(store.WithQueryLog(ctx, func(q string, args []any) { queries = append(queries, sent{q, args}) })); err != nil {
					t.Fatal(err)
				}
				if len(queries) == 0 {
					t.Fatal("no query logged")
				}
				var plans []string
				defer func() {
					if index := reads[p.name]; index != "" && !strings.Contains(strings.Join(plans, "\n"), index) {
						t.Errorf("%s does not read %s; plans:\n%s", p.name, index, strings.Join(plans, "\n---\n"))
					}
				}()
				for _, q := range queries {
					plan, err := s.Explain(ctx, q.q, q.args)
					if err != nil {
						t.Fatalf("explain %s: %v", q.q, err)
					}
					names := map[string]string{} // alias or table: table
					for _, m := range alias.FindAllStringSubmatch(q.q, -1) {
						names[m[1]] = m[1]
						if m[2] != "" {
							names[m[2]] = m[1]
						}
					}
					if p.byKey != "" && !strings.Contains(strings.Join(plan, "\n"), p.byKey+"_pkey") &&
						!strings.Contains(strings.Join(plan, "\n"), "sqlite_autoindex_"+p.byKey) {
						t.Errorf("%s does not reach %s by its primary key:\n%s\nplan:\n%s", p.name, p.byKey, q.q, strings.Join(plan, "\n"))
					}
					plans = append(plans, strings.Join(plan, "\n"))
					for i, line := range plan {
						if m := indexScan.FindStringSubmatch(line); m != nil && leads != nil {
							index := m[1] + m[3]
							cond := ""
							for _, next := range plan[i+1:] {
								if strings.Contains(next, "->") {
									break
								}
								if c := strings.TrimSpace(next); strings.HasPrefix(c, "Index Cond:") {
									cond = c
								}
							}
							if lead, ok := leads[index]; ok && !regexp.MustCompile(`\b`+lead+`\b`).MatchString(cond) {
								t.Errorf("%s reads the whole of index %s (no condition on its first column, %s):\n%s\nplan:\n%s", p.name, index, lead, q.q, strings.Join(plan, "\n"))
							}
						}
						if sortAll.MatchString(line) {
							t.Errorf("%s sorts every row it matched:\n%s\nplan:\n%s", p.name, q.q, strings.Join(plan, "\n"))
						}
						m := scan.FindStringSubmatch(strings.TrimSpace(line))
						if m == nil {
							continue
						}
						if table := names[m[1]+m[2]]; slices.Contains(tables, table) {
							t.Errorf("%s scans the whole of %s:\n%s\nplan:\n%s", p.name, table, q.q, strings.Join(plan, "\n"))
						}
					}
				}
			})
		}
	})
}

// TestOpenDB_PostgresWithoutJIT: the store's PostgreSQL sessions run with
// JIT compilation off (a list's page on a table without fresh statistics
// compiled for 250 ms to read 1 ms), unless the URL sets it.
func TestOpenDB_PostgresWithoutJIT(t *testing.T) {
	u := storetest.PostgresURL(t)
	for url, want := range map[string]string{u: "off", u + "&jit=on": "on"} {
		db, _, err := store.OpenDB(url)
		if err != nil {
			t.Fatal(err)
		}
		var jit string
		err = db.QueryRow(`SHOW jit`).Scan(&jit)
		db.Close()
		if err != nil || jit != want {
			t.Errorf("jit = %q, %v; want %q", jit, err, want)
		}
	}
}

// fortyClients makes a workspace with 40 live sessions of customers named
// "Client 0" to "Client 39", a minute apart from t0.
func fortyClients(t *testing.T, s *store.Store) *cauri.Workspace {
	t.Helper()
	ws, _ := newWorkspace(t, s)
	for i := range 40 {
		sess := newSession(ws, 1000)
		sess.Livemode, sess.CustomerName = true, fmt.Sprintf("Client %d", i)
		sess.CreatedAt = t0.Add(time.Duration(i) * time.Minute)
		if _, _, err := s.CreateSession(context.Background(), sess, nil); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// TestStore_SearchWalk: a search whose terms match many entries walks the
// sessions newest first (issue 24: a word all 11 000 customers share cost
// 45 to 110 ms read from the terms) and finds what reading the terms
// finds, page by page, within dates, and falls back to the terms when the
// walk does not fill the page.
func TestStore_SearchWalk(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws := fortyClients(t, s)
		// find returns what a search found and whether its page came from
		// a walk (its last query read no terms).
		find := func(f store.ExportFilter) (ids []string, walked bool) {
			t.Helper()
			var last string
			logged := store.WithQueryLog(ctx, func(q string, args []any) { last = q })
			if err := s.ExportTransactions(logged, ws.ID, true, f, func(r store.ExportRow) error {
				ids = append(ids, r.Session.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return ids, !strings.Contains(last, "search_terms")
		}
		cases := []struct {
			f    store.ExportFilter
			walk bool // the walk fills the page
		}{
			{store.ExportFilter{Search: "client", Limit: 10}, true},
			{store.ExportFilter{Search: "client", Limit: 10, Offset: 10}, true},
			{store.ExportFilter{Search: "client", Limit: 10, From: t0.Add(5 * time.Minute), To: t0.Add(12 * time.Minute)}, false},
			{store.ExportFilter{Search: "client", Limit: 3, From: t0.Add(5 * time.Minute), To: t0.Add(12 * time.Minute)}, true},
			{store.ExportFilter{Search: "client 3", Limit: 10}, true},             // 3 and 30 to 39
			{store.ExportFilter{Search: "client 3", Limit: 10, Offset: 5}, false}, // 11 of the 15 wanted
			{store.ExportFilter{Search: "client", Limit: 300}, false},             // more than the walk reads
		}
		for _, c := range cases {
			want, walked := find(c.f)
			if walked {
				t.Fatalf("%+v walked the sessions with the bound at its default", c.f)
			}
			restore := store.SetSearchWalkFrom(10)
			got, walked := find(c.f)
			restore()
			if !slices.Equal(got, want) {
				t.Errorf("%+v: walking the sessions found %v; the terms %v", c.f, got, want)
			}
			if walked != c.walk {
				t.Errorf("%+v: walked the sessions %t; want %t", c.f, walked, c.walk)
			}
			if len(want) == 0 {
				t.Errorf("%+v found nothing", c.f)
			}
		}
	})
}

// TestStore_SearchReadsItsPageOnly: a search that matches many payments
// picks its page, newest first, from the search terms' index and reads
// only the page's sessions, not every match's to sort them (issue 24: a
// word all 11 000 customers share took 245 ms at a million sessions). On
// PostgreSQL EXPLAIN ANALYZE counts the sessions' rows read; SQLite's plan
// shows the page chosen (ordered and cut) inside the subquery that reads
// the terms, and the sessions read by their key outside it.
func TestStore_SearchReadsItsPageOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ws := fortyClients(t, s)
		const page = 10
		type sent struct {
			q    string
			args []any
		}
		var queries []sent
		var got []time.Time
		logged := store.WithQueryLog(ctx, func(q string, args []any) { queries = append(queries, sent{q, args}) })
		if err := s.ExportTransactions(logged, ws.ID, true, store.ExportFilter{Search: "client", Limit: page, Offset: page},
			func(r store.ExportRow) error {
				got = append(got, r.Session.CreatedAt)
				return nil
			}); err != nil {
			t.Fatal(err)
		}
		// The second page, newest first: the 30th to the 21st.
		if len(got) != page || !got[0].Equal(t0.Add(29*time.Minute)) || !got[page-1].Equal(t0.Add(20*time.Minute)) {
			t.Fatalf("second page of 10 = %v; want the sessions of minutes 29 down to 20", got)
		}
		// The terms counted (too few to walk the sessions), then the page.
		if len(queries) != 2 {
			t.Fatalf("%d queries; want 2", len(queries))
		}
		q := queries[1]
		read, err := s.SessionRowsRead(ctx, q.q, q.args)
		if err != nil {
			t.Fatal(err)
		}
		if read > page {
			t.Errorf("the page of %d reads %d sessions' rows; want no more than the page:\n%s", page, read, q.q)
		}
		if read >= 0 { // PostgreSQL's EXPLAIN ANALYZE counted them
			if read == 0 {
				t.Errorf("the page of %d read no session's row, as counted: the plan's counts were not read", page)
			}
			return
		}
		plan, err := s.Explain(ctx, q.q, q.args)
		if err != nil {
			t.Fatal(err)
		}
		depth := func(line string) int { return (len(line) - len(strings.TrimLeft(line, " "))) / 2 }
		// The subquery (a top-level node) that reads the terms must sort
		// within itself; the sessions are read by their key at the top.
		chosen, byKey := false, false
		for i, line := range plan {
			if depth(line) == 0 && strings.Contains(line, "checkout_sessions") && strings.Contains(line, "(id=?)") {
				byKey = true
			}
			if depth(line) != 0 || !strings.HasPrefix(line, "CO-ROUTINE") && !strings.HasPrefix(line, "MATERIALIZE") {
				continue
			}
			terms, sorts := false, false
			for _, in := range plan[i+1:] {
				if depth(in) == 0 {
					break
				}
				terms = terms || strings.Contains(in, "search_terms")
				sorts = sorts || depth(in) == 1 && regexp.MustCompile(`USE TEMP B-TREE FOR (ORDER BY|GROUP BY)`).MatchString(in)
			}
			chosen = chosen || terms && sorts
		}
		if !chosen || !byKey {
			t.Errorf("the page is not chosen from the terms before the sessions are read (page chosen in the terms' subquery: %t; sessions by key after it: %t):\n%s\nplan:\n%s",
				chosen, byKey, q.q, strings.Join(plan, "\n"))
		}
	})
}
