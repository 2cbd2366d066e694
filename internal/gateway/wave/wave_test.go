package wave

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodeCheckout_Golden(t *testing.T) {
	col := gateway.Collection{Reference: "FAC-2024-01", Amount: 1000, Currency: "XOF", Phone: "+221771234567", Operator: "wave",
		Country: "SN", Description: "Order 12", Name: "Awa Diop", Email: "awa@example.com",
		ReturnURL: "https://example.com/pay/return", NotifyURL: "https://cauri.example/callbacks/g1"}
	mine, documented := gatewaytest.DocumentedFields(t, encodeCheckout(col), "checkout_request.json")
	for k := range mine {
		if _, ok := documented[k]; !ok {
			t.Errorf("field %q is not in the documented request", k)
		}
	}
	// Amounts are strings in major units: none for XOF, the decimals of a currency that has some.
	col.Currency, col.Amount = "GMD", 12345
	if r := encodeCheckout(col); r.Amount != "123.45" {
		t.Fatalf("amount = %q; want 123.45", r.Amount)
	}
}

func TestCollect_RefusalsAndErrors(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, APIKey: "k"}
	ctx := context.Background()
	col := gateway.Collection{Reference: "r-1", Amount: 1000, Currency: "XOF", ReturnURL: "https://example.com/return"}
	for _, tc := range []struct {
		name, body string
		code       int
		reason     string
	}{
		{"refused", `{"code":"request-validation-error","message":"amount is invalid"}`, http.StatusBadRequest, "400 request-validation-error: amount is invalid"},
		{"refused, nested", `{"error":{"code":"ip-not-allowed","message":"Your IP is not allowed"}}`, http.StatusUnprocessableEntity, "422 ip-not-allowed: Your IP is not allowed"},
		{"no launch url", `{"id":"cos-1"}`, http.StatusOK, "200 refused"},
	} {
		srv.Set("", tc.code, []byte(tc.body))
		if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Failed || st.Reason != tc.reason || st.RedirectURL != "" {
			t.Errorf("%s = %+v, %v; want failed %q", tc.name, st, err, tc.reason)
		}
	}
	for _, tc := range []struct {
		code int
		body string
	}{{http.StatusInternalServerError, `{"code":"internal-server-error"}`}, {http.StatusOK, `{"id": `}} {
		srv.Set("", tc.code, []byte(tc.body))
		_, cerr := c.Collect(ctx, col)
		_, serr := c.CollectionStatus(ctx, gateway.Ref{Reference: "r-1", ProviderRef: "cos-1"})
		for _, err := range []error{cerr, serr} {
			if e := gateway.ErrorOf(err); e == nil || !e.Transient || !e.Answered {
				t.Errorf("%d %s: %v; want a transient error, answered", tc.code, tc.body, err)
			}
		}
	}
	// A status read Wave refuses concludes nothing.
	srv.Set("", http.StatusBadRequest, []byte(`{"code":"request-validation-error","message":"bad id"}`))
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "r-1", ProviderRef: "cos-1"}); err == nil || gateway.IsTransient(err) {
		t.Fatalf("refused read = %+v, %v; want a lasting error", st, err)
	}
	// An unknown id, and nothing under our reference: not found.
	srv.Set("", http.StatusNotFound, []byte(`{"code":"not-found","message":"x"}`))
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "r-1", ProviderRef: "cos-1"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("404 = %+v, %v", st, err)
	}
	// The session was created, its id not recorded: never shown, a lasting error.
	srv.Set("", http.StatusOK, gatewaytest.Golden(t, "checkout_session_open.json"))
	col.Created = func(string) error { return context.DeadlineExceeded }
	if st, err := c.Collect(ctx, col); err == nil || gateway.IsTransient(err) || st.RedirectURL != "" {
		t.Fatalf("unrecorded = %+v, %v; want a lasting error and no page", st, err)
	}
}

