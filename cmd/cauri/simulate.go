package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

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

const simulated = "pawapay, cinetpay, cinetpay-v1, fedapay, paystack, flutterwave, wave, mtnmomo, mpesa, orangemoney"

// simulate runs an aggregator's simulator, for local development and
// end-to-end tries: point a gateway at it with --api-url.
func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on")
	token := fs.String("token", "sim-token", "every credential the simulator accepts: API token (pawaPay), secret key and webhook secret or hash (Paystack, Flutterwave, FedaPay), apikey, site_id, secret key and transfer password (CinetPay), api_key and api_password (CinetPay's API v1)")
	callback := fs.String("callback-url", "", "where settled payments are announced (the aggregator's callback; CinetPay takes it per payment)")
	settleAfter := fs.Duration("settle-after", 3*time.Second, "how long a payment waits for the customer (0: only POST /_sim/settle/{id})")
	var provider string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if provider != "" {
			return errors.New("simulate: want one provider")
		}
		provider, args = fs.Arg(0), fs.Args()[1:]
	}
	var h http.Handler
	switch provider {
	case "pawapay":
		h = &pawapay.Simulator{Token: *token, CallbackURL: *callback, SettleAfter: *settleAfter}
	case "paystack":
		h = &paystack.Simulator{SecretKey: *token, WebhookURL: *callback, SettleAfter: *settleAfter}
	case "flutterwave":
		h = &flutterwave.Simulator{SecretKey: *token, SecretHash: *token, WebhookURL: *callback, SettleAfter: *settleAfter}
	case "cinetpay":
		h = &cinetpay.Simulator{APIKey: *token, SiteID: *token, SecretKey: *token, TransferPassword: *token, SettleAfter: *settleAfter}
	case "cinetpay-v1": // CinetPay's API v1: api_key and api_password
		h = &cinetpay.V1Simulator{APIKey: *token, APIPassword: *token, SettleAfter: *settleAfter}
	case "fedapay":
		h = &fedapay.Simulator{SecretKey: *token, WebhookSecret: *token, WebhookURL: *callback, SettleAfter: *settleAfter}
	case "orangemoney":
		h = &orangemoney.Simulator{ClientID: *token, ClientSecret: *token, MerchantKey: *token, SettleAfter: *settleAfter}
	case "mpesa":
		// B2C: initiator_name the token, with initiator_password (any: the
		// simulator checks the encrypted credential's shape only).
		h = &mpesa.Simulator{ConsumerKey: *token, ConsumerSecret: *token, ShortCode: "174379", PassKey: *token, InitiatorName: *token, SettleAfter: *settleAfter}
	case "mtnmomo":
		h = &mtnmomo.Simulator{APIUser: *token, APIKey: *token, CollectionKey: *token, DisbursementKey: *token, SettleAfter: *settleAfter}
	case "wave":
		h = &wave.Simulator{APIKey: *token, WebhookSecret: *token, CallbackURL: *callback, SettleAfter: *settleAfter}
	case "":
		return errors.New("simulate: want a provider: " + simulated)
	default:
		return fmt.Errorf("simulate: no simulator for %q (have: %s)", provider, simulated)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s simulator on http://%s (token %q)\n", provider, ln.Addr(), *token)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
