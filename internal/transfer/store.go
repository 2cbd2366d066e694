package transfer

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the transfer service keeps and reads (*store.Store): the
// transfers, their idempotency keys, the gateways that pay them out.
type Store interface {
	AdoptOrphanTransfer(ctx context.Context, id string, now time.Time) (bool, error)
	ClaimTransferCallbackCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error)
	ClaimTransferCheck(ctx context.Context, id string, now time.Time, every time.Duration) (bool, error)
	CreateTransfer(ctx context.Context, tr *cauri.Transfer, idem *store.Idempotency, dayStart time.Time, admit func(today, dailyCap int) error) (replayOf string, err error)
	DeleteTransfer(ctx context.Context, tr *cauri.Transfer) (bool, error)
	DueTransfers(ctx context.Context, now time.Time, minWait, maxWait time.Duration, limit int) ([]*cauri.Transfer, error)
	ClearGatewayProblem(ctx context.Context, id, prefix string) (bool, error)
	SetGatewayProblem(ctx context.Context, id, problem string) error
	FinishTransfer(ctx context.Context, id string, fn func(*cauri.Transfer) error) (*cauri.Transfer, bool, error)
	GatewayByID(ctx context.Context, id string) (*cauri.Gateway, error)
	Gateways(ctx context.Context, workspaceID string) ([]*cauri.Gateway, error)
	MarkTransferInitiated(ctx context.Context, id string, now time.Time, providerRef string) error
	OrphanTransfers(ctx context.Context, cutoff time.Time, limit int) ([]*cauri.Transfer, error)
	SetTransferDailyCap(ctx context.Context, id string, cap int, now time.Time) (*cauri.Workspace, error)
	SetTransferProviderRef(ctx context.Context, id, providerRef string) error
	Transfer(ctx context.Context, workspaceID, id string) (*cauri.Transfer, error)
	TransferByIdempotencyKey(ctx context.Context, workspaceID string, livemode bool, idem *store.Idempotency, now time.Time) (*cauri.Transfer, error)
	TransferByReference(ctx context.Context, gatewayID, reference string) (*cauri.Transfer, error)
	Transfers(ctx context.Context, workspaceID string, livemode bool, status cauri.TransferStatus, limit int) ([]*cauri.Transfer, error)
}

var _ Store = (*store.Store)(nil)
