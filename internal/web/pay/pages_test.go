package pay

import (
	"html/template"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

func TestInstructionParts(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []instructionPart
	}{
		{"None", "Approve the payment on your phone to complete it",
			[]instructionPart{{Text: "Approve the payment on your phone to complete it"}}},
		{"OneCode", "Dial *110# and choose the option for a payment voucher",
			[]instructionPart{{Text: "Dial "}, {Dial: "*110#", Href: template.URL("tel:*110%23")}, {Text: " and choose the option for a payment voucher"}}},
		{"Menus", "Composez le *144*4*6#.",
			[]instructionPart{{Text: "Composez le "}, {Dial: "*144*4*6#", Href: template.URL("tel:*144*4*6%23")}, {Text: "."}}},
		{"TwoCodes", "*126# then #150*1#",
			[]instructionPart{{Dial: "*126#", Href: "tel:*126%23"}, {Text: " then "}, {Dial: "#150*1#", Href: "tel:%23150*1%23"}}},
		{"NoDigits", "Press * and # together",
			[]instructionPart{{Text: "Press * and # together"}}},
		{"Empty", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := instructionParts(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("instructionParts(%q) = %+v; want %+v", c.in, got, c.want)
			}
		})
	}
}

// TestRefusalTexts: every kind of refusal has its text, in both languages.
func TestRefusalTexts(t *testing.T) {
	for _, lang := range []string{"en", "fr"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Language", lang)
		_, texts := httpx.Language(r)
		for _, k := range gateway.Refusals {
			if texts[refusalKey(k)] == "" {
				t.Errorf("%s: refusal %q has no text (%s)", lang, k, refusalKey(k))
			}
		}
	}
	a := &cauri.PaymentAttempt{Provider: "pawapay", Reason: "INSUFFICIENT_BALANCE: The payer does not have enough funds"}
	_, en := httpx.Language(httptest.NewRequest("GET", "/", nil))
	if got := refusalText(en, a); !strings.HasPrefix(got, "Not enough money") || strings.Contains(got, "INSUFFICIENT") {
		t.Errorf("pawaPay's INSUFFICIENT_BALANCE reads %q; want the customer's words, not the code", got)
	}
}
