package cauri

import "testing"

func TestCredentialHint(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"api_token", "eyJhbGciOiJIUzI1NiJ9.abcd1234", "…1234"},
		{"secret_key", "short", "••••"},
		{"initiator_password", "Safaricom999!", "••••"},
		{"reversal_initiator_password", "Safaricom999!", "••••"},
		{"transfer_password", "motdepasse2026", "••••"},
		{"pin", "123456789", "••••"},
	} {
		if got := CredentialHint(c.name, c.value); got != c.want {
			t.Errorf("CredentialHint(%q) = %q; want %q", c.name, got, c.want)
		}
	}
}
