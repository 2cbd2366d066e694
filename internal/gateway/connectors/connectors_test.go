package connectors

import (
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
)

// TestNew_MTNEnvironment: a live MTN MoMo gateway connected without
// target_environment speaks to its country's environment, never to the
// sandbox's; a test one to the sandbox; the credential wins when given.
func TestNew_MTNEnvironment(t *testing.T) {
	p, _ := gateway.Lookup("mtnmomo")
	routes, err := p.Routes([]string{"BJ"})
	if err != nil {
		t.Fatal(err)
	}
	creds := map[string]string{"api_user": "u", "api_key": "k", "collection_key": "c"}
	for _, tc := range []struct {
		live bool
		env  string // the credential
		want string
	}{
		{true, "", "mtnbenin"},
		{false, "", ""}, // the client's default: the sandbox
		{true, "mtnivorycoast", "mtnivorycoast"},
	} {
		c := map[string]string{"target_environment": tc.env}
		for k, v := range creds {
			c[k] = v
		}
		g := &cauri.Gateway{ID: cauri.NewID("gw_"), Provider: "mtnmomo", Live: tc.live, Routes: routes}
		conn, err := New(g, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := conn.(*mtnmomo.Client).Environment; got != tc.want {
			t.Errorf("live %v, target_environment %q: environment %q; want %q", tc.live, tc.env, got, tc.want)
		}
	}
}

// TestNew_MpesaInitiators: an M-Pesa gateway's B2C initiator and its own
// reversal initiator reach the connector, each with its credentials.
func TestNew_MpesaInitiators(t *testing.T) {
	g := &cauri.Gateway{ID: cauri.NewID("gw_"), Provider: "mpesa"}
	conn, err := New(g, map[string]string{"consumer_key": "k", "consumer_secret": "s", "shortcode": "174379", "passkey": "p",
		"initiator_name": "b2capi", "initiator_password": "pw1", "reversal_initiator_name": "revapi",
		"reversal_initiator_password": "pw2", "reversal_security_credential": "cred2"})
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*mpesa.Client)
	if c.InitiatorName != "b2capi" || c.InitiatorPassword != "pw1" || c.ReversalInitiatorName != "revapi" ||
		c.ReversalInitiatorPassword != "pw2" || c.ReversalSecurityCredential != "cred2" {
		t.Fatalf("client = B2C %q/%q, reversal %q/%q/%q", c.InitiatorName, c.InitiatorPassword,
			c.ReversalInitiatorName, c.ReversalInitiatorPassword, c.ReversalSecurityCredential)
	}
}

// TestRefusal_EveryProvider: every provider's failed payments are read for
// the customer by its own connector; an unknown provider's are generic.
func TestRefusal_EveryProvider(t *testing.T) {
	for _, k := range gateway.Keys() {
		if refusals[k] == nil {
			t.Errorf("provider %s has no reading of its refusals", k)
			continue
		}
		// A payment the aggregator never received (checkout's reason).
		if got := Refusal(k, gateway.NotStarted+"gateway: connection refused"); got != gateway.RefusalUnavailable {
			t.Errorf("%s: a payment never started = %q; want %q", k, got, gateway.RefusalUnavailable)
		}
	}
	if got := Refusal("pawapay", "INSUFFICIENT_BALANCE: The payer does not have enough funds"); got != gateway.RefusalFunds {
		t.Errorf("pawaPay's INSUFFICIENT_BALANCE = %q; want %q", got, gateway.RefusalFunds)
	}
	if got := Refusal("unknown", "INSUFFICIENT_BALANCE"); got != gateway.RefusalOther {
		t.Errorf("an unknown provider's refusal = %q; want the generic kind", got)
	}
}
