// Package checkout orchestrates checkout sessions: it validates what a
// merchant asks for, creates sessions (idempotently), lists the payment
// methods a session's page offers, and moves sessions between states,
// writing each state change and its event in one transaction. Later it
// drives the aggregators for live payments.
//
// It imports the domain, the catalog and the store; it knows nothing of HTTP.
package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/movement"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
)

// Service is the checkout orchestration.
type Service struct {
	Store  Store
	PayURL string // base of the hosted pages, without trailing slash
	// CallbackURL is the base of the aggregators' callback addresses
	// ({base-url}/callbacks), given to those that take it per payment.
	CallbackURL string
	Now         func() time.Time // injected clock
	// Committed, when set, is called after a change that emitted an event
	// is committed: the webhook worker sends its delivery at once.
	Committed func()
	// Connectors builds gateways' connectors, for live payments.
	Connectors *movement.Connectors
	// Failures logs and counts what goes wrong where no request waits.
	Failures *movement.Failures
	// Route, when set, orders the gateways of a payment and learns from
	// each payment's outcome.
	Route *routing.Router
	// Platform is the workspace whose gateways collect for Connect
	// workspaces ("" : Connect workspaces have no live method).
	Platform string
}

// gateways lists the gateways that may collect a session's payment: its
// workspace's own or, for a Connect workspace, whose money the service
// holds, the platform's (configured by the service administration).
func (s *Service) gateways(ctx context.Context, sess *cauri.Session) ([]*cauri.Gateway, error) {
	ws, err := s.Store.Workspace(ctx, sess.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if !ws.Connect {
		return s.Store.Gateways(ctx, ws.ID)
	}
	if s.Platform == "" {
		return nil, nil
	}
	return s.Store.Gateways(ctx, s.Platform)
}

// CreateParams is a create request as the merchant sent it. Amount is the
// JSON number's text, so that no float ever holds money.
type CreateParams struct {
	Amount        string
	Currency      string
	CustomerName  string
	CustomerEmail string
	CustomerPhone string
	Description   string
	SuccessURL    string
	CancelURL     string
	MerchantName  string
	MerchantLogo  string
	Metadata      map[string]string
	// ExpiresAt is the RFC 3339 text of expires_at; "": the default,
	// cauri.SessionLifetime after creation.
	ExpiresAt      string
	IdempotencyKey string
}

// Limits on free-text fields, in characters.
const (
	maxNameLen        = 200
	maxDescriptionLen = 1000
	maxURLLen         = 2048
	maxMetadataKeys   = 50
	maxMetadataKeyLen = 40
	maxMetadataValLen = 500
)

// Create validates p and creates a session for ws; keyLive is the mode of
// the key used. It returns replayed=true when an Idempotency-Key repeats an
// earlier request, with the session that request created.
func (s *Service) Create(ctx context.Context, ws *cauri.Workspace, keyLive bool, p CreateParams) (_ *cauri.Session, replayed bool, err error) {
	sess, err := newSession(ws, keyLive, p, s.Now())
	if err != nil {
		return nil, false, err
	}
	var idem *store.Idempotency
	if p.IdempotencyKey != "" {
		if err := cauri.CheckIdempotencyKey(p.IdempotencyKey); err != nil {
			return nil, false, err
		}
		// An expiry left to its default is not part of the request: a
		// replay a minute later is the same request.
		explicit := ""
		if p.ExpiresAt != "" {
			explicit = sess.ExpiresAt.Format(time.RFC3339Nano)
		}
		idem = &store.Idempotency{Key: p.IdempotencyKey, Fingerprint: fingerprint(sess, explicit)}
	}
	if err := expiryWithin(sess.ExpiresAt, sess.CreatedAt, cauri.MinSessionLifetime, cauri.MaxSessionLifetime,
		fmt.Sprintf("%d days", int(cauri.MaxSessionLifetime/(24*time.Hour))), " (for a standing offer, use a payment link)"); err != nil {
		// An expiry now too near (or past) may be a replay's: the retry of a
		// request whose answer was lost gets its session, not a 400.
		if idem == nil {
			return nil, false, err
		}
		prev, rerr := s.Store.SessionByIdempotencyKey(ctx, ws.ID, sess.Livemode, idem, s.Now())
		switch {
		case errors.Is(rerr, store.ErrIdempotencyMismatch):
			return nil, false, cauri.KeyReused(p.IdempotencyKey, "request")
		case rerr != nil:
			return nil, false, rerr
		case prev == nil:
			return nil, false, err
		}
		return prev, true, nil
	}
	created, replayed, err := s.Store.CreateSession(ctx, sess, idem)
	if errors.Is(err, store.ErrIdempotencyMismatch) {
		return nil, false, cauri.KeyReused(p.IdempotencyKey, "request")
	}
	return created, replayed, err
}

func newSession(ws *cauri.Workspace, keyLive bool, p CreateParams, now time.Time) (*cauri.Session, error) {
	cur := ws.DefaultCurrency
	if p.Currency != "" {
		c, err := cauri.ParseCurrency(p.Currency)
		if err != nil {
			return nil, err
		}
		cur = c
	}
	if p.Amount == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "amount is required")
	}
	amount, err := cauri.ParseAmount("amount", p.Amount, cur)
	if err != nil {
		return nil, err
	}
	sess := &cauri.Session{
		ID: cauri.NewID("cs_"), WorkspaceID: ws.ID, Livemode: ws.Livemode(keyLive), Status: cauri.SessionPending,
		Amount: amount, Currency: cur, Metadata: map[string]string{}, CreatedAt: now.UTC(), UpdatedAt: now.UTC(),
	}
	for _, f := range []struct {
		name, in string
		max      int
		dst      *string
	}{
		{"customer_name", p.CustomerName, maxNameLen, &sess.CustomerName},
		{"description", p.Description, maxDescriptionLen, &sess.Description},
		{"merchant_name", p.MerchantName, maxNameLen, &sess.MerchantName},
	} {
		if *f.dst, err = cauri.CleanText(f.name, f.in, f.max); err != nil {
			return nil, err
		}
	}
	if sess.CustomerEmail, err = email("customer_email", p.CustomerEmail); err != nil {
		return nil, err
	}
	if p.CustomerPhone != "" {
		if sess.CustomerPhone, err = catalog.ParseInternationalPhone("customer_phone", p.CustomerPhone); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		name, in string
		dst      *string
	}{
		{"success_url", p.SuccessURL, &sess.SuccessURL},
		{"cancel_url", p.CancelURL, &sess.CancelURL},
		{"merchant_logo", p.MerchantLogo, &sess.MerchantLogo},
	} {
		if *f.dst, err = httpURL(f.name, f.in); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata(p.Metadata); err != nil {
		return nil, err
	}
	for k, v := range p.Metadata {
		sess.Metadata[k] = v
	}
	if sess.ExpiresAt, err = sessionExpiry(p.ExpiresAt, sess.CreatedAt); err != nil {
		return nil, err
	}
	return sess, nil
}

