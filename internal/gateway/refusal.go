package gateway

import (
	"strings"
	"unicode"
)

// Refusal is what a failed payment means for the customer who tried it,
// in a few kinds the hosted page words in the customer's language: what
// happened and what to do. The aggregator's own words (Status.Reason)
// stay on the attempt, for the merchant.
type Refusal string

const (
	// RefusalOther: anything else, or a reason not understood: "the
	// payment could not be completed".
	RefusalOther Refusal = ""
	// RefusalFunds: not enough money in the wallet (top up, try again).
	RefusalFunds Refusal = "insufficient_funds"
	// RefusalNotApproved: the customer declined or cancelled the prompt,
	// did not answer it in time, or gave a wrong PIN or code (approve the
	// prompt on the phone, or try again).
	RefusalNotApproved Refusal = "not_approved"
	// RefusalNumber: no Mobile Money account on this number, or a number
	// the operator does not take (check the number).
	RefusalNumber Refusal = "wrong_number"
	// RefusalLimit: a limit of the wallet reached, or an amount outside the
	// operator's bounds (a smaller amount, or another wallet).
	RefusalLimit Refusal = "limit"
	// RefusalUnavailable: the operator's or the aggregator's service did
	// not take the payment for now (try again later, or another operator).
	RefusalUnavailable Refusal = "unavailable"
)

// Refusals lists the kinds, RefusalOther last.
var Refusals = []Refusal{RefusalFunds, RefusalNotApproved, RefusalNumber, RefusalLimit, RefusalUnavailable, RefusalOther}

// NotStarted is how the service begins the reason of an attempt the
// aggregator never received (it could not be reached, or answered
// nothing usable): the customer reads that the service is unavailable.
const NotStarted = "not started: "

// RefusalByCode is the kind table gives the first word of reason it
// knows, words being runs of letters, digits, '_', '-' and '.' compared in
// upper case (an aggregator's codes: INSUFFICIENT_BALANCE, 602,
// insufficient-funds). A reason the service gave for a payment never
// started is RefusalUnavailable; no known word is RefusalOther.
func RefusalByCode(reason string, table map[string]Refusal) Refusal {
	if strings.HasPrefix(reason, NotStarted) {
		return RefusalUnavailable
	}
	for _, w := range Words(reason) {
		if r, ok := table[w]; ok {
			return r
		}
	}
	return RefusalOther
}

// RefusalByPhrase is the kind of the first of phrases (in lower case)
// reason contains, for aggregators that give words rather than codes;
// RefusalOther when none. Phrases are tried in order: put the longer
// first.
func RefusalByPhrase(reason string, phrases []Phrase) Refusal {
	if strings.HasPrefix(reason, NotStarted) {
		return RefusalUnavailable
	}
	lower := strings.ToLower(reason)
	for _, p := range phrases {
		if strings.Contains(lower, p.Words) {
			return p.Refusal
		}
	}
	return RefusalOther
}

// Phrase is words an aggregator uses for a kind of refusal.
type Phrase struct {
	Words   string
	Refusal Refusal
}

// Words splits a reason into its words, upper-cased, as RefusalByCode
// compares them.
func Words(reason string) []string {
	words := strings.FieldsFunc(strings.ToUpper(reason), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
	})
	out := words[:0]
	for _, w := range words {
		if w = strings.Trim(w, ".-"); w != "" {
			out = append(out, w) // a sentence's full stop is not the code's
		}
	}
	return out
}
