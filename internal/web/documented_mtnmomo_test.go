package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// MTN's documented ids (internal/gateway/mtnmomo/testdata): the
// X-Reference-Id (also the externalId) of the request to pay and of the
// transfer, replaced by our reference in MTN's documented answers.
var mtnmomoIDs = []string{"0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"}

// mtnCallbacks reads our reference where MTN keeps it, the X-Reference-Id
// header of a request to pay or a transfer, and remembers the
// X-Callback-Url the service gave MTN, where MTN calls back, and the
// X-Target-Environment (the country) the API calls named.
type mtnCallbacks struct {
	mu           sync.Mutex
	url          string
	environments map[string]bool
}

func (m *mtnCallbacks) refOf(r *http.Request, _ []byte) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := r.Header.Get("X-Callback-Url"); u != "" {
		m.url = u
	}
	if !strings.Contains(r.URL.Path, "/token/") {
		if m.environments == nil {
			m.environments = map[string]bool{}
		}
		m.environments[r.Header.Get("X-Target-Environment")] = true
	}
	return r.Header.Get("X-Reference-Id")
}

func (m *mtnCallbacks) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.url
}

// only reports whether every API call named the target environment env,
// and the environments they named.
func (m *mtnCallbacks) only(env string) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.environments) == 1 && m.environments[env], fmt.Sprint(m.environments)
}

// callAt sends a documented callback (fixture, our ids in it) as the
// aggregator does: method to the address it was given (an MTN
// X-Callback-Url, an Orange Money notif_url), not the bare address that
// documented.callback POSTs to.
func (d *documented) callAt(method, url, fixture string) {
	d.t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(d.body(fixture)))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		d.t.Fatalf("%s %s with %s answered %d", method, url, fixture, res.StatusCode)
	}
}

// mtnmomoCountries are the countries MTN MoMo is connected in
// (gateway/providers.json), each with its X-Target-Environment, its
// currency and a number of MTN's there.
var mtnmomoCountries = []struct{ country, environment, currency, phone string }{
	{"UG", "mtnuganda", "UGX", "+256772123456"}, // the documented payer (requesttopay_request.json)
	{"BJ", "mtnbenin", "XOF", "+2290166123456"},
	{"CI", "mtnivorycoast", "XOF", "+2250505123456"},
	{"CM", "mtncameroon", "XAF", "+237677123456"},
	{"CG", "mtncongo", "XAF", "+242061234567"},
	{"GN", "mtnguineaconakry", "GNF", "+224661234567"},
	{"GH", "mtnghana", "GHS", "+233241234567"},
	{"RW", "mtnrwanda", "RWF", "+250788123456"}, // the documented payee (transfer_request.json)
	{"ZM", "mtnzambia", "ZMW", "+260961234567"},
}

