package transfer

import "github.com/cauri-pay/cauri/internal/search"

// NamesDiffer reports whether the name a merchant gave for a recipient
// and the name the aggregator tells for the account clearly differ: the
// rule of recipient_name_check (docs/transfers.md). Both are cut into
// words, ignoring case, accents, punctuation, titles and order; an
// apostrophe joins (N'Guessan is nguessan). Two words match when they are
// equal, when one is two adjacent words of the other name run together
// (Abdoulaziz, Abdoul Aziz), or, five letters or longer, when one letter
// added, removed or changed makes them equal (Ouedrago, Ouedraogo); a
// single letter (an initial) matches a word it begins. The names clearly
// differ when no word matches, or when both have two words or more and
// fewer than two match: a shared family name with another given name
// (Awa Diop, Fatou Diop) differs; a name and an initial (J. Kouassi, Jean
// Kouassi) does not. A name without a word differs from nothing.
func NamesDiffer(given, told string) bool {
	a, b := nameWords(given), nameWords(told)
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	usedA, usedB := make([]bool, len(a)), make([]bool, len(b))
	words := 0
	pair := func(i, j int) { usedA[i], usedB[j] = true, true; words++ }
	for i := range a { // equal words
		for j := range b {
			if !usedA[i] && !usedB[j] && len(a[i]) > 1 && a[i] == b[j] {
				pair(i, j)
			}
		}
	}
	// two adjacent words run together, either way
	joined := func(x []string, usedX []bool, y []string, usedY []bool) {
		for i := range x {
			for j := 0; j+1 < len(y); j++ {
				if usedX[i] || usedY[j] || usedY[j+1] || x[i] != y[j]+y[j+1] {
					continue
				}
				usedX[i], usedY[j], usedY[j+1] = true, true, true
				words++
			}
		}
	}
	joined(a, usedA, b, usedB)
	joined(b, usedB, a, usedA)
	for i := range a { // one letter apart
		for j := range b {
			if !usedA[i] && !usedB[j] && len(a[i]) >= 5 && len(b[j]) >= 5 && oneEditApart(a[i], b[j]) {
				pair(i, j)
			}
		}
	}
	initials := 0
	for i := range a {
		for j := range b {
			if usedA[i] || usedB[j] || (len(a[i]) > 1 && len(b[j]) > 1) || a[i][0] != b[j][0] {
				continue
			}
			usedA[i], usedB[j] = true, true
			initials++
		}
	}
	if words == 0 {
		return true
	}
	return len(a) >= 2 && len(b) >= 2 && words+initials < 2
}

// titles are words of a name that name no one: civilities, and the words
// that introduce a married name.
var titles = map[string]bool{"mr": true, "mrs": true, "ms": true, "mme": true, "mlle": true, "dr": true, "pr": true,
	"epouse": true, "epse": true, "ep": true, "veuve": true, "vve": true, "nee": true}

// nameWords cuts a name into lower-case words without accents
// (search.Words), titles dropped.
func nameWords(name string) []string {
	var out []string
	for _, w := range search.Words(name) {
		if !titles[w] {
			out = append(out, w)
		}
	}
	return out
}

// HasNameWords reports whether a name has a word NamesDiffer can compare.
func HasNameWords(name string) bool { return len(nameWords(name)) > 0 }

// oneEditApart reports whether one letter added, removed or changed makes
// a equal to b.
func oneEditApart(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if len(x) < len(y) {
		x, y = y, x
	}
	if len(x)-len(y) > 1 {
		return false
	}
	i := 0
	for i < len(y) && x[i] == y[i] {
		i++
	}
	switch {
	case i == len(x): // equal
		return true
	case len(x) == len(y): // one changed
		return string(x[i+1:]) == string(y[i+1:])
	}
	return string(x[i+1:]) == string(y[i:]) // one added
}
