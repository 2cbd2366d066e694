package api

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// caller is who a request with an API key speaks for.
type caller struct {
	ws  *cauri.Workspace
	key *cauri.Key
}

// livemode is the mode of the objects this caller creates and sees.
func (c *caller) livemode() bool { return c.ws.Livemode(c.key.Live) }

// keyed is a handler for a caller its API key names.
type keyed func(w http.ResponseWriter, r *http.Request, c *caller) error

// anyKey is h for a caller with a key of either kind (a public key may sit
// in a web page); secretKey, for a caller with a secret key.
func (s *API) anyKey(h keyed) httpx.Handler    { return s.withKey(true, h) }
func (s *API) secretKey(h keyed) httpx.Handler { return s.withKey(false, h) }

func (s *API) withKey(allowPublic bool, h keyed) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.authenticate(r, allowPublic)
		if err != nil {
			return err
		}
		return h(w, r, c)
	}
}

// authenticate reads the key from "Authorization: Bearer <key>" or from
// "x-api-key" (SPEC section 5). allowPublic tells whether a public key may
// call the route.
func (s *API) authenticate(r *http.Request, allowPublic bool) (*caller, error) {
	key := ""
	auth := r.Header.Get("Authorization")
	if scheme, rest, ok := strings.Cut(auth, " "); ok && strings.EqualFold(scheme, "Bearer") {
		key = strings.TrimSpace(rest)
	}
	if key == "" {
		key = strings.TrimSpace(r.Header.Get("X-Api-Key"))
	}
	if key == "" {
		if auth != "" {
			return nil, s.Refused(r, cauri.Errorf(cauri.EUnauthorized, "Invalid API Key: %s", authHint(auth)))
		}
		return nil, cauri.Errorf(cauri.EUnauthorized, "Missing API key: send it as Authorization: Bearer <key> (or x-api-key: <key>)")
	}
	if !cauri.LooksLikeKey(key) {
		return nil, s.Refused(r, cauri.Errorf(cauri.EUnauthorized, "Invalid API Key"))
	}
	ws, k, err := s.Accounts.Authenticate(r.Context(), key)
	if cauri.ErrorCode(err) == cauri.ENotFound {
		return nil, s.Refused(r, cauri.Errorf(cauri.EUnauthorized, "Invalid API Key"))
	}
	if err != nil {
		return nil, err
	}
	if k.Kind == cauri.KeyPublic && !allowPublic {
		return nil, cauri.Errorf(cauri.EUnauthorized, "This route needs a secret key; a public key may only create a checkout session and read its status and methods")
	}
	return &caller{ws: ws, key: k}, nil
}

// authHint says how to fix an Authorization header that holds no Bearer
// key: a key alone, or a key sent with Basic authentication (curl -u
// "$KEY:", as Stripe's docs do).
func authHint(auth string) string {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(auth), " ")
	switch {
	case cauri.LooksLikeKey(scheme):
		return "the key needs the Bearer scheme: Authorization: Bearer " + scheme[:min(len(scheme), 13)] + "..."
	case strings.EqualFold(scheme, "Basic"):
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err == nil {
			if user, _, _ := strings.Cut(string(b), ":"); cauri.LooksLikeKey(user) {
				return "Basic authentication is not taken (curl -u); send the key as Authorization: Bearer <key>"
			}
		}
	}
	return "send the key as Authorization: Bearer <key> (or x-api-key: <key>)"
}
