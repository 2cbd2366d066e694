// Package config is the one place where Cauri's settings are named: every
// CAURI_* environment variable, its command-line flag and its default.
// docs/configuration.md lists the same names for operators. It imports only
// the standard library.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is the service's settings after defaults, environment and flags.
type Config struct {
	Addr           string
	DatabaseURL    string
	BaseURL        string
	PayURL         string
	TrustedProxies []netip.Prefix
	MasterKey      string
	LogLevel       string
	// PartnerSecret is the single partner's secret (the simple form of the
	// partner API); "" leaves only the partners issued by the administration.
	PartnerSecret string
	// PlatformWorkspace owns the gateways that collect for Connect workspaces.
	PlatformWorkspace string
	// RedisURL, when set, is the Redis every node shares its rate limits
	// through; "" keeps them in the node's memory.
	RedisURL string
	// MetricsToken, when set, is the bearer token /metrics asks for; ""
	// serves the metrics to this host only.
	MetricsToken string
	// DebugAddr, when set, is the address of a second listener that serves
	// Go's runtime profiles (/debug/pprof/); "" serves none.
	DebugAddr string

	WebhookAllowedCIDRs  []netip.Prefix
	WebhookRetrySchedule []time.Duration
	WebhookTimeout       time.Duration
	// EventRetention is how long events, their webhook deliveries and the
	// dashboard's notifications are kept; 0 keeps them for ever. Payments,
	// refunds and transfers are always kept.
	EventRetention time.Duration
}

// MinEventRetention is the shortest retention of the webhook log: a
// delivery's retries (3 days by default) and a merchant's look at a month's
// log must fit in it.
const MinEventRetention = 30 * 24 * time.Hour

// setting is one CAURI_* name with its flag and default.
type setting struct {
	env, flag, def, usage string
	dst                   *string
}

func (c *Config) settings(raw *rawConfig) []setting {
	return []setting{
		{"CAURI_ADDR", "addr", ":8080", "address to listen on", &c.Addr},
		{"CAURI_DATABASE_URL", "database-url", "data/cauri.db", "embedded SQLite file (PATH, sqlite:PATH, file:PATH) or postgres:// URL", &c.DatabaseURL},
		{"CAURI_BASE_URL", "base-url", "http://localhost:8080", "public address of the service", &c.BaseURL},
		{"CAURI_PAY_URL", "pay-url", "", "public address of the hosted payment pages (default {base-url}/pay)", &c.PayURL},
		{"CAURI_TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated CIDRs whose X-Forwarded-For is believed", &raw.trustedProxies},
		{"CAURI_MASTER_KEY", "master-key", "", "32-byte key (base64 or hex) that encrypts stored secrets; embedded mode generates one next to the database", &c.MasterKey},
		{"CAURI_LOG_LEVEL", "log-level", "info", "debug, info, warn or error", &c.LogLevel},
		{"CAURI_WEBHOOK_ALLOWED_CIDRS", "webhook-allowed-cidrs", "", "comma-separated CIDRs exempt from the public-HTTPS rule of webhook addresses (local development, tests)", &raw.webhookAllowed},
		{"CAURI_WEBHOOK_RETRY_SCHEDULE", "webhook-retry-schedule", "0s,1m,5m,15m,1h,3h,6h,12h,24h,24h", "delays before each webhook attempt, comma-separated Go durations", &raw.retrySchedule},
		{"CAURI_WEBHOOK_TIMEOUT", "webhook-timeout", "10s", "how long a webhook receiver has to answer", &raw.webhookTimeout},
		{"CAURI_PARTNER_SECRET", "partner-secret", "", "the single partner's secret for /v1/partner/* (x-partner-secret); more partners: cauri partner create", &c.PartnerSecret},
		{"CAURI_PLATFORM_WORKSPACE", "platform-workspace", "", "the workspace whose gateways collect the payments of Connect workspaces", &c.PlatformWorkspace},
		{"CAURI_METRICS_TOKEN", "metrics-token", "", "bearer token that /metrics asks for (default: /metrics answers this host only)", &c.MetricsToken},
		{"CAURI_REDIS_URL", "redis-url", "", "redis://host:port/db shared by every node for the rate limits (default: each node's memory)", &c.RedisURL},
		{"CAURI_DEBUG_ADDR", "debug-addr", "", "address of a listener serving Go's runtime profiles at /debug/pprof/ (default: none); a loopback address only", &c.DebugAddr},
		{"CAURI_EVENT_RETENTION", "event-retention", "180d", "how long events, webhook deliveries and notifications are kept: days (180d) or a Go duration, at least 30d; 0 keeps them for ever", &raw.eventRetention},
	}
}

type rawConfig struct{ trustedProxies, webhookAllowed, retrySchedule, webhookTimeout, eventRetention string }

// Register declares every setting as a flag of fs, defaulting to the
// environment (read with getenv) and then to the built-in default. Call
// Finish after fs.Parse.
func Register(fs *flag.FlagSet, getenv func(string) string) func() (Config, error) {
	c := &Config{}
	raw := &rawConfig{}
	for _, s := range c.settings(raw) {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		fs.StringVar(s.dst, s.flag, def, s.usage+" ["+s.env+"]")
	}
	return func() (Config, error) { return c.finish(raw) }
}

