package refund

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the refund service keeps and reads (*store.Store): the
// refunds, their idempotency keys, the sessions and attempts they give
// back, the gateways they go through.
type Store interface {
	AdoptOrphanRefund(ctx context.Context, id string, now time.Time) (bool, error)
	AttemptByReference(ctx context.Context, gatewayID, reference string) (*cauri.PaymentAttempt, error)
	Attempts(ctx context.Context, sessionID string) ([]*cauri.PaymentAttempt, error)
	ClaimRefundCallbackCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error)
	ClaimRefundCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error)
	CreateRefund(ctx context.Context, r *cauri.Refund, idem *store.Idempotency, admit func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) error) (replayOf string, err error)
	DueRefunds(ctx context.Context, now time.Time, minWait, maxWait time.Duration, limit int) ([]*cauri.Refund, error)
	FinishRefund(ctx context.Context, id string, fn func(r *cauri.Refund, sess *cauri.Session, refunds []*cauri.Refund) (*cauri.Event, error)) (*cauri.Refund, bool, error)
	GatewayByID(ctx context.Context, id string) (*cauri.Gateway, error)
	MarkRefundInitiated(ctx context.Context, id string, now time.Time, providerRef, transferID string) error
	OrphanRefunds(ctx context.Context, cutoff time.Time, limit int) ([]*cauri.Refund, error)
	Refund(ctx context.Context, workspaceID, id string) (*cauri.Refund, error)
	RefundByIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *store.Idempotency, now time.Time) (*cauri.Refund, error)
	RefundByReference(ctx context.Context, gatewayID, reference string) (*cauri.Refund, error)
	RefundByTransfer(ctx context.Context, transferID string) (*cauri.Refund, error)
	Refunds(ctx context.Context, workspaceID string, livemode bool, f store.RefundFilter) ([]*cauri.Refund, error)
	Session(ctx context.Context, id string) (*cauri.Session, error)
	SessionRefunds(ctx context.Context, sessionID string) ([]*cauri.Refund, error)
	Workspace(ctx context.Context, id string) (*cauri.Workspace, error)
}

var _ Store = (*store.Store)(nil)
