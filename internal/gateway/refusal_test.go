package gateway

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	got := Words("failed: insufficient-funds: The wallet does not have enough funds. 602 NOT_ENOUGH_FUNDS.")
	want := []string{"FAILED", "INSUFFICIENT-FUNDS", "THE", "WALLET", "DOES", "NOT", "HAVE", "ENOUGH", "FUNDS", "602", "NOT_ENOUGH_FUNDS"}
	if !slices.Equal(got, want) {
		t.Errorf("Words = %q; want %q", got, want)
	}
}

func TestRefusalByCode(t *testing.T) {
	table := map[string]Refusal{"INSUFFICIENT_BALANCE": RefusalFunds, "PAYER_NOT_FOUND": RefusalNumber}
	for reason, want := range map[string]Refusal{
		"INSUFFICIENT_BALANCE: The payer does not have enough funds": RefusalFunds,
		"payer_not_found":                RefusalNumber,
		"UNSPECIFIED_FAILURE: no reason": RefusalOther,
		"":                               RefusalOther,
		"not started: gateway: connection refused": RefusalUnavailable,
		"INSUFFICIENT_BALANCE_SOMETHING":           RefusalOther, // a word, not a part of one
	} {
		if got := RefusalByCode(reason, table); got != want {
			t.Errorf("RefusalByCode(%q) = %q; want %q", reason, got, want)
		}
	}
}

func TestRefusalByPhrase(t *testing.T) {
	phrases := []Phrase{{"insufficient", RefusalFunds}, {"abandoned", RefusalNotApproved}}
	for reason, want := range map[string]Refusal{
		"failed: Insufficient Funds":     RefusalFunds,
		"abandoned: Insufficient Funds":  RefusalFunds, // the cause wins over the status
		"abandoned":                      RefusalNotApproved,
		"failed: Declined":               RefusalOther,
		"not started: no answer in 15 s": RefusalUnavailable,
	} {
		if got := RefusalByPhrase(reason, phrases); got != want {
			t.Errorf("RefusalByPhrase(%q) = %q; want %q", reason, got, want)
		}
	}
}
