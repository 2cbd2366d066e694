// Package delivery sends webhook deliveries: the address policy (only
// public HTTPS receivers, checked when an address is set and again at
// every connection), the HTTP client that enforces it, and the worker that
// sends due deliveries with bounded concurrency, retries them on the
// schedule and never loses one across a crash (leases expire).
//
// It imports the domain, the store and the public webhook package (to sign).
package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
	"github.com/cauri-pay/cauri"
)

// Resolver looks up a host's addresses; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard is the address policy of webhook receivers. Only https URLs whose
// host resolves to public addresses only are allowed; the classification
// of addresses is code.dny.dev/ssrf's (IANA special-purpose registries:
// loopback, RFC 1918, link-local and metadata, CGNAT, unique-local,
// IPv4-mapped IPv6, multicast, unspecified, ...). Allowed networks
// (CAURI_WEBHOOK_ALLOWED_CIDRS) are exempt and may use plain http.
type Guard struct {
	allowed  []netip.Prefix
	resolver Resolver
	guardian *ssrf.Guardian
}

// NewGuard returns the policy with the exempt networks; resolver nil means
// the system's.
func NewGuard(allowed []netip.Prefix, resolver Resolver) *Guard {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	var v4, v6 []netip.Prefix
	for _, p := range allowed {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	return &Guard{
		allowed:  allowed,
		resolver: resolver,
		guardian: ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...)),
	}
}

func (g *Guard) exempt(ip netip.Addr) bool {
	for _, p := range g.allowed {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// numericHost matches hosts every label of which is a number in some base
// ("2130706433", "0177.0.0.1", "0x7f.1"): resolvers read these as IP
// addresses in odd spellings, so they are refused unless canonical.
var numericHost = regexp.MustCompile(`^(?i)(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+))*\.?$`)

// CheckURL is the check made when a merchant sets an address: it answers
// an EInvalid error naming what is wrong.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	bad := func(format string, args ...any) error {
		return cauri.Errorf(cauri.EInvalid, "webhookUrl "+format, args...)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || len(raw) > 2048 {
		return bad("must be an absolute https URL of at most 2048 characters")
	}
	if u.User != nil {
		// It would be stored and shown back with the configuration.
		return bad("must not carry a user name or password (user:password@): authenticate the webhook by its signature")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad("port %q is not a port from 1 to 65535", p)
		}
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if numericHost.MatchString(host) {
		return bad("host %q is an IP address in an unusual spelling; write a host name or a canonical address", host)
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		addrs, err = g.resolver.LookupNetIP(rctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return bad("host %q does not resolve", host)
		}
	}
	for _, ip := range addrs {
		if u.Scheme == "http" && !g.exempt(ip) {
			return bad("must use https (plain http reaches only the networks of CAURI_WEBHOOK_ALLOWED_CIDRS, such as 127.0.0.0/8 for a receiver on this machine)")
		}
		if err := g.guardian.SafeAddr(ip); err != nil {
			return bad("host %q is %s, a local, private or reserved address; use a public HTTPS address, or allow its network with CAURI_WEBHOOK_ALLOWED_CIDRS", host, ip)
		}
	}
	return nil
}

// Client returns the HTTP client of deliveries. Every connection is checked
// again once the name is resolved (so DNS rebinding gains nothing), plain
// http connects only to exempt networks, redirects are not followed (a 3xx
// is not an acknowledgement), no proxy is used (the check must see the
// receiver's address), and the whole exchange is bounded by timeout.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	transport := func(control func(network, address string, c syscall.RawConn) error) *http.Transport {
		d := &net.Dialer{Timeout: timeout, Control: control}
		return &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   64, // an endpoint that answers fast holds up to Worker.MaxPerEndpoint at once: keep them alive
			IdleConnTimeout:       time.Minute,
		}
	}
	exemptOnly := func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !g.exempt(ap.Addr()) {
			return fmt.Errorf("%w: plain http to %s", ssrf.ErrProhibitedIP, address)
		}
		return nil
	}
	return &http.Client{
		Transport: schemeTransport{https: transport(g.guardian.Safe), http: transport(exemptOnly)},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// schemeTransport sends https and plain http through transports with their
// own connection checks.
type schemeTransport struct{ https, http *http.Transport }

func (t schemeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.EqualFold(r.URL.Scheme, "http") {
		return t.http.RoundTrip(r)
	}
	return t.https.RoundTrip(r)
}

// blocked reports whether err is the guard refusing an address.
func blocked(err error) bool {
	return errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) || errors.Is(err, ssrf.ErrInvalidHostPort)
}
