// Package httpx is the request and response layer the web's three
// audiences share (the JSON API in api, the hosted payment pages in pay,
// the dashboard in dashboard): a handler that returns its error, the error
// table (domain code -> HTTP status) and the two error shapes, JSON bodies
// read strictly, the client's address behind trusted proxies, the rate
// limits, and what every HTML page shares (its layout, stylesheet, script,
// security headers and language), and QR code images (a link's address).
//
// It imports the domain, the rate limiter and the QR drawer, and nothing
// of the services.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/ratelimit"
)

// Handler is an HTTP handler that returns its error; the route's Shape
// writes it.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Shape writes an error's answer: its status, client-safe message and, when
// it has one, machine-readable reason.
type Shape func(w http.ResponseWriter, status int, msg, reason string)

// Mux is what the audiences register their routes on: the server's
// ServeMux, or its recorder of patterns (the 405's Allow).
type Mux interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// APIError is the shape of SPEC section 7: {"error": "..."}, with "code"
// when the error has a reason. A 401 and a 429 always have one, the codes
// SPEC section 7 gives them on the transfer routes (unauthorized,
// rate_limited), so that a client library reads them the same way on
// every route.
func APIError(w http.ResponseWriter, status int, msg, reason string) {
	if reason == "" {
		reason = defaultReasons[status]
	}
	body := map[string]string{"error": msg}
	if reason != "" {
		body["code"] = reason // SPEC section 7: transfers and a few others
	}
	WriteJSON(w, status, body)
}

var defaultReasons = map[int]string{http.StatusUnauthorized: "unauthorized", http.StatusTooManyRequests: "rate_limited"}

// PageError is the shape of the sandbox route and the payment page's
// script: {"success": false, "message": "..."}.
func PageError(w http.ResponseWriter, status int, msg, _ string) {
	WriteJSON(w, status, map[string]any{"success": false, "message": msg})
}

// statusOf is the one table from the domain's error codes to HTTP statuses.
var statusOf = map[string]int{
	cauri.EInvalid:          http.StatusBadRequest,
	cauri.EUnauthorized:     http.StatusUnauthorized,
	cauri.EForbidden:        http.StatusForbidden,
	cauri.ENotFound:         http.StatusNotFound,
	cauri.EConflict:         http.StatusConflict,
	cauri.ETooLarge:         http.StatusRequestEntityTooLarge,
	cauri.EUnsupported:      http.StatusUnsupportedMediaType,
	cauri.EUnprocessable:    http.StatusUnprocessableEntity,
	cauri.ERateLimited:      http.StatusTooManyRequests,
	cauri.EInternal:         http.StatusInternalServerError,
	cauri.EBadGateway:       http.StatusBadGateway,
	cauri.EPayment:          http.StatusPaymentRequired,
	cauri.EUnavailable:      http.StatusServiceUnavailable,
	cauri.EMethodNotAllowed: http.StatusMethodNotAllowed,
}

// Status is the HTTP status of an error (500 for any that is not a
// *cauri.Error).
func Status(err error) int { return statusOf[cauri.ErrorCode(err)] }

// Kit is what every audience's handlers share: where errors are logged,
// the rate limiter, and the proxies whose X-Forwarded-For is believed.
type Kit struct {
	Logger         *slog.Logger
	Limiter        ratelimit.Limiter
	TrustedProxies []netip.Prefix
}

// API and Page adapt a handler to http.Handler with the route's error
// shape: the API's, or the hosted pages' (their script reads it).
func (k *Kit) API(h Handler) http.Handler  { return k.Wrap(h, APIError) }
func (k *Kit) Page(h Handler) http.Handler { return k.Wrap(h, PageError) }

// Wrap adapts a handler, answering its error in shape.
func (k *Kit) Wrap(h Handler, shape Shape) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			k.WriteError(w, r, err, shape)
		}
	})
}

// WriteError answers with the error's status and client-safe message. An
// error that is not a *cauri.Error is internal: logged with its cause, and
// answered with a generic message.
func (k *Kit) WriteError(w http.ResponseWriter, r *http.Request, err error, shape Shape) {
	code := cauri.ErrorCode(err)
	if code == cauri.EInternal {
		if errors.Is(err, context.Canceled) {
			return // the client went away; nobody reads the answer
		}
		k.Logger.ErrorContext(r.Context(), "internal error", "err", err, "method", r.Method, "path", LoggedPath(r), "request_id", RequestID(r))
	}
	if cauri.ErrorReason(err) == "idempotency_key_in_use" {
		w.Header().Set("Retry-After", "1") // the first request of the key is still running
	}
	var later *retryLater
	if errors.As(err, &later) {
		w.Header().Set("Retry-After", strconv.Itoa(later.after))
	}
	shape(w, statusOf[code], cauri.ErrorMessage(err), cauri.ErrorReason(err))
}

// WriteJSON answers v as JSON, HTML characters left as they are.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

type ctxKey int

const requestIDKey ctxKey = 0