func (c *Config) finish(raw *rawConfig) (Config, error) {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if err := checkHTTPURL("base URL", c.BaseURL); err != nil {
		return Config{}, err
	}
	if c.PayURL == "" {
		c.PayURL = c.BaseURL + "/pay"
	}
	c.PayURL = strings.TrimRight(c.PayURL, "/")
	if err := checkHTTPURL("pay URL", c.PayURL); err != nil {
		return Config{}, err
	}
	if u, _ := url.Parse(c.PayURL); !safePath.MatchString(u.Path) || u.RawQuery != "" || u.Fragment != "" {
		return Config{}, fmt.Errorf("pay URL %q: its path may hold only letters, digits, /, -, _ and .", c.PayURL)
	}
	var err error
	if c.TrustedProxies, err = parsePrefixes("CAURI_TRUSTED_PROXIES", raw.trustedProxies); err != nil {
		return Config{}, err
	}
	if c.WebhookAllowedCIDRs, err = parsePrefixes("CAURI_WEBHOOK_ALLOWED_CIDRS", raw.webhookAllowed); err != nil {
		return Config{}, err
	}
	for _, d := range strings.Split(raw.retrySchedule, ",") {
		v, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || v < 0 {
			return Config{}, fmt.Errorf("CAURI_WEBHOOK_RETRY_SCHEDULE: %q is not a duration such as 0s, 1m or 24h", d)
		}
		c.WebhookRetrySchedule = append(c.WebhookRetrySchedule, v)
	}
	if n := len(c.WebhookRetrySchedule); n > 50 {
		return Config{}, fmt.Errorf("CAURI_WEBHOOK_RETRY_SCHEDULE: %d attempts; at most 50", n)
	}
	if c.WebhookTimeout, err = time.ParseDuration(raw.webhookTimeout); err != nil || c.WebhookTimeout <= 0 || c.WebhookTimeout > time.Minute {
		return Config{}, fmt.Errorf("CAURI_WEBHOOK_TIMEOUT: %q is not a duration between 0 and 1m", raw.webhookTimeout)
	}
	if c.EventRetention, err = ParseAge(raw.eventRetention); err != nil || c.EventRetention != 0 && c.EventRetention < MinEventRetention {
		return Config{}, fmt.Errorf("CAURI_EVENT_RETENTION: %q is not 0 or a duration of at least 30 days (180d, 4320h)", raw.eventRetention)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return Config{}, fmt.Errorf("CAURI_LOG_LEVEL: %q is not debug, info, warn or error", c.LogLevel)
	}
	if _, _, err := ParseDatabaseURL(c.DatabaseURL); err != nil {
		return Config{}, err
	}
	if c.DebugAddr != "" && !loopback(c.DebugAddr) {
		return Config{}, fmt.Errorf("CAURI_DEBUG_ADDR: %q is not a loopback address such as 127.0.0.1:6060 (the profiles are for this machine only)", c.DebugAddr)
	}
	return *c, nil
}

// loopback reports whether addr is host:port with a loopback host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return host == "localhost" || err == nil && ip.IsLoopback()
}

// maxAgeDays bounds an age in days: beyond it the duration would wrap.
const maxAgeDays = 100 * 366

// ParseAge reads an age as days ("90d") or a Go duration ("2160h"); "0"
// is zero. It must not be negative.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > maxAgeDays {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a number of days (90d) or a duration (2160h)", s)
	}
	return d, nil
}

// safePath is what a pay URL's path may hold: the pages are routed there.
var safePath = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)*$`)

// parsePrefixes reads comma-separated CIDRs or single addresses.
func parsePrefixes(name, list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("%s: %q is not a CIDR or an address", name, p)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, prefix.Masked())
	}
	return out, nil
}

func checkHTTPURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an absolute http(s) URL", what, s)
	}
	return nil
}

// Database kinds.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// ParseDatabaseURL tells which database a CAURI_DATABASE_URL names: a
// postgres:// or postgresql:// URL, or an embedded SQLite file given as a
// path, sqlite:PATH or file:PATH. For SQLite the second result is the path.
func ParseDatabaseURL(s string) (kind, target string, err error) {
	switch {
	case s == "":
		return "", "", errors.New("CAURI_DATABASE_URL is empty")
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return Postgres, s, nil
	case strings.HasPrefix(s, "sqlite:"):
		s = strings.TrimPrefix(strings.TrimPrefix(s, "sqlite:"), "//")
	case strings.HasPrefix(s, "file:"):
		s = strings.TrimPrefix(strings.TrimPrefix(s, "file:"), "//")
	case strings.Contains(s, "://"):
		return "", "", fmt.Errorf("CAURI_DATABASE_URL: unknown scheme in %q (use a file path or postgres://)", s)
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "", "", errors.New("CAURI_DATABASE_URL: empty SQLite path")
	}
	return SQLite, s, nil
}

// MasterKeyFile is where embedded mode keeps a generated master key: next
// to the database file.
func MasterKeyFile(sqlitePath string) string {
	return filepath.Join(filepath.Dir(sqlitePath), "master.key")
}

// AddrMismatch says why the base URL cannot reach this server, when it
// names this machine (localhost, a loopback address) on a port the server
// does not listen on: the aggregators' callbacks, the payment links and
// the hosted pages would point nowhere. "" when it can, or when the base
// URL is another host (a proxy in front, whose ports are its own).
func (c Config) AddrMismatch() string {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !ip.IsLoopback()) {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	_, listen, err := net.SplitHostPort(c.Addr)
	if err != nil || listen == port {
		return ""
	}
	return fmt.Sprintf("CAURI_BASE_URL %s names this machine on port %s, but the server listens on %s (CAURI_ADDR): callbacks, links and payment pages would point nowhere; set CAURI_BASE_URL to http://localhost:%s or CAURI_ADDR to :%s",
		c.BaseURL, port, c.Addr, listen, port)
}
