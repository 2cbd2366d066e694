package checkout

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the checkout service keeps and reads (*store.Store): the
// sessions, their payment attempts, the links, the gateways they go
// through. Each method is one transaction; the rules are the caller's
// (the admit, cancel and update funcs run inside it).
type Store interface {
	AdoptOrphanAttempts(ctx context.Context, cutoff, now time.Time) (int64, error)
	AttemptByProviderRef(ctx context.Context, gatewayID, providerRef string) (*cauri.PaymentAttempt, error)
	AttemptByReference(ctx context.Context, gatewayID, reference string) (*cauri.PaymentAttempt, error)
	Attempts(ctx context.Context, sessionID string) ([]*cauri.PaymentAttempt, error)
	FailedAttemptsForPhone(ctx context.Context, workspaceID string, livemode bool, e164 string, since, until time.Time) ([]*cauri.PaymentAttempt, error)
	CancelSession(ctx context.Context, id string, cancel func(sess *cauri.Session, waiting bool) *cauri.Event) (bool, error)
	ClaimAttemptCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error)
	ClaimCallbackCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error)
	CreateLink(ctx context.Context, l *cauri.PaymentLink) error
	CreateSession(ctx context.Context, sess *cauri.Session, idem *store.Idempotency) (_ *cauri.Session, replayed bool, err error)
	SessionByIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *store.Idempotency, now time.Time) (*cauri.Session, error)
	DueAttempts(ctx context.Context, now time.Time, minWait, maxWait time.Duration, limit int) ([]*cauri.PaymentAttempt, error)
	ExpiredSessions(ctx context.Context, now time.Time, limit int) ([]string, error)
	GatewayByID(ctx context.Context, id string) (*cauri.Gateway, error)
	Gateways(ctx context.Context, workspaceID string) ([]*cauri.Gateway, error)
	Link(ctx context.Context, workspaceID, id string) (*cauri.PaymentLink, error)
	LinkBySlug(ctx context.Context, slug string) (*cauri.PaymentLink, error)
	LinkSessions(ctx context.Context, linkID string) (paid, latest *cauri.Session, err error)
	LinkPayments(ctx context.Context, ids []string) (map[string]int, error)
	Links(ctx context.Context, workspaceID string, p store.LinkPage) ([]*cauri.PaymentLink, error)
	LinkUse(ctx context.Context, l *cauri.PaymentLink) (*store.LinkUse, error)
	MarkInitiated(ctx context.Context, id string, now time.Time, next cauri.NextAction) error
	ProbeGateway(ctx context.Context, provider string) (*cauri.Gateway, error)
	Session(ctx context.Context, id string) (*cauri.Session, error)
	SetNextAction(ctx context.Context, id string, next cauri.NextAction) error
	SetProviderRef(ctx context.Context, id, providerRef string) error
	ReplaceProviderRef(ctx context.Context, id, was, providerRef string) (bool, error)
	KeepFinalRef(ctx context.Context, id, was, finalRef string) (bool, error)
	StartAttempt(ctx context.Context, a *cauri.PaymentAttempt, admit func(sess *cauri.Session, prior store.Prior, link *store.LinkUse) error, reopen func(*cauri.Session) *cauri.Event) error
	UpdateLink(ctx context.Context, workspaceID, id string, change func(*cauri.PaymentLink) error) (*cauri.PaymentLink, error)
	UpdateAttempt(ctx context.Context, id string, fn func(*cauri.Session, *cauri.PaymentAttempt) (*cauri.Event, error)) (*cauri.Session, error)
	UpdateSession(ctx context.Context, id string, fn func(*cauri.Session, *cauri.Workspace) (*cauri.Event, error)) (*cauri.Session, error)
	Workspace(ctx context.Context, id string) (*cauri.Workspace, error)
}

var _ Store = (*store.Store)(nil)
