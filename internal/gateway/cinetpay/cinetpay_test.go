package cinetpay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestEncodePayment_Golden(t *testing.T) {
	c := &Client{APIKey: "12912847765bc0db748fdd44.40081707", SiteID: "445160"}
	col := gateway.Collection{Reference: "YOUR_TRANSACTION_ID", Amount: 100, Currency: "XOF", Phone: "+225004315545",
		Description: "TEST INTEGRATION", Name: "KOUADIO", Email: "test@cinetpay.com",
		NotifyURL: "https://webhook.site/d1dbbb89-52c7-49af-a689-b3c412df820d", ReturnURL: "https://webhook.site/d1dbbb89-52c7-49af-a689-b3c412df820d"}
	mine, documented := gatewaytest.DocumentedFields(t, encodePayment(c, col, "100"), "payment_request.json")
	for k := range mine {
		if _, ok := documented[k]; !ok && k != "metadata" {
			t.Errorf("field %q is not in the documented request", k)
		}
	}
	col.Card, col.Description, col.Name = true, "Order #12/A_b & co", "Jean-Marc Dje Bi"
	r := encodePayment(c, col, "100")
	if r.Channels != "CREDIT_CARD" || r.LockPhoneNumber || strings.ContainsAny(r.Description, "#/$_&") {
		t.Fatalf("card payment = %+v; want CREDIT_CARD, no locked phone, no #/$_& in the description", r)
	}
	if r.CustomerName != "Bi" || r.CustomerSurname != "Jean-Marc Dje" || r.CustomerCountry != "CI" || r.CustomerPhone != col.Phone {
		t.Fatalf("card holder = %q %q %q %q; want the family name, the first names, CI from the number, the number", r.CustomerName,
			r.CustomerSurname, r.CustomerCountry, r.CustomerPhone)
	}
	if got := cardFields(r); strings.Join(got, ",") != "customer_address,customer_city,customer_state,customer_zip_code" {
		t.Fatalf("missing card fields = %v; want the postal address only", got)
	}
	// With the card holder's address the page asked for, the request is
	// the documented card request, field for field.
	card := gateway.Collection{Reference: "81111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "XOF", Card: true,
		Phone: "+2250707123456", Description: "Commande 1042", Name: "Awa Kone", Email: "awa@example.com",
		NotifyURL: "https://shop.example/notify", ReturnURL: "https://shop.example/return",
		Billing: gateway.Billing{Address: "Rue des Jardins 12", City: "Abidjan", State: "CI", ZipCode: "00225"}}
	r = encodePayment(&Client{APIKey: "api-1", SiteID: "445160"}, card, "5000")
	if got := cardFields(r); len(got) != 0 {
		t.Fatalf("missing card fields with the billing address = %v; want none", got)
	}
	mine, documented = gatewaytest.DocumentedFields(t, r, "payment_card_request.json")
	for k := range mine {
		if _, ok := documented[k]; !ok && k != "metadata" { // metadata: our reference, documented as optional
			t.Errorf("card field %q is not in the documented request", k)
		}
	}
}

