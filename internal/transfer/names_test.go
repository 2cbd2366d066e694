package transfer

import "testing"

func TestNamesDiffer(t *testing.T) {
	for _, tc := range []struct {
		name, given, told string
		differ            bool
	}{
		{"same words, other order and case", "KOUASSI Jean", "Jean Kouassi", false},
		{"accents", "Aïssatou Ouédraogo", "AISSATOU OUEDRAOGO", false},
		{"an apostrophe", "Aya N'Guessan", "N’GUESSAN Aya", false},
		{"an apostrophe left out", "Aya N'Guessan", "Aya Nguessan", false},
		{"an initial for the given name", "J. Kouassi", "Jean Kouassi", false},
		{"an initial that is another name's", "A. Kouassi", "Jean Kouassi", true},
		{"the family name alone", "Diop", "Awa Diop", false},
		{"the given name alone", "Awa", "Awa Diop", false},
		{"the same family, another given name", "Awa Diop", "Fatou Diop", true},
		{"the same given name, another family", "Awa Diop", "Awa Ndiaye", true},
		{"nothing shared", "Moussa Traoré", "Ibrahim Koné", true},
		{"one word, nothing shared", "Kofi", "Kwame Mensah", true},
		{"a middle name more", "Adjoa Mensah", "Mensah Adjoa Serwaa", false},
		{"two given names run together", "Mamadou Abdoul Aziz Ba", "Abdoulaziz Ba", false},
		{"run together the other way", "Mamediarra Sarr", "Mame Diarra Sarr", false},
		{"a letter left out of a long name", "Ousmane Ouedrago", "Ousmane Ouédraogo", false},
		{"short names one letter apart are others", "Awa Kone", "Awa Kane", true},
		{"a hyphenated family name", "Ngozi Okonkwo-Adeyemi", "Ngozi Adeyemi", false},
		{"a title", "Mme Fatou Sow", "Fatou SOW", false},
		{"titles share nothing", "Mme Awa Sow", "Mme Fatou Diallo", true},
		{"a married name", "Awa Diop épouse Sow", "Awa Sow", false},
		{"initials only", "A. D.", "Awa Diop", true},
		{"the sandbox user", "Awa Diop", "Sand Box", true},
		{"no word to compare", "...", "Awa Diop", false},
	} {
		if got := NamesDiffer(tc.given, tc.told); got != tc.differ {
			t.Errorf("%s: NamesDiffer(%q, %q) = %v; want %v", tc.name, tc.given, tc.told, got, tc.differ)
		}
		if got := NamesDiffer(tc.told, tc.given); got != tc.differ {
			t.Errorf("%s, turned round: NamesDiffer(%q, %q) = %v; want %v", tc.name, tc.told, tc.given, got, tc.differ)
		}
	}
}

func TestOneEditApart(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"ouedraogo", "ouedrago", true}, {"coulibaly", "koulibaly", true}, {"mohamed", "mohammed", true},
		{"traore", "traore", true}, {"diallo", "diaollo", true}, {"fatou", "fatim", false}, {"sow", "sowwww", false},
	} {
		if got := oneEditApart(tc.a, tc.b); got != tc.want {
			t.Errorf("oneEditApart(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
