// Package search says what a merchant finds a payment by, in the
// dashboard's search and the export's search parameter: the normalized
// terms a session is stored with (its customer's name and each of its
// words, e-mail, order id, and the phone numbers it was given or paid
// from), and how a search as typed is read against them.
// The store keeps the terms in an index beside the sessions
// (internal/store/search.go), so a search costs what it matches, never the
// workspace's history. The session id and the aggregators' references are
// found through their own indexes.
//
// Terms are compared by prefix (three characters at least) or whole:
// "awa" finds Awa Diop and awa@example.com, "diop" finds her by her
// surname, "77 123 45 67", "+221 77 123 45 67" and "0771234567" find the
// number +221771234567. docs/dashboard.md ("Search") tells merchants.
package search

import (
	"strings"
	"unicode"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"golang.org/x/text/unicode/norm"
)

// MinPrefix is the shortest search matched as a prefix; a shorter one
// matches whole terms only (a letter alone would match a large part of
// every workspace).
const MinPrefix = 3

// maxTerm bounds a stored term (longer fields are cut: their start finds
// them).
const maxTerm = 100

// SessionTerms returns the terms a session is found by, without
// duplicates: its customer's full name and each of its words, e-mail,
// order id (metadata order_id) and phone number.
func SessionTerms(sess *cauri.Session) []string {
	var out []string
	words := Words(sess.CustomerName)
	out = append(out, strings.Join(words, " "))
	out = append(out, words...)
	out = append(out, Fold(sess.CustomerEmail))
	out = append(out, Fold(sess.Metadata["order_id"]))
	out = append(out, PhoneTerms(sess.CustomerPhone)...)
	return unique(out)
}

// PhoneTerms returns the term of a phone number in E.164: its national
// significant number (771234567 for +221771234567), which a number typed
// with or without its country code is read as (Parse).
func PhoneTerms(e164 string) []string {
	return unique([]string{catalog.NationalNumber(e164)})
}

// Query is a search as typed, read against the terms.
type Query struct {
	// Prefixes are matched as the start of a term; Exact whole.
	Prefixes, Exact []string
	// ID is the search as typed, trimmed, for what is found by its exact
	// value: a session id, a payment reference.
	ID string
}

// Parse reads a search: its folded text, its words joined when it is
// words joined by signs (a name typed with a hyphen finds the name's
// words), and, when it is a phone
// number (digits with spaces, dots, dashes), its national significant
// number when it is international (a leading + or 00), else its digits
// with and without leading zeros (a trunk prefix). Each is a prefix when
// MinPrefix characters long, otherwise a whole term.
func Parse(q string) Query {
	q = strings.TrimSpace(q)
	out := Query{ID: q}
	forms := []string{Fold(q)}
	if joinsWords(forms[0]) {
		forms = append(forms, strings.Join(Words(q), " "))
	}
	if digits, international, ok := phoneDigits(q); ok {
		if nsn := catalog.NationalNumber("+" + digits); international && nsn != "" {
			forms = append(forms, nsn)
		} else {
			forms = append(forms, digits, strings.TrimLeft(digits, "0"))
		}
	}
	for _, f := range unique(forms) {
		if len([]rune(f)) >= MinPrefix {
			out.Prefixes = append(out.Prefixes, f)
		} else {
			out.Exact = append(out.Exact, f)
		}
	}
	return out
}

// joinsWords reports whether a folded search is words joined by a sign
// between letters ("jean-paul", "n'diaye", "a.diop"), which a name's words
// match; an e-mail, a reference or a sign at either end ("ord-") is
// searched as written only.
func joinsWords(q string) bool {
	r := []rune(q)
	joined := false
	for i, c := range r {
		if unicode.IsLetter(c) || unicode.IsDigit(c) || c == ' ' {
			continue
		}
		if c == '@' || i == 0 || i == len(r)-1 || !unicode.IsLetter(r[i-1]) || !unicode.IsLetter(r[i+1]) {
			return false
		}
		joined = true
	}
	return joined
}

// phoneDigits is a search's digits when it is written as a phone number:
// at least 6 digits, separated by nothing but spaces, dots, dashes and
// brackets; international when it starts with + or 00 (dropped).
func phoneDigits(q string) (digits string, international, ok bool) {
	international = strings.HasPrefix(q, "+")
	q = strings.TrimPrefix(q, "+")
	var b strings.Builder
	for _, r := range q {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '.' || r == '-' || r == '(' || r == ')':
		default:
			return "", false, false
		}
	}
	d := b.String()
	if !international && strings.HasPrefix(d, "00") && len(d) > 8 {
		d, international = d[2:], true
	}
	return d, international, len(d) >= 6
}

// Fold is a field as it is compared: trimmed, lower case, without accents,
// single spaces, at most maxTerm characters.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.TrimSpace(s)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return cut(strings.Join(strings.Fields(b.String()), " "))
}

// Words cuts a text into lower-case words without accents: letters and
// digits; an apostrophe joins ("N'Diaye" is one word), anything else
// separates.
func Words(s string) []string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == '\'' || r == '’' || r == 'ʼ' || r == '`' || r == '‘':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

func cut(s string) string {
	if r := []rune(s); len(r) > maxTerm {
		return string(r[:maxTerm])
	}
	return s
}

// unique drops empty and repeated terms, keeping the order, each cut to
// maxTerm.
func unique(terms []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		t = cut(t)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
