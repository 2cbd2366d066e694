package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Text is a JSON string, or a number taken as its text; null is "". Some
// aggregators write one field either way (M-Pesa's ResultCode, MTN MoMo's
// amounts).
type Text string

func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(strings.TrimSpace(s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("neither a string nor a number")
	}
	*t = Text(n)
	return nil
}

// TokenMargin is how long before its expiry an access token is renewed, so
// that a call made with it does not reach the aggregator after it expired.
const TokenMargin = time.Minute

// Tokens caches a connector's access tokens by name (an API product, or ""
// for the only one), for the aggregators that issue them for a while (MTN
// MoMo, M-Pesa): each is used until TokenMargin before it expires.
type Tokens struct {
	mu sync.Mutex
	m  map[string]cachedToken
	// fetching is held while a token is fetched, so that concurrent calls
	// that find none share the one fetched (the aggregators limit how
	// often tokens may be asked for).
	fetching sync.Mutex
}

type cachedToken struct {
	value string
	until time.Time
}

// Get returns name's token at now, asking fetch for a new one (the token
// and how many seconds it lives) when there is none or it is about to
// expire. When fetch fails the request the token was for was never sent:
// the error says so (NotSent).
func (t *Tokens) Get(ctx context.Context, name string, now time.Time, fetch func(context.Context) (string, int64, error)) (string, error) {
	if v, ok := t.cached(name, now); ok {
		return v, nil
	}
	t.fetching.Lock()
	defer t.fetching.Unlock()
	if v, ok := t.cached(name, now); ok { // fetched by a call that came first
		return v, nil
	}
	value, secs, err := fetch(ctx)
	if err != nil {
		e := ErrorOf(err)
		if e == nil {
			return "", &Error{NotSent: true, Message: err.Error()}
		}
		return "", &Error{Transient: e.Transient, NotSent: true, Answered: e.Answered, Message: e.Message}
	}
	life := time.Duration(min(max(secs, 0), 86400)) * time.Second
	if life > 2*TokenMargin {
		life -= TokenMargin
	} else {
		life /= 2
	}
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]cachedToken{}
	}
	t.m[name] = cachedToken{value: value, until: now.Add(life)}
	t.mu.Unlock()
	return value, nil
}

func (t *Tokens) cached(name string, now time.Time) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.m[name]
	return c.value, ok && now.Before(c.until)
}

// Drop forgets name's token if it is still value (another call may have
// replaced it already): the aggregator refused it.
func (t *Tokens) Drop(name, value string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m[name]; ok && c.value == value {
		delete(t.m, name)
	}
}

// TokenCall is one call to an aggregator that takes an access token: what
// Tokens.Call needs to send it and to read its answer.
type TokenCall struct {
	Name  string                                       // the aggregator, for messages
	Fetch func(context.Context) (string, int64, error) // a new token and how many seconds it lives
	Send  func(ctx context.Context, token string) (int, []byte, error)
	// Refused reports whether an answer refuses the token itself (a 401,
	// or the aggregator's own "invalid token").
	Refused func(code int, raw []byte) bool
	// Words are the aggregator's words in a refusal ("" when none), and
	// Refusal the answer as a message ("401 code: words").
	Words   func(raw []byte) string
	Refusal func(code int, raw []byte) string
}

// Call sends c with the token (name "" for a connector's only one). A
// refused token is dropped, as it may have been revoked or have expired
// early, and the call is sent once more with a new one: the aggregator
// refused it before doing anything. Refused again, or a 403: the
// gateway's credentials are refused, a lasting error. A 429 (too many
// requests, refused unprocessed) is transient; a 5xx says the aggregator's
// words.
func (t *Tokens) Call(ctx context.Context, name string, now time.Time, c TokenCall) (int, []byte, error) {
	for again := false; ; again = true {
		tok, err := t.Get(ctx, name, now, c.Fetch)
		if err != nil {
			return 0, nil, err
		}
		code, raw, err := c.Send(ctx, tok)
		refused := err == nil && c.Refused(code, raw)
		if refused {
			t.Drop(name, tok)
			if !again {
				continue
			}
		}
		switch {
		case refused || err == nil && code == http.StatusForbidden:
			err = &Error{Credentials: true, Message: c.Name + " refused the gateway's credentials (" + c.Refusal(code, raw) + ")"}
		case err == nil && code == http.StatusTooManyRequests:
			err = &Error{Transient: true, Answered: true, Message: c.Name + " answered " + c.Refusal(code, raw)}
		case err != nil && code >= 500:
			if w := c.Words(raw); w != "" {
				e := *ErrorOf(err)
				e.Message += " (" + w + ")"
				err = &e
			}
		}
		return code, raw, err
	}
}
