package cinetpay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

func TestCheckAmount(t *testing.T) {
	for _, tc := range []struct {
		amount int64
		cur    cauri.Currency
		want   string // "" when refused
		why    string
	}{
		{100, "XOF", "100", ""},
		{1500, "XAF", "1500", ""},
		{1502, "XOF", "", "multiple of 5"},
		{95, "XOF", "", "at least 100"},
		{0, "XOF", "", "whole number"},
		{5, "GNF", "5", ""}, // no minimum documented outside XOF and XAF
		{500, "USD", "5", ""},
		{550, "USD", "", "whole number"},
		{1000, "CDF", "1000", ""},
		{1202, "CDF", "", "multiple of 5"},
		{1000, "GHS", "", "XOF, XAF, CDF, GNF and USD"},
	} {
		got, err := checkAmount(tc.amount, tc.cur)
		if tc.want != "" {
			if got != tc.want || err != nil {
				t.Errorf("%d %s: got %q, %v; want %q", tc.amount, tc.cur, got, err, tc.want)
			}
			continue
		}
		e := gateway.ErrorOf(err)
		if e == nil || !e.NotSent || e.Transient || !strings.Contains(e.Message, tc.why) {
			t.Errorf("%d %s: got %q, %v; want a NotSent refusal saying %q", tc.amount, tc.cur, got, err, tc.why)
		}
	}
}

// TestSimulator_Refusals holds the simulator to CinetPay's refusals of an
// initiation, from the documented card request (payment_card_request.json).
func TestSimulator_Refusals(t *testing.T) {
	srv := httptest.NewServer(&Simulator{APIKey: "api-1", SiteID: "445160"})
	defer srv.Close()
	var base map[string]any
	if err := json.Unmarshal(gatewaytest.Golden(t, "payment_card_request.json"), &base); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name   string
		change map[string]any
		want   string
	}{
		{"card with every field", nil, "201"},
		{"card without an address", map[string]any{"customer_address": nil}, "624"},
		{"card without a zip code", map[string]any{"customer_zip_code": ""}, "624"},
		{"not a multiple of 5", map[string]any{"amount": 5002}, "608"},
		{"below 100 XOF", map[string]any{"amount": 95}, "641"},
		{"a currency CinetPay lacks", map[string]any{"currency": "GHS"}, "612"},
		{"wrong apikey", map[string]any{"apikey": "guess"}, "609"},
	} {
		req := map[string]any{}
		for k, v := range base {
			req[k] = v
		}
		req["transaction_id"] = strings.Repeat("x", i+1)
		for k, v := range tc.change {
			if v == nil {
				delete(req, k)
			} else {
				req[k] = v
			}
		}
		b, _ := json.Marshal(req)
		res, err := http.Post(srv.URL+"/v2/payment", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var a answer
		json.NewDecoder(res.Body).Decode(&a)
		res.Body.Close()
		if a.Code != tc.want {
			t.Errorf("%s: got %s %s; want %s", tc.name, a.Code, a.Message, tc.want)
		}
	}
}
