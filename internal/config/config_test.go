package config

import (
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
)

func load(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	finish := Register(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return finish()
}

func TestConfig_Defaults(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.DatabaseURL != "data/cauri.db" || c.BaseURL != "http://localhost:8080" || c.PayURL != "http://localhost:8080/pay" {
		t.Fatalf("defaults = %+v", c)
	}
	if c.EventRetention != 180*24*time.Hour {
		t.Fatalf("event retention = %s; want 180 days", c.EventRetention)
	}
	for in, want := range map[string]time.Duration{"0": 0, "30d": 30 * 24 * time.Hour, "8760h": 365 * 24 * time.Hour} {
		if c, err := load(t, map[string]string{"CAURI_EVENT_RETENTION": in}); err != nil || c.EventRetention != want {
			t.Errorf("CAURI_EVENT_RETENTION=%s: %s, %v; want %s", in, c.EventRetention, err, want)
		}
	}
	if fmt.Sprint(c.WebhookRetrySchedule) != fmt.Sprint(cauri.DefaultRetrySchedule) || c.WebhookTimeout != cauri.WebhookTimeout || len(c.WebhookAllowedCIDRs) != 0 {
		t.Fatalf("webhook defaults = %v, %v, %v; want the SPEC's", c.WebhookRetrySchedule, c.WebhookTimeout, c.WebhookAllowedCIDRs)
	}
}

func TestConfig_EnvThenFlag(t *testing.T) {
	env := map[string]string{"CAURI_ADDR": ":9000", "CAURI_BASE_URL": "https://pay.example.com/", "CAURI_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7"}
	c, err := load(t, env, "--addr", ":9100")
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":9100" {
		t.Errorf("Addr = %q; want the flag to win over the environment", c.Addr)
	}
	for _, addr := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:6060"} {
		if c, err := load(t, map[string]string{"CAURI_DEBUG_ADDR": addr}); err != nil || c.DebugAddr != addr {
			t.Errorf("CAURI_DEBUG_ADDR=%s: %q, %v", addr, c.DebugAddr, err)
		}
	}
	if c.PayURL != "https://pay.example.com/pay" {
		t.Errorf("PayURL = %q; want it derived from the base URL", c.PayURL)
	}
	if len(c.TrustedProxies) != 2 || c.TrustedProxies[1].String() != "192.168.1.7/32" {
		t.Errorf("TrustedProxies = %v", c.TrustedProxies)
	}
}

func TestConfig_Invalid(t *testing.T) {
	for _, env := range []map[string]string{
		{"CAURI_TRUSTED_PROXIES": "nonsense"},
		{"CAURI_BASE_URL": "localhost:8080"},
		{"CAURI_DATABASE_URL": "mysql://x"},
		{"CAURI_LOG_LEVEL": "loud"},
		{"CAURI_PAY_URL": "https://pay.example.com/{id}"},
		{"CAURI_PAY_URL": "https://pay.example.com/p?x=1"},
		{"CAURI_WEBHOOK_ALLOWED_CIDRS": "localhost"},
		{"CAURI_WEBHOOK_RETRY_SCHEDULE": "0s,soon"},
		{"CAURI_WEBHOOK_RETRY_SCHEDULE": "0s,-1m"},
		{"CAURI_WEBHOOK_TIMEOUT": "0s"},
		{"CAURI_EVENT_RETENTION": "7d"}, // shorter than a delivery's retries may last
		{"CAURI_EVENT_RETENTION": "-30d"},
		{"CAURI_EVENT_RETENTION": "a year"},
		{"CAURI_EVENT_RETENTION": "213535d"}, // would wrap to 31 days
		{"CAURI_DEBUG_ADDR": ":6060"},        // every interface
		{"CAURI_DEBUG_ADDR": "10.0.0.5:6060"},
		{"CAURI_DEBUG_ADDR": "127.0.0.1"},
	} {
		if _, err := load(t, env); err == nil {
			t.Errorf("load(%v) succeeded; want an error", env)
		}
	}
}

func TestParseDatabaseURL(t *testing.T) {
	for _, tc := range []struct{ in, kind, target string }{
		{"data/cauri.db", SQLite, "data/cauri.db"},
		{"sqlite:/var/lib/cauri.db", SQLite, "/var/lib/cauri.db"},
		{"file:x.db?mode=rwc", SQLite, "x.db"},
		{"postgres://u@127.0.0.1/test", Postgres, "postgres://u@127.0.0.1/test"},
		{"postgresql://127.0.0.1/test", Postgres, "postgresql://127.0.0.1/test"},
	} {
		kind, target, err := ParseDatabaseURL(tc.in)
		if err != nil || kind != tc.kind || target != tc.target {
			t.Errorf("ParseDatabaseURL(%q) = %q, %q, %v; want %q, %q", tc.in, kind, target, err, tc.kind, tc.target)
		}
	}
}

func TestConfig_AddrMismatch(t *testing.T) {
	for _, tc := range []struct {
		base, addr string
		warn       bool
	}{
		{"http://localhost:8080", ":8080", false},
		{"http://localhost:8080", "127.0.0.1:8080", false},
		{"http://localhost:8080", ":9090", true},
		{"http://127.0.0.1", ":8080", true}, // port 80
		{"https://[::1]:8443", "[::1]:8443", false},
		{"https://pay.example.com", ":8080", false}, // a proxy in front
		{"http://192.168.1.5:8080", ":9090", false}, // another machine's address: its ports are its own
	} {
		c := Config{BaseURL: tc.base, Addr: tc.addr}
		if got := c.AddrMismatch(); (got != "") != tc.warn {
			t.Errorf("base %s, addr %s: %q; want a warning %v", tc.base, tc.addr, got, tc.warn)
		}
	}
}
