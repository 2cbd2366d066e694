package mpesa

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// b2cFixture is a testdata file's JSON (testdata/SOURCES.md, "B2C").
func b2cFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSecurityCredential: the initiator's password RSA-encrypted (PKCS #1
// v1.5) with the certificate, base64 (mpesa-node-library
// src/helpers/security.js): decrypted with the key, it is the password;
// with the library's sandbox certificate, a 2048-bit block.
func TestSecurityCredential(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{InitiatorPassword: "Safaricom999!*!", Certificate: der}
	cred, err := c.securityCredential()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(cred)
	if plain, err := rsa.DecryptPKCS1v15(nil, key, raw); err != nil || string(plain) != "Safaricom999!*!" {
		t.Fatalf("decrypted %q, %v", plain, err)
	}
	if again, _ := c.securityCredential(); again != cred {
		t.Fatal("the credential is made once per client")
	}

	sandbox := &Client{InitiatorPassword: "Safaricom999!*!", Environment: Sandbox}
	cred, err = sandbox.securityCredential()
	if raw, _ := base64.StdEncoding.DecodeString(cred); err != nil || len(raw) != 256 {
		t.Fatalf("sandbox credential %d bytes, %v", len(raw), err)
	}
	// No production certificate: a production gateway's must be ready-made.
	prod := &Client{InitiatorPassword: "x", Environment: Production}
	if _, err := prod.securityCredential(); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
		t.Fatalf("production without a credential: %v", err)
	}
	prod.SecurityCredential = " ready== "
	if cred, err := prod.securityCredential(); err != nil || cred != "ready==" {
		t.Fatalf("ready credential %q, %v", cred, err)
	}
}

// TestEncodeB2C_Golden holds the B2C request to the portal's example
// (testdata/b2c_request.json): its fields, numbers as JSON numbers.
func TestEncodeB2C_Golden(t *testing.T) {
	c := &Client{InitiatorName: "testapi", B2CShortCode: "600996"}
	req := c.encodeB2C("feb5e3f2-fbbc-4745-844c-ee37b546f627", 10, "254728762287", "here are my remarks",
		"EsJocK7+NjqZPC3I3EO+TbvS+xVb9TymWwaKABoaZr/Z/n0UysSs..", "https://mydomain.com/b2c/result", "https://mydomain.com/b2c/queue")
	req.Remarks, req.Occasion = "here are my remarks", "Christmas" // ours are cut to 13 and 12 letters
	mine, documented := gatewaytest.DocumentedFields(t, req, "b2c_request.json")
	if len(mine) != len(documented) {
		t.Fatalf("request = %v; want exactly the documented fields", mine)
	}
	if r := c.encodeB2C("0f8fad5b-d9cb-469f-a165-70867728950e", 1, "254708374149", "Salaire de mars — équipe", "x", "u", "v"); r.Remarks != "Salaire de ma" || r.Occasion != "0f8fad5bd9cb" || r.CommandID != BusinessPayment {
		t.Fatalf("remarks %q, occasion %q, command %q", r.Remarks, r.Occasion, r.CommandID)
	}
}

// receiver is Cauri's callback route for a test: each callback's reference
// as CallbackReference reads it (its query string passed as the service
// passes it), or its error.
type receiver struct {
	srv  *httptest.Server
	refs chan string
	paid chan string // PaidReference of each callback
	// lastPaid is the PaidReference of the callback next last returned.
	lastPaid string
}

