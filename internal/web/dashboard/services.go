package dashboard

import (
	"context"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/transfer"
)

// The services the dashboard calls, each as the dashboard sees it (a
// handler test may give a fake).

// Accounts is accounts.Service's part the dashboard uses: sign-in,
// sessions, keys and team.
type Accounts interface {
	Accept(ctx context.Context, token, password string) (string, error)
	Invitation(ctx context.Context, token string) (*cauri.Invitation, string, bool, error)
	Invite(ctx context.Context, workspaceID, byUserID, email string) (string, error)
	Keys(ctx context.Context, workspaceID string) ([]*cauri.Key, error)
	Revoke(ctx context.Context, workspaceID, id string) error
	RollKey(ctx context.Context, workspaceID string, kind cauri.KeyKind, live bool, grace time.Duration) (*cauri.Key, error)
	SigningKeys(ctx context.Context, workspaceID string, live bool) ([]*cauri.Key, error)
	Select(ctx context.Context, token, workspaceID string, livemode bool) error
	Session(ctx context.Context, token string) (*store.DashboardSession, error)
	SignIn(ctx context.Context, email, password string) (string, error)
	SignOut(ctx context.Context, token string) error
	Team(ctx context.Context, workspaceID string) ([]store.Member, []*cauri.Invitation, error)
	Workspace(ctx context.Context, id string) (*cauri.Workspace, error)
	Workspaces(ctx context.Context, userID string) ([]*cauri.Workspace, error)
}

// Checkout is checkout.Service's part the dashboard uses.
type Checkout interface {
	CreateLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, p checkout.LinkParams) (*cauri.PaymentLink, error)
	Detail(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Session, []*cauri.PaymentAttempt, error)
	GetLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (checkout.LinkWithPayments, error)
	Links(ctx context.Context, ws *cauri.Workspace, keyLive bool, limit int, startingAfter string) ([]checkout.LinkWithPayments, bool, error)
	SetLinkActive(ctx context.Context, workspaceID, id string, active bool) (*cauri.PaymentLink, error)
}

// Reports is reports.Service.
type Reports interface {
	Balance(ctx context.Context, ws *cauri.Workspace) (map[cauri.Currency]int64, error)
	Checklist(ctx context.Context, ws *cauri.Workspace) (reports.Checklist, error)
	Overview(ctx context.Context, workspaceID string, livemode bool, days int) (*store.Stats, time.Time, error)
	Transactions(ctx context.Context, workspaceID string, livemode bool, f store.ExportFilter, fn func(store.ExportRow) error) error
}

// Gateways is gateways.Service's part the dashboard uses.
type Gateways interface {
	Add(ctx context.Context, ws *cauri.Workspace, in gateways.New) (*cauri.Gateway, error)
	List(ctx context.Context, workspaceID string) ([]*cauri.Gateway, map[string]*store.GatewayHealth, error)
	Names(ctx context.Context, workspaceID string) (map[string]string, error)
	SetEnabled(ctx context.Context, workspaceID, id string, enabled bool) (*cauri.Gateway, error)
	SetOperator(ctx context.Context, workspaceID, id, country, operator string, enabled bool) (*cauri.Gateway, error)
}

// Webhooks is delivery.Service's part the dashboard uses.
type Webhooks interface {
	Acknowledge(ctx context.Context, workspaceID, id string) error
	AcknowledgeAll(ctx context.Context, workspaceID string, livemode bool) error
	Config(ctx context.Context, workspaceID string) (*cauri.WebhookConfig, error)
	Configure(ctx context.Context, workspaceID string, c delivery.Setting) (*cauri.WebhookConfig, error)
	Deliveries(ctx context.Context, workspaceID string, livemode bool, f store.DeliveryFilter) ([]*cauri.Delivery, error)
	Unread(ctx context.Context, workspaceID string, livemode bool, limit int) ([]store.Notification, int, error)
	Resend(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error)
	SendTest(ctx context.Context, ws *cauri.Workspace, livemode bool) (*cauri.Delivery, error)
}

// Transfers lists a workspace's transfers (transfer.Service).
type Transfers interface {
	List(ctx context.Context, workspaceID string, status cauri.TransferStatus, limit int) ([]*cauri.Transfer, error)
}

// Refunds is refund.Service's part the dashboard uses.
type Refunds interface {
	Create(ctx context.Context, ws *cauri.Workspace, keyLive bool, p refund.Params, key string) (*cauri.Refund, bool, error)
	OfSession(ctx context.Context, sess *cauri.Session) ([]*cauri.Refund, int64, error)
}

// Health tells whether a provider is marked down (routing.Router).
type Health interface {
	Down(provider string) bool
}

var (
	_ Accounts  = (*accounts.Service)(nil)
	_ Checkout  = (*checkout.Service)(nil)
	_ Reports   = (*reports.Service)(nil)
	_ Gateways  = (*gateways.Service)(nil)
	_ Webhooks  = (*delivery.Service)(nil)
	_ Transfers = (*transfer.Service)(nil)
	_ Refunds   = (*refund.Service)(nil)
	_ Health    = (*routing.Router)(nil)
)
