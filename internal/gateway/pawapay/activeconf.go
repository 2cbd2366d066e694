package pawapay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// The active configuration (GET /v2/active-conf) is pawaPay's word, per
// account, on what each provider takes: per country, provider, currency
// and operation type the authorisation type (authType: PROVIDER_AUTH, a
// PIN prompt; PREAUTH, a code the customer gets before paying), the
// decimals the amount may carry (decimalsInAmount: NONE or TWO_PLACES) and
// the transaction limits. pawaPay's guides say to read it so that payments
// are not rejected at initiation (docs.pawapay.io/v2/docs/deposits,
// "Avoiding failures on initiation").

// Operation types, as active-conf names them.
const (
	opDeposit = "DEPOSIT"
	opPayout  = "PAYOUT"
)

// Authorisation types, as active-conf names them.
const (
	authProvider = "PROVIDER_AUTH" // a PIN prompt on the customer's phone
	authPreauth  = "PREAUTH"       // preAuthorisationCode at initiation
)

// activeConf is the part of GET /v2/active-conf the connector reads.
type activeConf struct {
	Countries []struct {
		Country   string         `json:"country"` // ISO 3166-1 alpha-3
		Providers []confProvider `json:"providers"`
	} `json:"countries"`
}

type confProvider struct {
	Provider   string `json:"provider"`
	Currencies []struct {
		Currency       string  `json:"currency"`
		OperationTypes opTypes `json:"operationTypes"`
	} `json:"currencies"`
}

// opConf is one operation type of one provider and currency.
type opConf struct {
	OperationType    string `json:"operationType"`
	AuthType         string `json:"authType"`
	DecimalsInAmount string `json:"decimalsInAmount"` // NONE, TWO_PLACES
	// The guides call the limits minAmount and maxAmount; the API
	// reference's example calls them minTransactionLimit and
	// maxTransactionLimit. Both are read.
	MinAmount           string `json:"minAmount"`
	MaxAmount           string `json:"maxAmount"`
	MinTransactionLimit string `json:"minTransactionLimit"`
	MaxTransactionLimit string `json:"maxTransactionLimit"`
	Status              string `json:"status"` // OPERATIONAL, DELAYED, CLOSED
}

func (o opConf) limits() (minimum, maximum string) {
	minimum, maximum = o.MinAmount, o.MaxAmount
	if minimum == "" {
		minimum = o.MinTransactionLimit
	}
	if maximum == "" {
		maximum = o.MaxTransactionLimit
	}
	return minimum, maximum
}

// opTypes are a currency's operation types by name. pawaPay's guides show
// them as an object keyed by the type ({"DEPOSIT": {...}}); the API
// reference's example shows an array whose items are either such an object
// or carry their type in "operationType". All three are read.
type opTypes map[string]opConf