func newReceiver(t *testing.T, c *Client) *receiver {
	r := &receiver{refs: make(chan string, 16), paid: make(chan string, 16)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		h := addressHeader(req.URL.String())
		ref, err := c.CallbackReference(h, body)
		if err != nil {
			ref = "error: " + err.Error()
		}
		_, receipt := c.PaidReference(h, body)
		r.paid <- receipt
		r.refs <- ref
		w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// resultHeader is what the callback route gives the connector for a
// callback to the result address with parts q.
func resultHeader(q url.Values) http.Header {
	parts := make([]string, len(resultKeys))
	for i, k := range resultKeys {
		parts[i] = q.Get(k)
	}
	h := http.Header{}
	h.Set(gateway.CallbackPathHeader, strings.Join(parts, "."))
	return h
}

// addressHeader is what the callback route gives the connector for a
// callback to rawURL: the segment after /callbacks/{gatewayId}, if any.
func addressHeader(rawURL string) http.Header {
	h := http.Header{}
	if u, err := url.Parse(rawURL); err == nil {
		if parts := strings.Split(strings.Trim(u.Path, "/"), "/"); len(parts) == 3 && parts[0] == "callbacks" {
			h.Set(gateway.CallbackPathHeader, parts[2])
		}
	}
	return h
}

// addressParts are the parts of result address rawURL.
func addressParts(rawURL string) url.Values {
	q, _, _ := resultParams(addressHeader(rawURL))
	return q
}

func (r *receiver) next(t *testing.T) string {
	t.Helper()
	select {
	case ref := <-r.refs:
		r.lastPaid = <-r.paid
		return ref
	case <-time.After(5 * time.Second):
		t.Fatal("no callback")
		return ""
	}
}

func (r *receiver) none(t *testing.T) {
	t.Helper()
	select {
	case ref := <-r.refs:
		t.Fatalf("unexpected callback %q", ref)
	case <-time.After(200 * time.Millisecond):
	}
}

func newB2C(t *testing.T) (*Simulator, *Client, *receiver) {
	s := &Simulator{ConsumerKey: "key", ConsumerSecret: "secret", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
		InitiatorName: "testapi", B2CShortCode: "600996", SettleAfter: time.Millisecond}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, ConsumerKey: "key", ConsumerSecret: "secret", ShortCode: sandboxShortCode, PassKey: sandboxPassKey,
		InitiatorName: "testapi", InitiatorPassword: "Safaricom999!*!", B2CShortCode: "600996", Environment: Sandbox, HTTP: srv.Client()}
	return s, c, newReceiver(t, c)
}

func payout(ref, phone string, notify string) gateway.Payout {
	return gateway.Payout{Reference: ref, Amount: 150000, Currency: "KES", Phone: phone, Operator: "MPESA", Country: "KE",
		Description: "Salaire mars", NotifyURL: notify}
}

// TestPayout_AgainstSimulator: accepted (pending), its result reaches the
// callback route with its token, which names the transfer and keeps the
// outcome for PayoutStatus; failures with Daraja's code; a refusal at once.
func TestPayout_AgainstSimulator(t *testing.T) {
	s, c, rcv := newB2C(t)
	ctx := context.Background()
	notify := rcv.srv.URL + "/callbacks/gw_1"

	st, err := c.Payout(ctx, payout(ref1, "+254708374149", notify))
	if err != nil || st.Outcome != gateway.Pending || !strings.HasPrefix(st.ProviderRef, "AG_") {
		t.Fatalf("Payout = %+v, %v", st, err)
	}
	if ref := rcv.next(t); ref != ref1 {
		t.Fatalf("callback reference %q", ref)
	}
	st, err = c.PayoutStatus(ctx, gateway.Ref{Reference: ref1, NotifyURL: notify})
	if err != nil || st.Outcome != gateway.Succeeded || !strings.HasPrefix(st.ProviderRef, "SIB") {
		t.Fatalf("PayoutStatus = %+v, %v", st, err)
	}
	if s.B2CPaid(ref1) != 1 {
		t.Fatalf("paid %d times", s.B2CPaid(ref1))
	}

	// Failures: their ResultCode and ResultDesc; a low balance is the merchant's.
	for _, tc := range []struct {
		phone, code string
		low         bool
	}{{"+254708370029", "2040", false}, {"+254708370049", "1", true}} {
		ref := "ref-" + tc.code
		if st, err := c.Payout(ctx, payout(ref, tc.phone, notify)); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("Payout(%s) = %+v, %v", tc.phone, st, err)
		}
		if got := rcv.next(t); got != ref {
			t.Fatalf("callback reference %q", got)
		}
		st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: ref, NotifyURL: notify})
		if err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, tc.code+": ") || st.LowBalance != tc.low {
			t.Fatalf("PayoutStatus(%s) = %+v, %v", tc.phone, st, err)
		}
	}

	// Refused at once: a failure in Daraja's words, nothing to wait for.
	st, err = c.Payout(ctx, payout("ref-refused", "+254708370039", notify))
	if err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Invalid PartyB") {
		t.Fatalf("refused Payout = %+v, %v", st, err)
	}
}

