package cauri

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cur  Currency
		want int64
	}{
		{"1500", "XOF", 1500},
		{"1500.0", "XOF", 1500},
		{"1e3", "XOF", 1000},
		{"12.5", "GHS", 1250},
		{"0.1", "USD", 10},
		{"19.99", "EUR", 1999},
		{"1000000000000", "NGN", 100000000000000},
	} {
		got, err := ParseAmount("amount", tc.in, tc.cur)
		if err != nil || got != tc.want {
			t.Errorf("ParseAmount(%s %s) = %d, %v; want %d", tc.in, tc.cur, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in  string
		cur Currency
	}{
		{"0", "XOF"}, {"-1", "XOF"}, {"0.5", "XOF"}, {"1.001", "GHS"}, {"abc", "XOF"}, {"1e400", "XOF"}, {"10000000000001", "NGN"},
	} {
		if _, err := ParseAmount("amount", tc.in, tc.cur); ErrorCode(err) != EInvalid {
			t.Errorf("ParseAmount(%s %s) err = %v; want invalid", tc.in, tc.cur, err)
		}
	}
}

func TestFormatAmount(t *testing.T) {
	for _, tc := range []struct {
		minor int64
		cur   Currency
		want  string
	}{
		{150050, "XOF", "150050"}, {1550, "GHS", "15.5"}, {1505, "GHS", "15.05"}, {1500, "GHS", "15"}, {7, "USD", "0.07"}, {-250, "EUR", "-2.5"},
	} {
		if got := FormatAmount(tc.minor, tc.cur); got != tc.want {
			t.Errorf("FormatAmount(%d %s) = %q; want %q", tc.minor, tc.cur, got, tc.want)
		}
	}
}

func TestParseCurrency(t *testing.T) {
	if c, err := ParseCurrency(" xof "); err != nil || c != "XOF" {
		t.Fatalf("ParseCurrency(xof) = %q, %v", c, err)
	}
	if _, err := ParseCurrency("KMF"); err == nil {
		t.Fatal("KMF is not an accepted currency")
	}
	if Currency("KMF").Exponent() != 0 || Currency("GHS").Exponent() != 2 {
		t.Fatal("wrong exponents")
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID("cs_")
		if len(id) != 35 || seen[id] {
			t.Fatalf("NewID = %q (dup %v)", id, seen[id])
		}
		seen[id] = true
	}
}

// TestNewLogID: a log's ids have NewID's shape, sort in the order of
// their times (to the millisecond, 50 years either side of now), and
// differ within one.
func TestNewLogID(t *testing.T) {
	seen := map[string]bool{}
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for range 1000 {
		id := NewLogID("evt_", base)
		if !IsID("evt_", id) || seen[id] {
			t.Fatalf("NewLogID = %q (IsID %t, dup %t)", id, IsID("evt_", id), seen[id])
		}
		seen[id] = true
	}
	var times []time.Time
	for _, ms := range []int64{0, 1, 31, 32, 1 << 40, 1<<45 - 1} {
		times = append(times, time.UnixMilli(ms))
	}
	for range 500 {
		times = append(times, base.Add(time.Duration(rand.Int64N(int64(100*365*24*time.Hour)))-50*365*24*time.Hour).Truncate(time.Millisecond))
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(times); i++ {
		a, b := NewLogID("whd_", times[i-1]), NewLogID("whd_", times[i])
		if times[i].After(times[i-1]) && strings.Compare(a, b) >= 0 {
			t.Fatalf("%s (%s) sorts after %s (%s)", a, times[i-1], b, times[i])
		}
	}
}

func TestCustomerAmount(t *testing.T) {
	for c, want := range map[Currency]string{"XOF": "15\u202f000 FCFA (XOF)", "XAF": "15\u202f000 FCFA (XAF)", "GHS": "150.00 GHS", "KES": "150.00 KES"} {
		if got := CustomerAmount(15000, c); got != want {
			t.Errorf("CustomerAmount(15000, %s) = %q; want %q", c, got, want)
		}
	}
}

func TestDisplayAmount(t *testing.T) {
	for _, tc := range []struct {
		minor int64
		c     Currency
		want  string
	}{
		{1500000, "XOF", "1\u202f500\u202f000 XOF"},
		{15000, "XOF", "15\u202f000 XOF"},
		{999, "XOF", "999 XOF"},
		{0, "XOF", "0 XOF"},
		{1550, "GHS", "15.50 GHS"},
		{5, "GHS", "0.05 GHS"},
		{123456789, "KES", "1\u202f234\u202f567.89 KES"},
		{-1550, "GHS", "-15.50 GHS"}, // was "-15.-50 GHS"
		{-1500000, "XOF", "-1\u202f500\u202f000 XOF"},
	} {
		if got := DisplayAmount(tc.minor, tc.c); got != tc.want {
			t.Errorf("DisplayAmount(%d, %s) = %q; want %q", tc.minor, tc.c, got, tc.want)
		}
	}
}