func TestClient_AgainstSimulator(t *testing.T) {
	hook := gatewaytest.NewReceiver(t)
	sim := &Simulator{APIKey: "api-1", SiteID: "445160", SecretKey: "secret-1"}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, APIKey: "api-1", SiteID: "445160", SecretKey: "secret-1", HTTP: &http.Client{Timeout: 300 * time.Millisecond}}
	ctx := context.Background()
	col := gateway.Collection{Reference: "11111111-2222-4333-8444-555555555555", Amount: 1500, Currency: "XOF", Phone: "+2250707123456",
		Operator: "OM", Country: "CI", NotifyURL: hook.URL + "/notify", ReturnURL: hook.URL + "/return"}
	st, err := c.Collect(ctx, col)
	if err != nil || st.Outcome != gateway.Pending || st.RedirectURL == "" {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("status before paying = %+v, %v", st, err)
	}
	if st, _ := c.Collect(ctx, col); st.Outcome != gateway.Failed {
		t.Fatalf("a reused transaction_id = %+v; want refused", st)
	}
	// The customer pays on CinetPay's page and is posted back.
	res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"pay"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), `action="`+hook.URL+`/return"`) || !strings.Contains(string(page), col.Reference) {
		t.Fatalf("the page does not post the customer back to return_url: %s", page)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); err != nil || st.Outcome != gateway.Succeeded || st.ProviderRef == "" {
		t.Fatalf("status = %+v, %v", st, err)
	}
	hooks, bodies := hook.Received()
	if len(hooks) != 1 || hooks[0].Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("%d notifications", len(hooks))
	}
	ref, err := c.CallbackReference(hooks[0].Header, bodies[0])
	_, forged := c.CallbackReference(http.Header{"X-Token": {strings.Repeat("ab", 32)}}, bodies[0])
	tampered := strings.Replace(string(bodies[0]), "cpm_amount=1500", "cpm_amount=5", 1)
	_, altered := c.CallbackReference(hooks[0].Header, []byte(tampered))
	if err != nil || ref != col.Reference || forged == nil || altered == nil {
		t.Fatalf("notification = %q, %v; forged accepted: %v; altered accepted: %v", ref, err, forged == nil, altered == nil)
	}

	poor := col
	poor.Reference, poor.Phone = "31111111-2222-4333-8444-555555555555", "+2250700000049"
	if st, err := c.Collect(ctx, poor); err != nil || st.Outcome != gateway.Pending {
		t.Fatalf("collect = %+v, %v", st, err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/callback/"+poor.Reference+"?status=SUCCES") // early: still waiting
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Pending {
		t.Fatalf("status after an early notification = %+v", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+poor.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: poor.Reference}); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "INSUFFICIENT_BALANCE") {
		t.Fatalf("low balance = %+v", st)
	}
	refused := col
	refused.Reference, refused.Phone = "21111111-2222-4333-8444-555555555555", "+2250700000039"
	if st, _ := c.Collect(ctx, refused); st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "635") {
		t.Fatalf("refused = %+v", st)
	}
	odd := col
	odd.Reference, odd.Amount = "41111111-2222-4333-8444-555555555555", 1502
	if _, err := c.Collect(ctx, odd); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || !strings.Contains(err.Error(), "multiple of 5") {
		t.Fatalf("an amount not a multiple of 5: %v; want refused before sending", err)
	}
	wrong := &Client{BaseURL: srv.URL, APIKey: "guess", SiteID: "445160"}
	if _, err := wrong.Collect(ctx, col); err == nil || gateway.IsTransient(err) {
		t.Fatalf("wrong credentials: %v; want a lasting error", err)
	}
	if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: "91111111-2222-4333-8444-555555555555"}); err != nil || st.Outcome != gateway.NotFound {
		t.Fatalf("unknown = %+v, %v", st, err)
	}
	// Declining on the page.
	declined := col
	declined.Reference = "51111111-2222-4333-8444-555555555555"
	st, _ = c.Collect(ctx, declined)
	if res, err := http.PostForm(st.RedirectURL, url.Values{"do": {"decline"}}); err == nil {
		res.Body.Close()
	}
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: declined.Reference}); st.Outcome != gateway.Failed {
		t.Fatalf("declined = %+v", st)
	}
	// A card without the card holder's address is refused before sending.
	card := gateway.Collection{Reference: "61111111-2222-4333-8444-555555555555", Amount: 5000, Currency: "XOF", Card: true,
		Name: "Awa Kone", Email: "awa@example.com", NotifyURL: hook.URL + "/notify", ReturnURL: hook.URL + "/return"}
	if _, err := c.Collect(ctx, card); gateway.ErrorOf(err) == nil || !gateway.ErrorOf(err).NotSent || !strings.Contains(err.Error(), "customer_address") {
		t.Fatalf("card without an address: %v; want refused before sending, naming the fields", err)
	}
	// The waiting codes on the way.
	waiting := col
	waiting.Reference = "71111111-2222-4333-8444-555555555555"
	c.Collect(ctx, waiting)
	for _, code := range []string{"623", "663", "664"} {
		gatewaytest.Control(t, srv.URL, "/_sim/settle/"+waiting.Reference+"?status="+code)
		if st, err := c.CollectionStatus(ctx, gateway.Ref{Reference: waiting.Reference}); err != nil || st.Outcome != gateway.Pending {
			t.Fatalf("after %s: %+v, %v; want pending", code, st, err)
		}
	}
	gatewaytest.Control(t, srv.URL, "/_sim/settle/"+waiting.Reference)
	if st, _ := c.CollectionStatus(ctx, gateway.Ref{Reference: waiting.Reference}); st.Outcome != gateway.Succeeded {
		t.Fatalf("after waiting: %+v; want succeeded", st)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
		t.Fatalf("fault: %v", err)
	}
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=slow&seconds=1")
	if _, err := c.CollectionStatus(ctx, gateway.Ref{Reference: col.Reference}); !gateway.IsTransient(err) {
		t.Fatalf("slow: %v", err)
	}
}
