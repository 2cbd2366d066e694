// Package connectors builds the connector of a gateway from its provider,
// credentials and address. It is the one place that knows every connector
// package.
//
// It imports the domain, the gateway package and each connector.
package connectors

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/cinetpay"
	"github.com/cauri-pay/cauri/internal/gateway/fedapay"
	"github.com/cauri-pay/cauri/internal/gateway/flutterwave"
	"github.com/cauri-pay/cauri/internal/gateway/mpesa"
	"github.com/cauri-pay/cauri/internal/gateway/mtnmomo"
	"github.com/cauri-pay/cauri/internal/gateway/orangemoney"
	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
	"github.com/cauri-pay/cauri/internal/gateway/paystack"
	"github.com/cauri-pay/cauri/internal/gateway/wave"
)

// Timeout bounds every call to an aggregator.
const Timeout = 15 * time.Second

var client = &http.Client{Timeout: Timeout}

// clients keeps one client per gateway and credentials for the
// aggregators whose access tokens (an hour) should serve every call, not
// one: MTN MoMo, M-Pesa and Orange Money.
var clients sync.Map // gateway id + credentials -> client

func cached[T any](gatewayID string, creds map[string]string, c T) T {
	key := gatewayID
	for _, k := range slices.Sorted(maps.Keys(creds)) {
		key += "\x00" + k + "=" + creds[k]
	}
	got, _ := clients.LoadOrStore(key, c)
	return got.(T)
}

// New returns the connector of gateway g with its credentials.
func New(g *cauri.Gateway, creds map[string]string) (gateway.Connector, error) {
	p, ok := gateway.Lookup(g.Provider)
	if !ok {
		return nil, &gateway.Error{Message: "unknown provider " + g.Provider}
	}
	base := g.BaseURL
	if base == "" {
		base = p.BaseURL.Test
		if g.Live {
			base = p.BaseURL.Live
		}
	}
	switch g.Provider {
	case "pawapay":
		return &pawapay.Client{BaseURL: base, Token: creds["api_token"], HTTP: client}, nil
	case "paystack":
		return &paystack.Client{BaseURL: base, SecretKey: creds["secret_key"], HTTP: client}, nil
	case "cinetpay":
		// An account on CinetPay's API v1 is known by its credentials; the
		// client picks the host from the key (sk_test_: the sandbox).
		if creds["api_key"] != "" {
			return cached(g.ID+g.BaseURL, creds, cinetpay.NewV1(g.BaseURL, creds["api_key"], creds["api_password"], client)), nil
		}
		// Transfers live on another host; a gateway pointed elsewhere (a
		// simulator) serves both, the transfer API under /v1.
		transfers := ""
		if g.BaseURL != "" {
			transfers = strings.TrimRight(g.BaseURL, "/") + "/v1"
		}
		return &cinetpay.Client{BaseURL: base, APIKey: creds["apikey"], SiteID: creds["site_id"], SecretKey: creds["secret_key"],
			TransferPassword: creds["transfer_password"], TransferBaseURL: transfers, HTTP: client}, nil
	case "fedapay":
		return &fedapay.Client{BaseURL: base, SecretKey: creds["secret_key"], WebhookSecret: creds["webhook_secret"], HTTP: client}, nil
	case "flutterwave":
		return &flutterwave.Client{BaseURL: base, SecretKey: creds["secret_key"], SecretHash: creds["secret_hash"], HTTP: client}, nil
	case "wave":
		return &wave.Client{BaseURL: base, APIKey: creds["api_key"], WebhookSecret: creds["webhook_secret"], HTTP: client}, nil
	case "mtnmomo":
		env := creds["target_environment"]
		if env == "" && g.Live && len(g.Routes) > 0 {
			// A live account is its country's: MTN's environment is the
			// operator code of the gateway's one country (mtnbenin, ...),
			// never the sandbox's.
			env = g.Routes[0].Code
		}
		return cached(g.ID+base, creds, &mtnmomo.Client{BaseURL: base, Environment: env, CollectionKey: creds["collection_key"],
			DisbursementKey: creds["disbursement_key"], APIUser: creds["api_user"], APIKey: creds["api_key"], HTTP: client}), nil
	case "orangemoney":
		return cached(g.ID+base, creds, &orangemoney.Client{BaseURL: base, Country: creds["country"], ClientID: creds["client_id"],
			ClientSecret: creds["client_secret"], MerchantKey: creds["merchant_key"], MerchantName: creds["merchant_name"], HTTP: client}), nil
	case "mpesa":
		return cached(g.ID+base, creds, &mpesa.Client{BaseURL: base, ConsumerKey: creds["consumer_key"], ConsumerSecret: creds["consumer_secret"],
			ShortCode: creds["shortcode"], PassKey: creds["passkey"], TillNumber: creds["till_number"],
			InitiatorName: creds["initiator_name"], InitiatorPassword: creds["initiator_password"], SecurityCredential: creds["security_credential"],
			B2CShortCode: creds["b2c_shortcode"], CommandID: creds["command_id"], Environment: mpesaEnvironment(creds["environment"], g.Live),
			ReversalInitiatorName: creds["reversal_initiator_name"], ReversalInitiatorPassword: creds["reversal_initiator_password"],
			ReversalSecurityCredential: creds["reversal_security_credential"], HTTP: client}), nil
	}
	return nil, &gateway.Error{Message: p.Name + " payments are not connected yet"}
}

// mpesaEnvironment is an M-Pesa gateway's environment: its credential's,
// else production for a live gateway, sandbox for a test one.
func mpesaEnvironment(env string, live bool) string {
	if env = strings.ToLower(strings.TrimSpace(env)); env != "" {
		return env
	}
	if live {
		return mpesa.Production
	}
	return mpesa.Sandbox
}

// refusals reads each provider's reasons for the customer: the codes its
// connector puts in a failed payment's reason (each connector's refusal.go
// cites its sources).
var refusals = map[string]func(reason string) gateway.Refusal{
	"pawapay": pawapay.Refusal, "paystack": paystack.Refusal, "cinetpay": cinetpay.Refusal,
	"fedapay": fedapay.Refusal, "flutterwave": flutterwave.Refusal, "wave": wave.Refusal,
	"mtnmomo": mtnmomo.Refusal, "orangemoney": orangemoney.Refusal, "mpesa": mpesa.Refusal,
}

// Refusal is what a failed payment through provider means for the
// customer, from the reason its connector gave (kept as it is for the
// merchant): gateway.RefusalOther for a provider or a reason not known.
func Refusal(provider, reason string) gateway.Refusal {
	if f, ok := refusals[provider]; ok {
		return f(reason)
	}
	return gateway.RefusalByCode(reason, nil)
}
