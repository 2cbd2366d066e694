package api

import (
	"context"
	"net/http"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/accounts"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/partner"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/routing"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/transfer"
)

// The services the API calls, each as the API sees it (a handler test may
// give a fake).

// Checkout is checkout.Service's part the API uses.
type Checkout interface {
	Callback(ctx context.Context, gatewayID string, sig checkout.Signal) error
	CallbackReference(ctx context.Context, gatewayID string, h http.Header, body []byte) (checkout.Signal, error)
	CheckLink(ctx context.Context, ws *cauri.Workspace, live bool, id string) (*checkout.LinkCheck, error)
	Create(ctx context.Context, ws *cauri.Workspace, keyLive bool, p checkout.CreateParams) (_ *cauri.Session, replayed bool, err error)
	CreateLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, p checkout.LinkParams) (*cauri.PaymentLink, error)
	GetLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (checkout.LinkWithPayments, error)
	Links(ctx context.Context, ws *cauri.Workspace, keyLive bool, limit int, startingAfter string) ([]checkout.LinkWithPayments, bool, error)
	UpdateLink(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string, u checkout.LinkUpdate) (*cauri.PaymentLink, error)
	Get(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (*cauri.Session, error)
	Methods(ctx context.Context, sess *cauri.Session, country string) ([]checkout.Method, error)
}

// Transfers is transfer.Service's part the API uses.
type Transfers interface {
	Callback(ctx context.Context, gatewayID, reference string) error
	Get(ctx context.Context, workspaceID, id string) (*cauri.Transfer, error)
	List(ctx context.Context, workspaceID string, status cauri.TransferStatus, limit int) ([]*cauri.Transfer, error)
	Options(ctx context.Context, ws *cauri.Workspace) ([]transfer.CountryOption, error)
	ReplayRequest(ctx context.Context, ws *cauri.Workspace, key string, p transfer.Params) (*cauri.Transfer, error)
	RecipientName(ctx context.Context, ws *cauri.Workspace, keyLive bool, p transfer.RecipientParams, limit func() error) (*transfer.Recipient, error)
	Send(ctx context.Context, ws *cauri.Workspace, p transfer.Params, key string, limit func() error) (*cauri.Transfer, bool, error)
}

// Refunds is refund.Service's part the API uses.
type Refunds interface {
	Callback(ctx context.Context, gatewayID, reference string) error
	Create(ctx context.Context, ws *cauri.Workspace, keyLive bool, p refund.Params, key string) (*cauri.Refund, bool, error)
	Get(ctx context.Context, ws *cauri.Workspace, keyLive bool, id string) (*cauri.Refund, error)
	List(ctx context.Context, ws *cauri.Workspace, keyLive bool, f refund.Filter) ([]*cauri.Refund, error)
}

// Partners is partner.Service.
type Partners interface {
	AddGateway(ctx context.Context, ws *cauri.Workspace, in gateways.New) (*cauri.Gateway, error)
	AuditCall(ctx context.Context, merchantID, method, route, outcome string) error
	Authenticate(ctx context.Context, secret string) (*store.Partner, error)
	CreateMerchant(ctx context.Context, p *store.Partner, in partner.NewMerchant) (*partner.Provisioned, error)
	Merchant(ctx context.Context, p *store.Partner, id string) (*partner.Merchant, error)
	Merchants(ctx context.Context, p *store.Partner, limit int) ([]*partner.Merchant, error)
	UpdateMerchant(ctx context.Context, ws *cauri.Workspace, in partner.Update) (*partner.Merchant, error)
	Workspace(ctx context.Context, p *store.Partner, id string) (*cauri.Workspace, error)
}

// Webhooks is delivery.Service's part the API uses.
type Webhooks interface {
	Config(ctx context.Context, workspaceID string) (*cauri.WebhookConfig, error)
	ConfigureMode(ctx context.Context, workspaceID string, keyLive bool, mode string, url *string, events []string) (*cauri.WebhookConfig, bool, error)
	Deliveries(ctx context.Context, workspaceID string, livemode bool, f store.DeliveryFilter) ([]*cauri.Delivery, error)
	Delivery(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error)
	Resend(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error)
}

// Keys authenticates an API key (accounts.Service).
type Keys interface {
	Authenticate(ctx context.Context, key string) (*cauri.Workspace, *cauri.Key, error)
}

// Gateways tells whether a gateway exists (gateways.Service).
type Gateways interface {
	Known(ctx context.Context, id string) error
}

// Ranker ranks the providers of a payment or a country (routing.Router).
type Ranker interface {
	Advise(a routing.Ask) (*routing.Advice, error)
	Overview(country string, providers []string, currency string) (*routing.Overview, error)
}

var (
	_ Checkout  = (*checkout.Service)(nil)
	_ Transfers = (*transfer.Service)(nil)
	_ Refunds   = (*refund.Service)(nil)
	_ Partners  = (*partner.Service)(nil)
	_ Webhooks  = (*delivery.Service)(nil)
	_ Keys      = (*accounts.Service)(nil)
	_ Gateways  = (*gateways.Service)(nil)
	_ Ranker    = (*routing.Router)(nil)
)
