package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const secret = "svc_test_sec_abcdefghijklmnopqrstuvwxyz234567"

func TestSignVerify(t *testing.T) {
	at := time.Unix(1795000000, 0)
	body := []byte(`{"id":"evt_1","event":"payment.completed"}`)
	h := http.Header{}
	Sign(h, []string{secret}, "whd_1", "payment.completed", at, body)
	if h.Get(HeaderTimestamp) != "1795000000" || h.Get("User-Agent") != UserAgent || h.Get(HeaderDelivery) != "whd_1" {
		t.Fatalf("headers = %v", h)
	}
	// The SPEC's algorithm, written out: hex HMAC-SHA256 of "<ts>.<body>".
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("1795000000." + string(body)))
	if want := "t=1795000000,v1=" + hexOf(mac.Sum(nil)); h.Get(HeaderSignature) != want {
		t.Fatalf("signature = %q; want %q", h.Get(HeaderSignature), want)
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		secret string
		now    time.Time
		sig    string
		want   error
	}{
		{"OK", body, secret, at.Add(time.Minute), "", nil},
		{"OKJustWithinTolerance", body, secret, at.Add(Tolerance), "", nil},
		{"ErrTooOld", body, secret, at.Add(Tolerance + time.Second), "", ErrTooOld},
		{"ErrFromTheFuture", body, secret, at.Add(-Tolerance - time.Second), "", ErrTooOld},
		{"ErrOtherKey", body, "svc_live_sec_other", at, "", ErrBadSignature},
		{"ErrBodyChanged", []byte(`{"id":"evt_1", "event":"payment.completed"}`), secret, at, "", ErrBadSignature},
		{"ErrNoHeader", body, secret, at, "-", ErrNoSignature},
		{"ErrGarbled", body, secret, at, "t=x,v1=zz", ErrNoSignature},
		{"RotatedKeys", body, secret, at, "t=1795000000,v1=00ff," + strings.TrimPrefix(h.Get(HeaderSignature), "t=1795000000,"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hh := h.Clone()
			switch tc.sig {
			case "":
			case "-":
				hh.Del(HeaderSignature)
			default:
				hh.Set(HeaderSignature, tc.sig)
			}
			if err := Verify(tc.body, hh, tc.secret, tc.now); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v; want %v", err, tc.want)
			}
		})
	}
}

// TestStandardWebhooks checks the Standard Webhooks signature the way that
// specification's libraries do: base64 HMAC-SHA256, keyed with the decoded
// whsec_ secret, of "<id>.<timestamp>.<body>".
func TestStandardWebhooks(t *testing.T) {
	body := []byte(`{"a":1}`)
	h := http.Header{}
	Sign(h, []string{secret}, "whd_9", "payment.failed", time.Unix(1795000000, 0), body)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(StandardSecret(secret), "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("whd_9.1795000000." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if h.Get("webhook-signature") != want || h.Get("webhook-id") != "whd_9" || h.Get("webhook-timestamp") != "1795000000" {
		t.Fatalf("standard headers = %q %q %q; want signature %q", h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), want)
	}
}

// TestSignAfterRoll: signed with the new key and the old one (during a
// roll's grace period), a request verifies with either and with no other.
func TestSignAfterRoll(t *testing.T) {
	const old = "svc_live_sec_oldoldoldoldoldoldold"
	at := time.Unix(1795000000, 0)
	body := []byte(`{"id":"evt_2"}`)
	h := http.Header{}
	Sign(h, []string{secret, old}, "whd_2", "payment.completed", at, body)
	if n := strings.Count(h.Get(HeaderSignature), "v1="); n != 2 {
		t.Fatalf("signature = %q; want two v1 entries", h.Get(HeaderSignature))
	}
	for _, k := range []string{secret, old} {
		if err := Verify(body, h, k, at); err != nil {
			t.Errorf("Verify with %s: %v", k[:13], err)
		}
	}
	if err := Verify(body, h, "svc_live_sec_third", at); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify with another key = %v; want ErrBadSignature", err)
	}
	if parts := strings.Split(h.Get(HeaderStandardSignature), " "); len(parts) != 2 || !strings.HasPrefix(parts[1], "v1,") {
		t.Errorf("webhook-signature = %q; want two space-separated entries", h.Get(HeaderStandardSignature))
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func BenchmarkSign(b *testing.B) {
	body := []byte(strings.Repeat(`{"id":"evt_1","event":"payment.completed","data":{}}`, 12)) // a webhook's size
	at := time.Unix(1795000000, 0)
	b.ReportAllocs()
	for b.Loop() {
		Sign(http.Header{}, []string{secret}, "whd_1", "payment.completed", at, body)
	}
}

func BenchmarkVerify(b *testing.B) {
	body := []byte(strings.Repeat(`{"id":"evt_1","event":"payment.completed","data":{}}`, 12))
	at := time.Unix(1795000000, 0)
	h := http.Header{}
	Sign(h, []string{secret}, "whd_1", "payment.completed", at, body)
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(body, h, secret, at); err != nil {
			b.Fatal(err)
		}
	}
}
