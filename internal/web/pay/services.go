package pay

import (
	"context"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
)

// The services the pages call, as the pages see them (a test may give fakes).

// Checkout is checkout.Service's part the pages use.
type Checkout interface {
	Cancel(ctx context.Context, sessionID string) (*cauri.Session, error)
	Initiate(ctx context.Context, sessionID string, p checkout.Payment) (*cauri.PaymentAttempt, error)
	Link(ctx context.Context, slug string) (*cauri.PaymentLink, *cauri.Workspace, error)
	LinkMethods(ctx context.Context, l *cauri.PaymentLink) ([]checkout.Method, error)
	LinkState(ctx context.Context, l *cauri.PaymentLink) (string, error)
	Methods(ctx context.Context, sess *cauri.Session, country string) ([]checkout.Method, error)
	PayLink(ctx context.Context, slug string, p checkout.LinkPayment) (*cauri.Session, error)
	Session(ctx context.Context, id string) (*cauri.Session, *cauri.Workspace, error)
	SettleSandbox(ctx context.Context, id, issue string) (*cauri.Session, error)
	SubmitCode(ctx context.Context, sessionID, code string) (*cauri.Session, *cauri.PaymentAttempt, error)
	Refresh(ctx context.Context, sessionID string) (*cauri.Session, error)
	Release(ctx context.Context, sessionID string) (*cauri.PaymentAttempt, error)
	Resend(ctx context.Context, sessionID string) (*cauri.PaymentAttempt, error)
	Waiting(ctx context.Context, sess *cauri.Session) (*cauri.PaymentAttempt, error)
	Attempts(ctx context.Context, sess *cauri.Session) ([]*cauri.PaymentAttempt, error)
}

// Workspaces tells a workspace's name (accounts.Service).
type Workspaces interface {
	Workspace(ctx context.Context, id string) (*cauri.Workspace, error)
}

var (
	_ Checkout   = (*checkout.Service)(nil)
	_ Workspaces = (*accounts.Service)(nil)
)
