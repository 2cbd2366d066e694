// Package webhook signs and verifies Cauri's webhook requests. Receivers
// import it to check that a request comes from Cauri:
//
//	body, _ := io.ReadAll(r.Body) // the raw body: never re-serialised JSON
//	if err := webhook.Verify(body, r.Header, os.Getenv("CAURI_SECRET_KEY"), time.Now()); err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
//
// The signature (SPEC section 6) is X-Service-Signature: t=<unix>,v1=<hex>,
// where v1 is the HMAC-SHA256, keyed with the workspace's secret key of the
// event's mode, of "<unix>.<raw body>". Each request also carries the
// Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature), verifiable with that specification's libraries using
// StandardSecret(secret key).
//
// It imports only the standard library.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of a webhook request.
const (
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery" // the same on every attempt: deduplicate on it
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderSignature = "X-Service-Signature"
	UserAgent       = "Cauri-Webhooks/2"

	// Standard Webhooks (standardwebhooks.com) equivalents.
	HeaderStandardID        = "Webhook-Id"
	HeaderStandardTimestamp = "Webhook-Timestamp"
	HeaderStandardSignature = "Webhook-Signature"
)

// Tolerance is how far a request's timestamp may be from the receiver's
// clock: older requests are replays.
const Tolerance = 5 * time.Minute

// Errors of Verify.
var (
	ErrNoSignature  = errors.New("webhook: no valid " + HeaderSignature + " header")
	ErrBadSignature = errors.New("webhook: signature does not match the body")
	ErrTooOld       = errors.New("webhook: timestamp is more than 5 minutes from now")
)

// Signature returns the v1 signature: hex HMAC-SHA256 of "<ts>.<body>".
func Signature(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// StandardSecret is the Standard Webhooks form of a secret key: "whsec_"
// followed by the key's bytes in base64.
func StandardSecret(secret string) string {
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret))
}

// Sign sets every header of a webhook request: the event, the delivery id,
// the timestamp and both signatures, for body sent at t. Each secret adds a
// signature (a v1 entry; a space-separated Standard Webhooks entry): right
// after a key roll the request is signed with the new key and with the old
// one while it stays valid, so receivers holding either accept it.
func Sign(h http.Header, secrets []string, deliveryID, event string, t time.Time, body []byte) {
	ts := t.Unix()
	h.Set("User-Agent", UserAgent)
	h.Set("Content-Type", "application/json")
	h.Set(HeaderEvent, event)
	h.Set(HeaderDelivery, deliveryID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	sig := []string{"t=" + strconv.FormatInt(ts, 10)}
	var standard []string
	for _, secret := range secrets {
		sig = append(sig, "v1="+Signature(secret, ts, body))
		mac := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(mac, "%s.%d.", deliveryID, ts)
		mac.Write(body)
		standard = append(standard, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	h.Set(HeaderSignature, strings.Join(sig, ","))
	h.Set(HeaderStandardID, deliveryID)
	h.Set(HeaderStandardTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderStandardSignature, strings.Join(standard, " "))
}

// Verify checks a received request: the X-Service-Signature of body (the
// raw bytes received) under secret, in constant time, and a timestamp
// within Tolerance of now. Several v1 entries are accepted, any matching.
func Verify(body []byte, h http.Header, secret string, now time.Time) error {
	var ts int64 = -1
	var sigs [][]byte
	for _, part := range strings.Split(h.Get(HeaderSignature), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				ts = n
			}
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	if ts < 0 || len(sigs) == 0 {
		return ErrNoSignature
	}
	want, _ := hex.DecodeString(Signature(secret, ts, body))
	matched := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			matched = true
		}
	}
	if !matched {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return ErrTooOld
	}
	return nil
}