// TestPayout_StatusQueryRecoversALostResult: the B2C result lost, the
// status query (sent by PayoutStatus, which answers pending) brings the
// outcome on its own result address; a payout never settled gets no
// result and stays pending, however late it is asked about.
func TestPayout_StatusQueryRecoversALostResult(t *testing.T) {
	s, c, rcv := newB2C(t)
	s.LoseResults.Store(true)
	ctx := context.Background()
	notify := rcv.srv.URL + "/callbacks/gw_1"
	if _, err := c.Payout(ctx, payout(ref1, "+254708374149", notify)); err != nil {
		t.Fatal(err)
	}
	rcv.none(t)
	ref := gateway.Ref{Reference: ref1, NotifyURL: notify}
	if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("PayoutStatus before the query's result = %+v, %v", st, err)
	}
	if got := rcv.next(t); got != ref1 {
		t.Fatalf("status result reference %q", got)
	}
	if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Succeeded || !strings.HasPrefix(st.ProviderRef, "SIB") {
		t.Fatalf("PayoutStatus after the query's result = %+v, %v", st, err)
	}
	if s.B2CRequests() != 1 || s.B2CPaid(ref1) != 1 {
		t.Fatalf("%d requests, %d paid", s.B2CRequests(), s.B2CPaid(ref1))
	}

	// Received, never settled: no result, pending, even asked late.
	s.LoseResults.Store(false)
	if _, err := c.Payout(ctx, payout("ref-stuck", "+254708370129", notify)); err != nil {
		t.Fatal(err)
	}
	if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: "ref-stuck", NotifyURL: notify}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("PayoutStatus(ref-stuck) = %+v, %v", st, err)
	}
	rcv.none(t)
	if c.IdempotentPayout() {
		t.Fatal("Daraja takes no idempotency key")
	}
}

