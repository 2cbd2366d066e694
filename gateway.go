package cauri

import (
	"strings"
	"time"
)

// Gateway is one aggregator account of a merchant: the provider, the
// merchant's credentials there (kept sealed by the store, never shown
// again), and the operators it serves for this workspace.
type Gateway struct {
	ID          string
	WorkspaceID string
	Provider    string // provider key, e.g. "pawapay"
	Name        string
	Live        bool   // live credentials at the aggregator (else its sandbox)
	BaseURL     string // overrides the provider's; "" for the default
	Collect     bool
	Payout      bool
	Enabled     bool
	Routes      []GatewayRoute
	// CredentialHints shows each credential field's last 4 characters.
	CredentialHints map[string]string
	// Problem is why the gateway cannot be used now (its connector cannot
	// be built: credentials that no longer decrypt, ...), shown on the
	// dashboard; "" when it can.
	Problem   string
	CreatedAt time.Time
}

// GatewayRoute is one operator of one country that a gateway serves, with
// the aggregator's own code for it.
type GatewayRoute struct {
	Country  string `json:"country"`
	Operator string `json:"operator"`
	Code     string `json:"code"`
	Enabled  bool   `json:"enabled"`
}

// CredentialHint is what may be shown of a gateway's credential named
// name: Hint of a key the aggregator generated; nothing of a password or a
// PIN a person chose (its last characters say too much of it, and people
// reuse them).
func CredentialHint(name, value string) string {
	if n := strings.ToLower(name); strings.Contains(n, "password") || strings.Contains(n, "pin") {
		return strings.Repeat("•", 4)
	}
	return Hint(value)
}

// Hint is what may be shown of a secret: its last 4 characters.
func Hint(secret string) string {
	if len(secret) <= 8 {
		return strings.Repeat("•", 4)
	}
	return "…" + secret[len(secret)-4:]
}
