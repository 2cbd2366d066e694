package vault

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVault_SealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	v, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := v.Seal("svc_live_sec_abc", "key_1")
	if strings.Contains(sealed, "svc_live") {
		t.Fatalf("sealed value shows the plaintext: %q", sealed)
	}
	t.Run("OK", func(t *testing.T) {
		got, err := v.Open(sealed, "key_1")
		if err != nil || got != "svc_live_sec_abc" {
			t.Fatalf("Open = %q, %v; want the plaintext", got, err)
		}
	})
	t.Run("ErrOtherRow", func(t *testing.T) {
		if _, err := v.Open(sealed, "key_2"); err == nil {
			t.Fatal("a value sealed for key_1 opened for key_2")
		}
	})
	t.Run("ErrOtherMasterKey", func(t *testing.T) {
		other, _ := New(bytes.Repeat([]byte{8}, KeySize))
		if _, err := other.Open(sealed, "key_1"); err == nil {
			t.Fatal("opened with another master key")
		}
	})
	t.Run("FreshNonce", func(t *testing.T) {
		if v.Seal("x", "a") == v.Seal("x", "a") {
			t.Fatal("two seals of the same value are equal: nonce reused")
		}
	})
}

func TestParseKey(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"base64", "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="},
		{"base64Raw", "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc"},
		{"hex", strings.Repeat("07", 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseKey(tc.in)
			if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{7}, 32)) {
				t.Fatalf("ParseKey(%q) = %x, %v", tc.in, got, err)
			}
		})
	}
	if _, err := ParseKey("short"); err == nil {
		t.Fatal("ParseKey accepted a short key")
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "master.key")
	k1, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKeyFile(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load = %x, %v; want the key created first", k2, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v; want 0600", fi.Mode().Perm())
	}
}
