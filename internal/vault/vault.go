// Package vault keeps stored secrets unreadable without the master key:
// API secret keys (needed later to sign webhooks) and aggregator credentials
// are sealed with AES-256-GCM, and API keys are found by their SHA-256 hash,
// never by comparing plaintexts. It imports only the standard library.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the master key's length in bytes.
const KeySize = 32

// Vault seals and opens secrets under one master key.
type Vault struct{ aead cipher.AEAD }

// New returns a vault for a 32-byte master key.
func New(key []byte) (*Vault, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("master key is %d bytes; want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Vault{aead: aead}, nil
}

// ParseKey decodes a master key written in base64 (standard or URL
// alphabet, padded or not) or in hex.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, errors.New("master key must be 32 bytes written in base64 or hex (generate one with: openssl rand -base64 32)")
}

// LoadOrCreateKeyFile reads the master key from path, creating the file with
// a fresh random key (mode 0600) when it does not exist yet.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return ParseKey(string(b))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process created it first
		return LoadOrCreateKeyFile(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}

// Seal encrypts plaintext; aad binds the ciphertext to its owner (a row id),
// so a sealed value copied to another row does not open.
func (v *Vault) Seal(plaintext, aad string) string {
	nonce := make([]byte, v.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(v.aead.Seal(nonce, nonce, []byte(plaintext), []byte(aad)))
}

// Open decrypts a value made by Seal with the same aad.
func (v *Vault) Open(sealed, aad string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < v.aead.NonceSize() {
		return "", errors.New("vault: malformed sealed value")
	}
	n := v.aead.NonceSize()
	pt, err := v.aead.Open(nil, b[:n], b[n:], []byte(aad))
	if err != nil {
		return "", errors.New("vault: cannot open sealed value (wrong master key?)")
	}
	return string(pt), nil
}

// HashKey is how an API key is looked up. A plain SHA-256 suffices because
// keys carry 160 random bits: there is nothing to brute-force, and unlike an
// HMAC under the master key it survives a master key rotation.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
