package cinetpay

import (
	"bytes"
	"context"
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

// TestCheckOutcome holds every code of CinetPay's table (checkout/tableau)
// and the payment statuses to an outcome, so that no payment is left
// unable to conclude.
func TestCheckOutcome(t *testing.T) {
	const (
		lasting   = "lasting"
		transient = "transient"
	)
	cases := map[string]string{"00": string(gateway.Succeeded)}
	for code := range waitingCodes {
		cases[code] = string(gateway.Pending)
	}
	for code := range refusedCodes {
		cases[code] = string(gateway.Failed)
	}
	for code := range lastingCodes {
		cases[code] = lasting
	}
	for code := range requestCodes {
		cases[code] = transient
	}
	table := []string{"00", "201", "600", "602", "603", "604", "606", "608", "609", "610", "611", "612", "613", "614", "615", "616",
		"617", "618", "619", "620", "621", "622", "623", "624", "625", "626", "627", "628", "635", "636", "637", "641", "642", "662",
		"663", "664", "804", "807", "808", "809", "810", "811", "812"}
	for _, code := range table {
		want, ok := cases[code]
		if !ok {
			t.Errorf("code %s of CinetPay's table has no outcome", code)
			continue
		}
		st, err := checkOutcome(http.StatusOK, answer{Code: code, Message: "M"}, checkData{})
		got := string(st.Outcome)
		if e := gateway.ErrorOf(err); e != nil {
			got = lasting
			if e.Transient {
				got = transient
			}
		}
		if got != want {
			t.Errorf("code %s: got %s (%v); want %s", code, got, err, want)
		}
	}
	for _, tc := range []struct {
		code, status string
		want         gateway.Outcome
	}{
		{"662", "WAITING_FOR_CUSTOMER", gateway.Pending},
		{"604", "WAITING_FOR_CUSTOMER", gateway.Pending}, // a wrong code the customer may enter again
		{"600", "REFUSED", gateway.Failed},
		{"627", "REFUSED", gateway.Failed},
		{"00", "ACCEPTED", gateway.Succeeded},
	} {
		if st, err := checkOutcome(http.StatusOK, answer{Code: tc.code}, checkData{Status: tc.status}); err != nil || st.Outcome != tc.want {
			t.Errorf("%s %s: got %+v, %v; want %s", tc.code, tc.status, st, err, tc.want)
		}
	}
	if _, err := checkOutcome(http.StatusOK, answer{Code: "00"}, checkData{Status: "REFUSED"}); err == nil {
		t.Errorf("00 with REFUSED: no error; want one (CinetPay contradicts itself)")
	}
	if st, err := checkOutcome(http.StatusNotFound, answer{Code: "404", Message: "TRANSACTION_NOT_FOUND"}, checkData{}); err != nil || st.Outcome != gateway.NotFound {
		t.Errorf("unknown transaction: got %+v, %v; want not found", st, err)
	}
}

func TestDecodeCheck_Golden(t *testing.T) {
	srv := gatewaytest.NewAnswers(t)
	c := &Client{BaseURL: srv.URL, APIKey: "k", SiteID: "1"}
	for _, tc := range []struct {
		file string
		want gateway.Outcome
		ref  string
	}{
		{"check_waiting.json", gateway.Pending, ""},
		{"check_success_short.json", gateway.Succeeded, "8210407187720"},
		{"check_accepted.json", gateway.Succeeded, "MP220117.1402.C99563"},
		{"check_refused.json", gateway.Failed, ""},
	} {
		srv.Set("", http.StatusOK, gatewaytest.Golden(t, tc.file))
		st, err := c.CollectionStatus(context.Background(), gateway.Ref{Reference: "r"})
		if err != nil || st.Outcome != tc.want || st.ProviderRef != tc.ref {
			t.Errorf("%s: got %+v, %v; want %s %q", tc.file, st, err, tc.want, tc.ref)
		}
	}
	srv.Set("", http.StatusOK, gatewaytest.Golden(t, "payment_error.json"))
	st, err := c.Collect(context.Background(), gateway.Collection{Reference: "r", Amount: 100, Currency: "XOF"})
	if err != nil || st.Outcome != gateway.Failed || !strings.Contains(st.Reason, "608 MINIMUM_REQUIRED_FIELDS") {
		t.Errorf("refused initiation: got %+v, %v; want failed with CinetPay's words", st, err)
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