// TestDocumented_MTNMoMo is a merchant's first payments through MTN MoMo
// in each country it is connected in, answered only by MTN's documented
// answers: a request to pay queued (202, no body), PENDING, then
// SUCCESSFUL by MTN's PUT to the X-Callback-Url, which the service
// confirms by the status read; in Uganda also one settled by the status
// read alone (MTN calls back once, never again); and a transfer to
// SUCCESSFUL by the service's status check (no transfer callback body is
// documented).
func TestDocumented_MTNMoMo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := newEnv(t, st)
		ws, keys := e.newWorkspace("MoMo shop", true)
		for _, c := range mtnmomoCountries {
			t.Run(c.country, func(t *testing.T) {
				cb := &mtnCallbacks{}
				fake := newDocumented(t, "mtnmomo", cb.refOf, mtnmomoIDs...).
					on("POST /collection/token/", "token.json").
					on("POST /disbursement/token/", "token.json").
					on("POST /collection/v1_0/requesttopay", "accepted_no_body.txt", http.StatusAccepted).
					on("POST /disbursement/v1_0/transfer", "accepted_no_body.txt", http.StatusAccepted)
				g := e.addDocumented(ws, "mtnmomo", fake, map[string]string{"api_user": "2bf15487-2309-46e8-82e9-1f658cf3a82c",
					"api_key": "momo-key", "collection_key": "col-sub-key", "disbursement_key": "dis-sub-key",
					"target_environment": c.environment}, c.country)
				// initiate asks for 1000 from the customer's number and
				// answers the session once MTN's status read says PENDING.
				initiate := func(t *testing.T) string {
					t.Helper()
					fake.on("GET /collection/v1_0/requesttopay/", "requesttopay_pending.json")
					id := e.mustSession(keys["live_public"], map[string]any{"amount": 1000, "currency": c.currency})
					r := e.do("POST", "/checkout/initiate", map[string]string{"transactionId": id, "gatewayId": g.ID, "code": c.environment,
						"phone": c.phone})
					if r.status != 200 || r.str("status") != "PENDING" || r.str("redirectUrl") != "" {
						t.Fatalf("initiate = %d %s; want a push to the phone", r.status, r.raw)
					}
					e.clock.Add(movement.StatusCheck + time.Second)
					if got := e.sessionStatus(keys["live_secret"], id); got != "PENDING" {
						t.Fatalf("while MTN answers PENDING = %s", got)
					}
					return id
				}

				t.Run("CallbackPUT", func(t *testing.T) {
					id := initiate(t)
					if want := e.url + "/callbacks/" + g.ID; cb.last() != want {
						t.Fatalf("X-Callback-Url = %q; want %q", cb.last(), want)
					}
					// MTN's status read once it is paid (verbatim: ids as
					// numbers; it is read by our reference in its path).
					fake.on("GET /collection/v1_0/requesttopay/", "requesttopay_successful.json")
					fake.callAt(http.MethodPut, cb.last(), "callback_requesttopay_successful.json")
					// Read from the store, not the status route (which asks
					// MTN itself): only the callback can have settled it.
					if s, err := st.Session(ctx, id); err != nil || s.Status != "SUCCESS" {
						t.Fatalf("after MTN's PUT callback = %+v, %v; want SUCCESS", s, err)
					}
				})

				if c.country == "UG" {
					t.Run("StatusRead", func(t *testing.T) {
						id := initiate(t)
						fake.on("GET /collection/v1_0/requesttopay/", "requesttopay_successful.json")
						e.clock.Add(movement.StatusCheck + time.Second)
						if got := e.sessionStatus(keys["live_secret"], id); got != "SUCCESS" {
							t.Fatalf("after MTN's status read = %s", got)
						}
					})
				}

				t.Run("Transfer", func(t *testing.T) {
					body := map[string]any{"amount": 1000, "country": c.country, "operator": "mtn_momo", "phone": c.phone, "recipient_name": "Akello"}
					r := e.do("POST", "/v1/transfers", body, append(bearer(keys["live_secret"]), "Idempotency-Key", "momo-payout-"+c.country)...)
					if r.status != 201 || r.str("status") != "processing" || r.str("currency") != c.currency {
						t.Fatalf("create = %d %s", r.status, r.raw)
					}
					// MTN's GET /transfer/{referenceId} once paid (verbatim);
					// no transfer callback body is documented, so the
					// service's own status check settles it.
					fake.on("GET /disbursement/v1_0/transfer/", "transfer_successful.json")
					e.clock.Add(movement.StatusCheck + time.Second)
					if _, err := e.srv.Transfers.Reconcile(ctx); err != nil {
						t.Fatal(err)
					}
					if got := e.do("GET", "/v1/transfers/"+r.str("id"), nil, bearer(keys["live_secret"])...); got.str("status") != "succeeded" {
						t.Fatalf("after MTN's status read = %s", got.raw)
					}
				})
				if ok, seen := cb.only(c.environment); !ok {
					t.Errorf("X-Target-Environment = %s; want only %s", seen, c.environment)
				}
				// One token per product, kept for its documented lifetime
				// (token.json: expires_in 3600).
				tokens := map[string]int{}
				fake.mu.Lock()
				for _, call := range fake.calls {
					if strings.HasSuffix(call, "/token/") {
						tokens[call]++
					}
				}
				fake.mu.Unlock()
				if tokens["POST /collection/token/"] != 1 || tokens["POST /disbursement/token/"] != 1 {
					t.Errorf("token calls = %v; want one per product", tokens)
				}
			})
		}
	})
}