// signed is a Wave-Signature computed here, independently of Sign.
func signed(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

// TestCallbackReference_SignAndNoSecret: Sign is Wave's signature as
// computed here independently; without a secret on the gateway, a webhook
// is only a signal, accepted as it comes. (The signed and forged webhooks
// are TestConformance's.)
func TestCallbackReference_SignAndNoSecret(t *testing.T) {
	body := gatewaytest.Golden(t, "webhook_checkout_completed.json")
	now := time.Unix(1750870563, 0)
	const secret = "wave_sn_WHS_xz4m6g8rjs9bshxy05xj6khcvjv7j3hcp4fbpvv6met0zdrjvezg"
	ts := strconv.FormatInt(now.Unix(), 10)
	if got, want := Sign(secret, now.Unix(), body), "t="+ts+",v1="+signed(secret, ts, body); got != want {
		t.Fatalf("Sign = %s; want %s", got, want)
	}
	open := &Client{}
	if ref, err := open.CallbackReference(http.Header{}, body); err != nil || ref != "FAC-2024-01" {
		t.Fatalf("unsigned, no secret = %q, %v", ref, err)
	}
	for _, b := range []string{`{"id":"AE_1","type":"checkout.session.completed","data":{"id":"cos-1","client_reference":null}}`,
		`{"id":"AE_1","type":"merchant.payment_received","data":{"id":"T_1"}}`, `not json`} {
		if ref, err := open.CallbackReference(http.Header{}, []byte(b)); err == nil {
			t.Errorf("%s = %q; want no Cauri reference", b, ref)
		}
	}
}

// newSim starts the simulator on loopback, its webhooks to hook, and a
// client facing it.
func newSim(t *testing.T) (sim *Simulator, srv *httptest.Server, c *Client, hook *gatewaytest.Receiver) {
	hook = gatewaytest.NewReceiver(t)
	sim = &Simulator{APIKey: "wave_sn_prod_sim", WebhookSecret: "wave_sn_WHS_sim", CallbackURL: hook.URL}
	srv = httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c = &Client{BaseURL: srv.URL, APIKey: sim.APIKey, WebhookSecret: sim.WebhookSecret, HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	return sim, srv, c, hook
}

var formRE = regexp.MustCompile(`<form method="(\w+)" action="([^"]+)"`)

// onPage plays the customer on Wave's launch page: it reads the page,
// submits its form with the button do (and the Wave number mobile), and
// follows where the page sends it. It answers the last response and body.
func onPage(t *testing.T, launch, do, mobile string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(launch)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := formRE.FindStringSubmatch(string(page))
	if res.StatusCode != http.StatusOK || m == nil || !strings.EqualFold(m[1], "post") ||
		!strings.Contains(string(page), `name="do" value="`+do+`"`) || !strings.Contains(string(page), `name="mobile"`) {
		t.Fatalf("launch page %d: %s", res.StatusCode, page)
	}
	base, _ := url.Parse(launch)
	action, err := base.Parse(m[2])
	if err != nil {
		t.Fatal(err)
	}
	if res, err = http.PostForm(action.String(), url.Values{"do": {do}, "mobile": {mobile}}); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

func TestCollect_ThroughLaunchPage(t *testing.T) {
	sim, srv, c, hook := newSim(t)
	shop := gatewaytest.NewReceiver(t)
	ctx := context.Background()
	ids := map[string]string{}
	collection := func(ref string) gateway.Collection {
		return gateway.Collection{Reference: ref, Amount: 1500, Currency: "XOF", Phone: "+221771234567", Country: "SN",
			ReturnURL: shop.URL + "/return/" + ref, Created: func(id string) error { ids[ref] = id; return nil }}
	}

	// Paid: back on the merchant's page, collected, and a signed webhook.
	col := collection("11111111-2222-4333-8444-555555555555")
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || st.ProviderRef == "" || ids[col.Reference] != st.ProviderRef ||
		st.RedirectURL != srv.URL+"/c/"+st.ProviderRef {
		t.Fatalf("collect = %+v, %v (recorded %q)", st, err, ids[col.Reference])
	}
	ref := gateway.Ref{Reference: col.Reference, ProviderRef: ids[col.Reference]}
	if st, err := c.CollectionStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("before paying = %+v, %v", st, err)
	}
	if res, _ := onPage(t, st.RedirectURL, "pay", ""); res.StatusCode != http.StatusOK || res.Request.URL.Path != "/return/"+col.Reference {
		t.Fatalf("after paying the customer is at %s (%d)", res.Request.URL, res.StatusCode)
	}
	paid, err := c.CollectionStatus(ctx, ref)
	if err != nil || paid.Outcome != gateway.Succeeded || !strings.HasPrefix(paid.ProviderRef, "TSIM") {
		t.Fatalf("after paying = %+v, %v", paid, err)
	}
	// Read again by our reference alone, and by the transaction id the service then holds.
	for _, r := range []gateway.Ref{{Reference: col.Reference}, {Reference: col.Reference, ProviderRef: paid.ProviderRef}} {
		if st, err := c.CollectionStatus(ctx, r); err != nil || st != paid {
			t.Fatalf("read by %+v = %+v, %v; want %+v", r, st, err, paid)
		}
	}
	h, body, n := hook.Last()
	var ev struct{ Type string }
	json.Unmarshal(body, &ev)
	if got, err := c.CallbackReference(h, body); n != 1 || err != nil || got != col.Reference || ev.Type != "checkout.session.completed" {
		t.Fatalf("webhook %d %s = %q, %v", n, ev.Type, got, err)
	}
	if _, err := (&Client{WebhookSecret: "another"}).CallbackReference(h, body); err == nil {
		t.Fatal("a webhook signed with the simulator's secret passed another")
	}
	// Paying again on a paid session changes nothing and sends the customer back.
	if res, _ := onPage(t, st.RedirectURL, "pay", ""); res.Request.URL.Path != "/return/"+col.Reference {
		t.Fatalf("paid twice: at %s", res.Request.URL)
	}
	if _, _, n := hook.Last(); n != 1 {
		t.Fatalf("%d webhooks; want 1", n)
	}

	// Cancelled on the page: failed, payment_failed webhook.
	cancelled := collection("21111111-2222-4333-8444-555555555555")
	st, _ = c.Collect(ctx, cancelled)
	if res, _ := onPage(t, st.RedirectURL, "decline", ""); res.Request.URL.Path != "/return/"+cancelled.Reference {
		t.Fatalf("after cancelling the customer is at %s", res.Request.URL)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: cancelled.Reference, ProviderRef: ids[cancelled.Reference]}); err != nil ||
		st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "cancelled") {
		t.Fatalf("cancelled = %+v, %v", st, err)
	}
	h, body, _ = hook.Last()
	json.Unmarshal(body, &ev)
	if got, err := c.CallbackReference(h, body); err != nil || got != cancelled.Reference || ev.Type != "checkout.session.payment_failed" {
		t.Fatalf("webhook %s = %q, %v", ev.Type, got, err)
	}

	// The payer's balance is too low: failed in Wave's words (not the merchant's balance).
	poor := collection("31111111-2222-4333-8444-555555555555")
	st, _ = c.Collect(ctx, poor)
	onPage(t, st.RedirectURL, "pay", "+221770000049")
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Failed ||
		!strings.Contains(st.Reason, "insufficient-funds") || st.LowBalance {
		t.Fatalf("payer's low balance = %+v", st)
	}

	// A payment that never ends: still pending, no webhook.
	lost := collection("41111111-2222-4333-8444-555555555555")
	st, _ = c.Collect(ctx, lost)
	_, before, _ := hook.Last()
	if res, page := onPage(t, st.RedirectURL, "pay", "+221770000129"); res.StatusCode != http.StatusAccepted || !strings.Contains(page, "processing") {
		t.Fatalf("stuck payment: %d %s", res.StatusCode, page)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: lost.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("stuck = %+v", st)
	}
	if _, after, _ := hook.Last(); string(after) != string(before) {
		t.Fatal("a stuck payment sent a webhook")
	}
	// It expires: failed.
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+lost.Reference+"?status=expired")
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: lost.Reference, ProviderRef: ids[lost.Reference]}); st.Outcome != gateway.Failed || st.Reason != "expired" {
		t.Fatalf("expired = %+v", st)
	}
	// A webhook claiming success changes nothing: the status read decides.
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+lost.Reference+"?status=succeeded")
	h, body, _ = hook.Last()
	if got, err := c.CallbackReference(h, body); err != nil || got != lost.Reference {
		t.Fatalf("resent webhook = %q, %v", got, err)
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: lost.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("after a stale webhook = %+v", st)
	}

	// Refusals: Wave's checks, before any session exists.
	zero := collection("51111111-2222-4333-8444-555555555555")
	zero.Amount = 0
	noReturn := collection("61111111-2222-4333-8444-555555555555")
	noReturn.ReturnURL = ""
	cedi := collection("71111111-2222-4333-8444-555555555555")
	cedi.Currency = "GHS"
	for _, tc := range []struct {
		col   gateway.Collection
		field string
	}{{zero, "amount"}, {noReturn, "success_url"}, {cedi, "currency"}} {
		st, err := c.Collect(ctx, tc.col)
		if err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "400 request-validation-error") ||
			!strings.Contains(st.Reason, tc.field) || ids[tc.col.Reference] != "" {
			t.Errorf("%s refused = %+v, %v", tc.field, st, err)
		}
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: zero.Reference}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("never created = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: zero.Reference, ProviderRef: "cos-unknown"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown id = %+v, %v", st, err)
	}

	// Wrong key, and faults.
	wrong := &Client{BaseURL: srv.URL, APIKey: "wave_sn_prod_guess"}
	if _, err := wrong.Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong key: %v; want a lasting error", err)
	}
	calls := sim.Calls()
	for _, mode := range []string{"500", "malformed"} {
		gatewaytest.Control(t, srv.URL, "/_sim/fault?mode="+mode)
		if _, err := c.CollectionStatus(ctx, ref); !gateway.IsTransient(err) || !gateway.ErrorOf(err).Answered {
			t.Fatalf("fault %s: %v", mode, err)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=slow&seconds=1")
	if _, err := c.Collect(ctx, collection("81111111-2222-4333-8444-555555555555")); !gateway.IsTransient(err) || gateway.ErrorOf(err).Answered {
		t.Fatalf("timeout: %v; want transient, unanswered", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=none")
	if sim.Calls() != calls+3 {
		t.Fatalf("%d calls counted; want %d", sim.Calls(), calls+3)
	}
}

// TestSimulator_Page checks the launch page sends the customer to
// success_url or error_url, as Wave does, and the API's own refusals.
func TestSimulator_Page(t *testing.T) {
	_, srv, _, hook := newSim(t)
	shop := gatewaytest.NewReceiver(t)
	create := func(ref string) string {
		b, _ := json.Marshal(checkoutRequest{Amount: "2500", Currency: "XOF", SuccessURL: shop.URL + "/ok", ErrorURL: shop.URL + "/ko", ClientReference: ref})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/checkout/sessions", strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer wave_sn_prod_sim")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var s session
		json.NewDecoder(res.Body).Decode(&s)
		if res.StatusCode != http.StatusOK || s.CheckoutStatus != "open" || s.PaymentStatus != "processing" || deref(s.ClientReference) != ref {
			t.Fatalf("create = %d %+v", res.StatusCode, s)
		}
		return s.WaveLaunchURL
	}
	if res, _ := onPage(t, create("p-1"), "pay", "+221771234567"); res.Request.URL.Path != "/ok" {
		t.Fatalf("paid: at %s; want success_url", res.Request.URL)
	}
	if res, _ := onPage(t, create("p-2"), "decline", ""); res.Request.URL.Path != "/ko" {
		t.Fatalf("cancelled: at %s; want error_url", res.Request.URL)
	}
	if res, _ := onPage(t, create("p-3"), "pay", "+221770000029"); res.Request.URL.Path != "/ko" {
		t.Fatalf("failed: at %s; want error_url", res.Request.URL)
	}
	if _, _, n := hook.Last(); n != 3 {
		t.Fatalf("%d webhooks; want 3", n)
	}
	for _, tc := range []struct {
		auth, code string
	}{{"", "missing-auth-header"}, {"Bearer nope", "no-matching-api-key"}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/checkout/sessions/search?client_reference=p-1", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e waveError
		json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || e.Code != tc.code {
			t.Errorf("auth %q = %d %+v; want 401 %s", tc.auth, res.StatusCode, e, tc.code)
		}
	}
	if res, err := http.Get(srv.URL + "/c/cos-unknown"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown page: %v, %v", res, err)
	}
}

func TestCollect_SimulatorSettlesAfterDelay(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	sim := &Simulator{APIKey: "k", CallbackURL: hook.URL, SettleAfter: 50 * time.Millisecond}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, APIKey: "k"}
	ctx := context.Background()
	col := gateway.Collection{Reference: "late", Amount: 1000, Currency: "XOF", ReturnURL: "https://example.com/r"}
	if st, err := c.Collect(ctx, col); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	waitSucceeded(t, func() (gateway.Status, error) { return c.CollectionStatus(ctx, gateway.Ref{Reference: "late"}) })
	// Unsigned (no secret on the simulator), accepted by a gateway without one.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if h, body, n := hook.Last(); n == 1 {
			if ref, err := c.CallbackReference(h, body); err != nil || ref != "late" || h.Get("Wave-Signature") != "" {
				t.Fatalf("webhook = %q, %v (signature %q)", ref, err, h.Get("Wave-Signature"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook")
		}
	}
}

// waitSucceeded reads a status until it says Succeeded, for 3 s at most.
func waitSucceeded(t *testing.T, read func() (gateway.Status, error)) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := read()
		if err == nil && st.Outcome == gateway.Succeeded {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the delay: %+v, %v", st, err)
		}
	}
}
