// Package accounts holds the rules of the dashboard's accounts that need
// more than the domain's standard library: a new password must be hard to
// guess, judged by zxcvbn (its embedded lists of common passwords, words
// and names, and its patterns: keyboard rows, dates, repeats).
//
// It imports the domain and zxcvbn.
package accounts

import (
	"strings"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/trustelem/zxcvbn"
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