// TestPayout_NeverReceived: a B2C request whose connection dropped before
// Daraja read it (no answer: an unknown outcome, never a failure) is not
// known to the status query, which answers 2032 on its result address.
// That concludes nothing, however late: no source shows what 2032 means
// for a query by OriginatorConversationID, and a transfer ended failed is
// sent again (the callback names no transfer, so nothing asks again at
// once; the transfer stays processing). A request Daraja received whose
// answer was lost is known.
func TestPayout_NeverReceived(t *testing.T) {
	s, c, rcv := newB2C(t)
	ctx := context.Background()
	notify := rcv.srv.URL + "/callbacks/gw_1"
	s.LoseB2CRequests.Store(true)
	st, err := c.Payout(ctx, payout(ref1, "+254708374149", notify))
	if e := gateway.ErrorOf(err); e == nil || !e.Transient || e.NotSent || e.Answered {
		t.Fatalf("Payout with its connection dropped = %+v, %v; want transient, no answer", st, err)
	}
	if s.B2CRequests() != 0 {
		t.Fatalf("%d requests recorded", s.B2CRequests())
	}
	for range 2 {
		ref := gateway.Ref{Reference: ref1, NotifyURL: notify, Amount: 150000, Currency: "KES"}
		if st, err := c.PayoutStatus(ctx, ref); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("PayoutStatus = %+v, %v", st, err)
		}
		if got := rcv.next(t); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "2032") {
			t.Fatalf("a 2032 result read as %q; want an error naming no transfer", got)
		}
	}

	// Received, its answer lost, settled or not: known, never NotFound.
	s.LoseB2CRequests.Store(false)
	s.LoseB2CAnswers.Store(true)
	for _, phone := range []string{"+254708370129", "+254708374149"} {
		ref := "ref-" + phone[len(phone)-4:]
		if _, err := c.Payout(ctx, payout(ref, phone, notify)); !gateway.IsTransient(err) {
			t.Fatalf("Payout with its answer lost: %v", err)
		}
		if phone != "+254708370129" {
			rcv.next(t) // its B2C result
			c.results.take(ref)
		}
		st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: ref, NotifyURL: notify, Amount: 150000, Currency: "KES"})
		if err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("PayoutStatus(%s) = %+v, %v", ref, st, err)
		}
		if phone == "+254708370129" {
			rcv.none(t) // pending at Daraja: no status result
			continue
		}
		if got := rcv.next(t); got != ref {
			t.Fatalf("status result names %q", got)
		}
		if st, err := c.PayoutStatus(ctx, gateway.Ref{Reference: ref, NotifyURL: notify}); err != nil || st.Outcome != gateway.Succeeded {
			t.Fatalf("PayoutStatus(%s) after its status result = %+v, %v", ref, st, err)
		}
	}
	if s.B2CRequests() != 2 || s.B2CPaid(ref1) != 0 {
		t.Fatalf("%d requests, the never received one paid %d times", s.B2CRequests(), s.B2CPaid(ref1))
	}
}

