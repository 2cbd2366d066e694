// Package accounts is the service of who may do what (Service): API keys
// and their rolls, the dashboard's sign-in and sessions, its team and
// invitations. Its rules that need more than the domain's standard
// library are here too: a new password must be hard to guess, judged by
// zxcvbn (its embedded lists of common passwords, words and names, and its
// patterns: keyboard rows, dates, repeats), and passwords are kept and
// checked as bcrypt hashes, in one place.
//
// It imports the domain, the store's types, zxcvbn and bcrypt.
package accounts

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"sync"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/trustelem/zxcvbn"
	"golang.org/x/crypto/bcrypt"
)

// MinScore is the least zxcvbn score a new password must reach (0 to 4; 3
// is "safely unguessable: moderate protection from an offline attack").
const MinScore = 3

// CheckPassword refuses a new password of the wrong length
// (cauri.CheckPassword) or one easy to guess: a common password, a word
// with a few digits, a keyboard row, or one made of the account's own
// details (inputs: the e-mail address, the workspace's name).
func CheckPassword(p string, inputs ...string) error {
	if err := cauri.CheckPassword(p); err != nil {
		return err
	}
	if zxcvbn.PasswordStrength(p, words(inputs)).Score < MinScore {
		return cauri.Errorf(cauri.EInvalid, "This password is too easy to guess (a common password, a word with digits, or your own details): choose a longer phrase of unrelated words")
	}
	return nil
}

// words are the account's details as zxcvbn matches them: each whole, each
// of its words, and its letters and digits run together ("Boutique Adjoa"
// gives "boutique", "adjoa" and "boutiqueadjoa").
func words(inputs []string) []string {
	var out []string
	for _, in := range inputs {
		in = strings.ToLower(in)
		parts := strings.FieldsFunc(in, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		out = append(out, in, strings.Join(parts, ""))
		out = append(out, parts...)
	}
	return out
}

// HashPassword is a new password's hash as the store keeps it (bcrypt, its
// default cost), once CheckPassword accepted it (inputs as there).
func HashPassword(p string, inputs ...string) (string, error) {
	if err := CheckPassword(p, inputs...); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(p), bcrypt.DefaultCost)
	return string(h), err
}

// PasswordMatches reports whether p is the password of hash. With no hash
// (an unknown address), it compares p with a stand-in all the same, so
// that the time taken does not tell which addresses have an account.
func PasswordMatches(hash, p string) bool {
	if hash == "" {
		bcrypt.CompareHashAndPassword(standIn(), []byte(p))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(p)) == nil
}

var standIn = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("cauri-stand-in-password"), bcrypt.DefaultCost)
	return h
})

// NewToken is a new secret of the dashboard's: a session cookie, a CSRF
// token, an invitation. 32 random bytes, in lower-case base32 (URL- and
// cookie-safe).
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