// WithRequestID is ctx carrying the request's id (the X-Request-Id header).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestID is the id the server gave the request, for the logs.
func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

// maxLoggedSegment is how much of a callback address's segment the logs
// keep (Cauri's own are about 70 bytes before their token).
const maxLoggedSegment = 120

// LoggedPath is the request's path as logs show it: an invitation's token
// (a secret, like a key) and a callback result address's token replaced.
func LoggedPath(r *http.Request) string {
	if t := r.PathValue("token"); t != "" {
		return strings.Replace(r.URL.Path, t, "[token]", 1)
	}
	if seg := r.PathValue("segment"); seg != "" {
		// A result address's segment (/callbacks/{gatewayId}/{segment}):
		// its last part is a token that would let a reader forge a result.
		keep := ""
		if i := strings.LastIndexByte(seg, '.'); i >= 0 {
			keep = seg[:i+1]
		}
		if len(keep) > maxLoggedSegment { // not one of ours: its start will do
			keep = keep[:maxLoggedSegment] + "..."
		}
		return strings.Replace(r.URL.Path, seg, keep+"[token]", 1)
	}
	return r.URL.Path
}

// ClientIP is the socket's address, unless that address is a trusted proxy:
// then X-Forwarded-For is read from the right, skipping trusted proxies, and
// the first untrusted address is the client.
func (k *Kit) ClientIP(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	ip := ap.Addr().Unmap()
	if !k.trusted(ip) {
		return ip
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := parseHop(strings.TrimSpace(hops[i]))
		if err != nil {
			break // "unknown" or garbled: nothing to its left can be believed
		}
		ip = hop.Unmap()
		if !k.trusted(ip) {
			return ip
		}
	}
	return ip
}

// parseHop reads one X-Forwarded-For entry: an address, or an address and a
// port ("1.2.3.4:5678", "[2001:db8::1]:443").
func parseHop(h string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip, nil
	}
	ap, err := netip.ParseAddrPort(h)
	return ap.Addr(), err
}

func (k *Kit) trusted(ip netip.Addr) bool {
	for _, p := range k.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// LimitByIP takes one request from the client IP's budget. Over it, the
// answer is 429 with Retry-After in seconds. A limiter that fails lets the
// request through: a broken limiter must not stop payments.
func (k *Kit) LimitByIP(w http.ResponseWriter, r *http.Request, l ratelimit.Limit) error {
	return k.Limit(w, r, l, "per IP", ratelimit.IPKey(k.ClientIP(r)), "")
}

// PerIP is h behind LimitByIP: the routes show their limit this way.
func (k *Kit) PerIP(l ratelimit.Limit, h Handler) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := k.LimitByIP(w, r, l); err != nil {
			return err
		}
		return h(w, r)
	}
}

// Limit takes one request from key's budget under l (scope says whose:
// "per IP", "per workspace"); over it, the answer is 429 with Retry-After,
// and reason as its code when given.
func (k *Kit) Limit(w http.ResponseWriter, r *http.Request, l ratelimit.Limit, scope, key, reason string) error {
	retryAfter, err := k.Take(r.Context(), l, scope, key, reason)
	if err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	return err
}

// Take is Limit without a response to set Retry-After on (an item of a
// batch): over the budget, the 429 error and the seconds to wait, which its
// message says too.
func (k *Kit) Take(ctx context.Context, l ratelimit.Limit, scope, key, reason string) (retryAfter int, err error) {
	d, err := k.Limiter.Allow(ctx, l, key)
	if err != nil {
		k.Logger.WarnContext(ctx, "rate limiter failed; request let through", "err", err, "limit", l.Name)
		return 0, nil
	}
	if d.Allowed {
		return 0, nil
	}
	per := "per " + l.Per.String()
	switch l.Per {
	case time.Minute:
		per = "a minute"
	case time.Hour:
		per = "an hour"
	}
	return d.RetryAfterSeconds(), cauri.Reasonf(cauri.ERateLimited, reason, "Too many requests: at most %d %s %s; retry after %d seconds",
		l.Count, per, scope, d.RetryAfterSeconds())
}

// Refused counts a refused credential against its sender's address and
// returns the refusal, or, past LimitRefused, a 429 with Retry-After: a key
// or a secret cannot be guessed at speed. Accepted credentials take nothing
// from this budget.
func (k *Kit) Refused(r *http.Request, refusal error) error {
	d, err := k.Limiter.Allow(r.Context(), LimitRefused, ratelimit.IPKey(k.ClientIP(r)))
	if err != nil || d.Allowed {
		return refusal
	}
	return &retryLater{after: d.RetryAfterSeconds(), err: cauri.Errorf(cauri.ERateLimited,
		"Too many refused keys or secrets from this address: at most %d a minute; retry after %d seconds", LimitRefused.Count, d.RetryAfterSeconds())}
}

// retryLater is an error answered with a Retry-After header.
type retryLater struct {
	after int
	err   error
}

func (e *retryLater) Error() string { return e.err.Error() }
func (e *retryLater) Unwrap() error { return e.err }