// TestB2CCallback_Forged: a result without the token of its reference, or
// with another's, or about another transfer, ends nothing.
func TestB2CCallback_Forged(t *testing.T) {
	c := &Client{ConsumerSecret: "secret"}
	body := b2cFixture(t, "b2c_result_success.json")
	var b resultBody
	json.Unmarshal(body, &b)
	orig := b.Result.OriginatorConversationID
	header := resultHeader
	for name, q := range map[string]url.Values{
		"no token":      {kindKey: {"result"}, refKey: {orig}},
		"wrong token":   {kindKey: {"result"}, refKey: {orig}, tokenKey: {"AAAA"}},
		"another's":     {kindKey: {"result"}, refKey: {orig}, tokenKey: {c.tokenFor("result", "other", "")}},
		"other secret":  {kindKey: {"result"}, refKey: {orig}, tokenKey: {(&Client{ConsumerSecret: "guess"}).tokenFor("result", orig, "")}},
		"other payment": {kindKey: {"result"}, refKey: {"other"}, tokenKey: {c.tokenFor("result", "other", "")}},
	} {
		if ref, err := c.CallbackReference(header(q), body); err == nil {
			t.Errorf("%s: reference %q accepted", name, ref)
		}
	}
	if _, ok := c.results.take(orig); ok {
		t.Fatal("a forged result was kept")
	}
	// The documented result with its token: the transfer, paid, its
	// receipt and the recipient's registered name.
	ref, err := c.CallbackReference(header(url.Values{kindKey: {"result"}, refKey: {orig}, tokenKey: {c.tokenFor("result", orig, "")}}), body)
	if err != nil || ref != orig {
		t.Fatalf("reference %q, %v", ref, err)
	}
	r, ok := c.results.take(orig)
	if !ok || r.Status.Outcome != gateway.Succeeded || r.Status.ProviderRef != b.Result.TransactionID || r.Status.RecipientName != "John Doe" {
		t.Fatalf("kept %+v, %v", r, ok)
	}
	// The amount the address carries is held to the result's: another
	// amount, or the address's amount changed, is refused.
	withAmount := func(amt, signed string) http.Header {
		return header(url.Values{kindKey: {"result"}, refKey: {orig}, amountKey: {amt}, tokenKey: {c.tokenFor("result", orig, signed)}})
	}
	if ref, err := c.CallbackReference(withAmount("10", "10"), body); err != nil || ref != orig {
		t.Fatalf("the right amount: %q, %v", ref, err)
	}
	c.results.take(orig)
	for _, h := range []http.Header{withAmount("11", "11"), withAmount("10", "11")} {
		if ref, err := c.CallbackReference(h, body); err == nil {
			t.Fatalf("another amount read as %q", ref)
		}
	}
	if _, kept := c.results.take(orig); kept {
		t.Fatal("a result of another amount was kept")
	}
	// Daraja's "not known" (2032) concludes nothing: ignored, no transfer
	// named, nothing kept.
	notKnown := b2cFixture(t, "transactionstatus_result_not_known.json")
	if ref, err := c.CallbackReference(header(url.Values{kindKey: {"status"}, refKey: {orig}, tokenKey: {c.tokenFor("status", orig, "")}}), notKnown); err == nil {
		t.Fatalf("a 2032 status result read as %q", ref)
	}
	if _, kept := c.results.take(orig); kept {
		t.Fatal("a 2032 status result was kept")
	}
	// A timeout is only a signal.
	ref, err = c.CallbackReference(header(url.Values{kindKey: {"timeout"}, refKey: {orig}, tokenKey: {c.tokenFor("timeout", orig, "")}}), []byte(`{"Result":{}}`))
	if _, kept := c.results.take(orig); err != nil || ref != orig || kept {
		t.Fatalf("timeout: %q, %v, kept %v", ref, err, kept)
	}
	// A status query's timeout asks nothing again (no loop of queries).
	if ref, err := c.CallbackReference(header(url.Values{kindKey: {"status_timeout"}, refKey: {orig}, tokenKey: {c.tokenFor("status_timeout", orig, "")}}), []byte(`{}`)); err == nil {
		t.Fatalf("status timeout read as %q", ref)
	}
	// An STK callback is still read as before.
	if _, err := c.CallbackReference(http.Header{}, b2cFixture(t, "callback_success.json")); err != nil {
		t.Fatal(err)
	}
}

// TestB2CResults_Fixtures reads the documented results: a failed B2C, and
// a status query's completed transaction.
func TestB2CResults_Fixtures(t *testing.T) {
	var b resultBody
	json.Unmarshal(b2cFixture(t, "b2c_result_failed.json"), &b)
	if r, final := b2cOutcome(b); !final || r.Status.Outcome != gateway.Failed || !strings.HasPrefix(r.Status.Reason, "2001: ") ||
		!r.Status.CredentialsRefused || r.Status.LowBalance || r.Status.RecipientName != "" {
		t.Fatalf("failed result: %+v, %v", r, final)
	}
	if b.param("BOCompletedTime") != "20191219114550" {
		t.Fatalf("one ResultParameter alone: %q", b.param("BOCompletedTime"))
	}
	b = resultBody{}
	json.Unmarshal(b2cFixture(t, "transactionstatus_result_completed.json"), &b)
	if r, final := statusOutcome(b); !final || r.Status.Outcome != gateway.Succeeded || r.Status.ProviderRef != "MBN31H462N" || r.Status.RecipientName != "John Doe" {
		t.Fatalf("status result: %+v, %v", r, final)
	}
	// Daraja's sandbox about a transaction M-PESA does not have (2032, no
	// ResultParameters): nothing concluded.
	b = resultBody{}
	json.Unmarshal(b2cFixture(t, "transactionstatus_result_not_known.json"), &b)
	if r, final := statusOutcome(b); final {
		t.Fatalf("not known: %+v concluded", r)
	}
	// A status result is read for the transfer its address names only:
	// the transaction's OriginatorConversationID must be that reference.
	c := &Client{ConsumerSecret: "secret"}
	h := resultHeader(url.Values{kindKey: {"status"}, refKey: {"other"}, tokenKey: {c.tokenFor("status", "other", "")}})
	if ref, err := c.CallbackReference(h, b2cFixture(t, "transactionstatus_result_completed.json")); err == nil {
		t.Fatalf("a status result about another transaction names %q", ref)
	}
	h = resultHeader(url.Values{kindKey: {"status"}, refKey: {"3211-416020-3"}, tokenKey: {c.tokenFor("status", "3211-416020-3", "")}})
	if ref, err := c.CallbackReference(h, b2cFixture(t, "transactionstatus_result_completed.json")); err != nil || ref != "3211-416020-3" {
		t.Fatalf("status result: %q, %v", ref, err)
	}
	if r, ok := c.results.take("3211-416020-3"); !ok || r.Status.Outcome != gateway.Succeeded {
		t.Fatalf("kept %+v, %v", r, ok)
	}
}