// sessionExpiry reads a session's expires_at (RFC 3339; Create holds it to
// cauri.MinSessionLifetime and cauri.MaxSessionLifetime after now):
// cauri.SessionLifetime after now when v is "".
func sessionExpiry(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return now.Add(cauri.SessionLifetime), nil
	}
	return parseExpiry(v)
}

// parseExpiry reads an expires_at: RFC 3339, to the microsecond as stored.
func parseExpiry(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, cauri.Errorf(cauri.EInvalid, "expires_at %q is not an RFC 3339 date and time (for example 2026-12-31T23:59:59Z)", cauri.Printable(v))
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// expiryWithin holds an expiry t to now: in the future, at least least
// (0: any) and at most most (in words: far) away; advice follows the
// refusal of one further away.
func expiryWithin(t, now time.Time, least, most time.Duration, far, advice string) error {
	switch {
	case !t.After(now):
		return cauri.Errorf(cauri.EInvalid, "expires_at %s is not in the future", t.Format(time.RFC3339))
	case t.Sub(now) < least:
		return cauri.Errorf(cauri.EInvalid, "expires_at %s is less than %d minutes away; the earliest is %s (a customer needs time to approve a payment)",
			t.Format(time.RFC3339), int(least/time.Minute), now.Add(least).Format(time.RFC3339))
	case t.Sub(now) > most:
		return cauri.Errorf(cauri.EInvalid, "expires_at %s is more than %s away; the furthest is %s%s",
			t.Format(time.RFC3339), far, now.Add(most).Format(time.RFC3339), advice)
	}
	return nil
}

// checkMetadata holds a merchant's metadata (a session's, a link's) to
// its limits: keys, their length and their values' length.
func checkMetadata(md map[string]string) error {
	if len(md) > maxMetadataKeys {
		return cauri.Errorf(cauri.EInvalid, "metadata has %d keys; at most %d are allowed", len(md), maxMetadataKeys)
	}
	for k, v := range md {
		if k == "" || utf8.RuneCountInString(k) > maxMetadataKeyLen {
			return cauri.Errorf(cauri.EInvalid, "metadata keys must have 1 to %d characters", maxMetadataKeyLen)
		}
		if utf8.RuneCountInString(v) > maxMetadataValLen {
			return cauri.Errorf(cauri.EInvalid, "metadata.%s is longer than %d characters", k, maxMetadataValLen)
		}
		if strings.ContainsRune(k+v, 0) {
			return cauri.Errorf(cauri.EInvalid, "metadata.%s contains a NUL character", k)
		}
	}
	return nil
}

func email(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		return "", cauri.Errorf(cauri.EInvalid, "%s %q is not an e-mail address", field, s)
	}
	return s, nil
}