func (t *opTypes) UnmarshalJSON(b []byte) error {
	*t = opTypes{}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == 'n' {
		return nil
	}
	if b[0] == '{' {
		return json.Unmarshal(b, (*map[string]opConf)(t))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	for _, item := range items {
		var flat opConf
		if err := json.Unmarshal(item, &flat); err != nil {
			return err
		}
		if flat.OperationType != "" {
			(*t)[flat.OperationType] = flat
			continue
		}
		var keyed map[string]opConf
		if err := json.Unmarshal(item, &keyed); err != nil {
			return err
		}
		for k, v := range keyed {
			(*t)[k] = v
		}
	}
	return nil
}

// lookup finds the configuration of an operation of provider in currency.
// listed reports whether the account has the provider at all.
func (c *activeConf) lookup(provider string, currency cauri.Currency, op string) (o opConf, found, listed bool) {
	if c == nil {
		return opConf{}, false, false
	}
	for _, country := range c.Countries {
		for _, p := range country.Providers {
			if p.Provider != provider {
				continue
			}
			listed = true
			for _, cur := range p.Currencies {
				if cur.Currency != string(currency) {
					continue
				}
				if o, ok := cur.OperationTypes[op]; ok {
					return o, true, true
				}
			}
		}
	}
	return opConf{}, false, listed
}

// empty reports a configuration that names no provider: it says nothing
// (an answer of another shape, an account being set up).
func (c *activeConf) empty() bool {
	if c == nil {
		return true
	}
	for _, country := range c.Countries {
		if len(country.Providers) > 0 {
			return false
		}
	}
	return true
}

// How long a configuration is used before it is read again, how long an
// old one still serves while pawaPay cannot give a new one, and how long a
// failed read waits before the next.
const (
	defaultConfTTL = 15 * time.Minute
	confStaleMax   = 24 * time.Hour
	confRetryAfter = time.Minute
	confTimeout    = 5 * time.Second
)

// confCache holds each account's configuration, shared by every Client
// of it: the service makes a Client per call, so a cache in the Client
// would read active-conf before every payment. An account is its base
// address and a hash of its token (the token itself is not kept here).
var confCache = struct {
	sync.Mutex
	entries map[string]*confEntry
}{entries: map[string]*confEntry{}}

type confEntry struct {
	mu       sync.Mutex // held while reading, so one read serves all callers
	conf     *activeConf
	fetched  time.Time
	failedAt time.Time // a failed read is not tried again before confRetryAfter
}

func (c *Client) confKey() string {
	h := sha256.Sum256([]byte(c.Token))
	return strings.TrimRight(c.BaseURL, "/") + "\x00" + hex.EncodeToString(h[:])
}

// activeConf returns the account's configuration, read at most once per
// ConfTTL (one read at a time per account, the others wait for it), or an
// older one when pawaPay cannot answer, or nil when none can be had: the
// caller then goes on without it, as the connector did before it read one.
func (c *Client) activeConf(ctx context.Context) *activeConf {
	ttl := c.ConfTTL
	if ttl <= 0 {
		ttl = defaultConfTTL
	}
	key := c.confKey()
	confCache.Lock()
	e := confCache.entries[key]
	if e == nil {
		e = &confEntry{}
		confCache.entries[key] = e
	}
	confCache.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if e.conf != nil && now.Sub(e.fetched) < ttl {
		return e.conf
	}
	if now.Sub(e.failedAt) >= confRetryAfter {
		// A failed read is not an error of the payment: the connector
		// goes on with the older configuration, or without one.
		if conf, err := c.fetchConf(ctx); err == nil {
			e.conf, e.fetched = conf, now
			return conf
		}
		e.failedAt = now
	}
	if e.conf != nil && now.Sub(e.fetched) < confStaleMax {
		return e.conf
	}
	return nil
}

// fetchConf reads GET /v2/active-conf for every country and operation.
func (c *Client) fetchConf(ctx context.Context) (*activeConf, error) {
	ctx, cancel := context.WithTimeout(ctx, confTimeout)
	defer cancel()
	code, raw, err := gateway.Send(ctx, c.HTTP, "pawaPay", http.MethodGet, gateway.URL(c.BaseURL, "/v2/active-conf"), c.header(), nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("pawaPay answered %d to active-conf", code)
	}
	var conf activeConf
	if err := json.Unmarshal(raw, &conf); err != nil {
		return nil, fmt.Errorf("pawaPay's active-conf is unreadable: %w", err)
	}
	if conf.empty() {
		return nil, fmt.Errorf("pawaPay's active-conf names no provider")
	}
	return &conf, nil
}

// decimals is how many decimals an amount may carry: from active-conf's
// decimalsInAmount, else the currency's own.
func decimals(o opConf, cur cauri.Currency) int {
	switch o.DecimalsInAmount {
	case "NONE":
		return 0
	case "TWO_PLACES":
		return 2
	}
	return cur.Exponent()
}

// amountFor writes amount (minor units) as pawaPay's decimal string for
// an operation configured as o, or refuses an amount the provider cannot
// take (more decimals than it allows, outside its limits): such a request
// would only be rejected, so it is not sent.
func amountFor(o opConf, provider string, amount int64, cur cauri.Currency) (string, error) {
	exp, dec := cur.Exponent(), decimals(o, cur)
	if dec < exp {
		unit := int64(1)
		for range exp - dec {
			unit *= 10
		}
		if amount%unit != 0 {
			return "", &gateway.Error{NotSent: true, Message: fmt.Sprintf(
				"pawaPay's %s takes amounts without decimals (decimalsInAmount %s): %s %s cannot be sent", provider, o.DecimalsInAmount, cauri.FormatAmount(amount, cur), cur)}
		}
	}
	minimum, maximum := o.limits()
	if lo, ok := limit(minimum, cur); ok && amount < lo {
		return "", &gateway.Error{NotSent: true, Message: fmt.Sprintf(
			"%s %s is below pawaPay's minimum of %s %s for %s", cauri.FormatAmount(amount, cur), cur, minimum, cur, provider)}
	}
	if hi, ok := limit(maximum, cur); ok && amount > hi {
		return "", &gateway.Error{NotSent: true, Message: fmt.Sprintf(
			"%s %s is above pawaPay's maximum of %s %s for %s", cauri.FormatAmount(amount, cur), cur, maximum, cur, provider)}
	}
	return cauri.FormatAmount(amount, cur), nil
}

// limit reads one of active-conf's limits (a decimal string in major
// units) in minor units; an absent or unreadable one is no limit.
func limit(s string, cur cauri.Currency) (int64, bool) {
	if strings.TrimSpace(s) == "" {
		return 0, false
	}
	v, err := cauri.ParseAmount("limit", strings.TrimSpace(s), cur)
	return v, err == nil
}