// TestPayout_RefusedBeforeSending: what M-Pesa cannot pay is never sent.
func TestPayout_RefusedBeforeSending(t *testing.T) {
	s, c, rcv := newB2C(t)
	notify := rcv.srv.URL + "/cb"
	bad := []gateway.Payout{
		{Reference: "a", Amount: 150050, Currency: "KES", Phone: "+254708374149", NotifyURL: notify}, // cents
		{Reference: "b", Amount: 150000, Currency: "UGX", Phone: "+254708374149", NotifyURL: notify},
		{Reference: "c", Amount: 150000, Currency: "KES", Phone: "+256772123456", NotifyURL: notify},
		{Reference: "d", Amount: 150000, Currency: "KES", Phone: "+254708374149", NotifyURL: "/relative"},
	}
	for _, p := range bad {
		if st, err := c.Payout(context.Background(), p); err != nil || st.Outcome != gateway.Failed || !strings.HasPrefix(st.Reason, "not sent to M-Pesa: ") {
			t.Errorf("Payout(%+v) = %+v, %v", p, st, err)
		}
	}
	// Without B2C credentials: not sent.
	c.InitiatorName = ""
	if _, err := c.Payout(context.Background(), payout("e", "+254708374149", notify)); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent {
		t.Errorf("without an initiator: %v", err)
	}
	if s.Calls() != 0 {
		t.Fatalf("%d calls", s.Calls())
	}
}

// TestPayout_UnknownOutcomes: a 5xx or no answer concludes nothing; a 4xx
// is Daraja's refusal.
func TestPayout_UnknownOutcomes(t *testing.T) {
	for _, tc := range []struct {
		code    int
		body    string
		failed  bool
		answerd bool
	}{
		{500, `{"errorCode":"500.003.02","errorMessage":"System is busy"}`, false, true},
		{200, `not json`, false, true},
		{400, `{"requestId":"1","errorCode":"400.002.02","errorMessage":"Bad Request - Invalid Amount"}`, true, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/oauth") {
				w.Write([]byte(`{"access_token":"t","expires_in":"3599"}`))
				return
			}
			w.WriteHeader(tc.code)
			w.Write([]byte(tc.body))
		}))
		c := &Client{BaseURL: srv.URL, ConsumerKey: "k", ConsumerSecret: "s", ShortCode: "600996", InitiatorName: "i",
			SecurityCredential: "cred", HTTP: srv.Client()}
		st, err := c.Payout(context.Background(), payout(ref1, "+254708374149", "https://cauri.example/callbacks/gw_1"))
		srv.Close()
		switch {
		case tc.failed && (err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "Invalid Amount")):
			t.Errorf("%d: %+v, %v; want failed", tc.code, st, err)
		case !tc.failed && (!gateway.IsTransient(err) || !gateway.ErrorOf(err).Answered):
			t.Errorf("%d: %+v, %v; want transient, answered", tc.code, st, err)
		}
	}
}