func httpURL(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > maxURLLen {
		return "", cauri.Errorf(cauri.EInvalid, "%s must be an absolute http or https URL of at most %d characters", field, maxURLLen)
	}
	return s, nil
}

// fingerprint identifies a request by its normalised parameters, so that a
// replay with other whitespace or key order is still the same request.
func fingerprint(s *cauri.Session, expiresAt string) string {
	fields := []any{s.Livemode, s.Amount, s.Currency, s.CustomerName, s.CustomerEmail, s.CustomerPhone,
		s.Description, s.SuccessURL, s.CancelURL, s.MerchantName, s.MerchantLogo, s.Metadata}
	if expiresAt != "" {
		fields = append(fields, expiresAt) // left out otherwise: keys stored before expires_at keep their fingerprint
	}
	b, _ := json.Marshal(fields)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Get returns a session of ws in the given mode. A session of another
// workspace, or of the other mode, does not exist for this caller. A live
// payment waiting for the customer is checked with its aggregator on the
// way, at most once every StatusCheckInterval (SPEC section 3).
func (s *Service) Get(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (*cauri.Session, error) {
	sess, err := s.Store.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if sess.WorkspaceID != ws.ID {
		return nil, cauri.Errorf(cauri.ENotFound, "Session %s not found", id)
	}
	if sess.Livemode != ws.Livemode(keyLive) {
		// As Stripe says it: the id is the caller's own, in the other mode.
		mode, other := "test", "live"
		if sess.Livemode {
			mode, other = "live", "test"
		}
		return nil, cauri.Errorf(cauri.ENotFound, "Session %s not found with a %s key: it is a %s session; read it with the workspace's %s key",
			id, other, mode, mode)
	}
	if sess.Livemode && sess.Status.Payable() {
		return s.Refresh(ctx, id)
	}
	return sess, nil
}

// Sandbox outcomes, as the sandbox route spells them.
const (
	IssueSuccess = "succes"
	IssueFailure = "echec"
)

// SettleSandbox settles a test session as the customer's simulated payment
// would: issue is IssueSuccess or IssueFailure.
func (s *Service) SettleSandbox(ctx context.Context, id, issue string) (*cauri.Session, error) {
	sess, err := s.Store.UpdateSession(ctx, id, func(sess *cauri.Session, ws *cauri.Workspace) (*cauri.Event, error) {
		if sess.Livemode {
			return nil, cauri.Errorf(cauri.EForbidden, "This session collects real money; the sandbox settles test sessions only")
		}
		if !sess.Status.Payable() {
			return nil, cauri.Errorf(cauri.EConflict, "Session is %s and can no longer be paid", sess.Status)
		}
		now := s.Now().UTC()
		if sess.Expired(now) {
			return nil, expired(sess)
		}
		sess.Status = cauri.SessionFailed
		if issue == IssueSuccess {
			sess.Status = cauri.SessionSuccess
		}
		sess.Provider, sess.UpdatedAt, sess.CompletedAt = "sandbox", now, &now
		data, err := json.Marshal(sess.Object(s.PayURL))
		if err != nil {
			return nil, err
		}
		return cauri.SessionEvent(sess, data, now), nil
	})
	if err == nil && s.Committed != nil {
		s.Committed()
	}
	return sess, err
}

// Session reads a session by its id, as the hosted pages do (the id is
// the customer's capability), with the workspace it pays.
func (s *Service) Session(ctx context.Context, id string) (*cauri.Session, *cauri.Workspace, error) {
	sess, err := s.Store.Session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ws, err := s.Store.Workspace(ctx, sess.WorkspaceID)
	return sess, ws, err
}

// Detail reads one of a workspace's sessions of one mode with its
// attempts, as the dashboard shows it; another workspace's, or the other
// mode's, is not found.
func (s *Service) Detail(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Session, []*cauri.PaymentAttempt, error) {
	sess, err := s.Store.Session(ctx, id)
	if err == nil && (sess.WorkspaceID != workspaceID || sess.Livemode != livemode) {
		err = cauri.Errorf(cauri.ENotFound, "Transaction not found")
	}
	if err != nil {
		return nil, nil, err
	}
	attempts, err := s.Store.Attempts(ctx, sess.ID)
	return sess, attempts, err
}
