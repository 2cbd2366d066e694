package pay

import (
	"html/template"
	"reflect"
	"testing"
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
