package accounts

import (
	"testing"

	"github.com/cauri-pay/cauri"
)

func TestCheckPassword(t *testing.T) {
	for _, tc := range []struct {
		password string
		inputs   []string
		ok       bool
	}{
		{"password12", nil, false},  // a common password with digits (issue 16)
		{"sunshine123", nil, false}, // the same
		{"qwertyuiop", nil, false},  // a keyboard row
		{"0123456789", nil, false},  // a sequence
		{"motdepasse1", nil, false}, // French for "password"
		{"boutiqueadjoa", []string{"awa@boutique-adjoa.example", "Boutique Adjoa"}, false}, // the account's own details
		{"short", nil, false},
		{"correct horse battery", nil, true},
		{"boutique adjoa 2026", nil, true},
		{"Abidjan2026!", nil, true},
	} {
		err := CheckPassword(tc.password, tc.inputs...)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPassword(%q) = %v; want ok %v", tc.password, err, tc.ok)
		}
		if err != nil && cauri.ErrorCode(err) != cauri.EInvalid {
			t.Errorf("CheckPassword(%q) code = %s; want invalid", tc.password, cauri.ErrorCode(err))
		}
	}
}
