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

// TestCountryTabs: operators of two countries or more, none put behind
// "Other countries", are grouped by country (the chosen method's country
// open, cards apart); one country, or a country known, gives no tabs.
func TestCountryTabs(t *testing.T) {
	m := func(country, name string, chosen bool) pageMethod {
		return pageMethod{Value: country + name, Name: name, Place: country, Chosen: chosen, Card: country == "", country: country}
	}
	methods := []pageMethod{m("CI", "MTN", false), m("CI", "Wave", false), m("SN", "Orange", true), m("", "Card", false)}
	tabs := countryTabs(methods)
	if len(tabs) != 2 || tabs[0].Code != "CI" || tabs[0].Chosen || len(tabs[0].Methods) != 2 ||
		tabs[1].Code != "SN" || !tabs[1].Chosen || len(tabs[1].Methods) != 1 || !tabs[1].Methods[0].Short {
		t.Errorf("tabs = %+v; want CI (MTN, Wave) and SN (Orange, open), short labels, no card", tabs)
	}
	if methods[0].Short {
		t.Error("countryTabs changed the page's methods")
	}
	methods[2].Chosen, methods[3].Chosen = false, true // a card chosen: the first country opens
	if tabs := countryTabs(methods); len(tabs) != 2 || !tabs[0].Chosen || tabs[1].Chosen {
		t.Errorf("with a card chosen, tabs = %+v; want the first open", tabs)
	}
	if tabs := countryTabs(methods[:2]); tabs != nil {
		t.Errorf("one country: tabs = %+v; want none", tabs)
	}
	methods[2].Other = true
	if tabs := countryTabs(methods); tabs != nil {
		t.Errorf("a country known (others folded): tabs = %+v; want none", tabs)
	}
}
