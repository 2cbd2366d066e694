// Package gateways is the service of a workspace's gateways: its accounts
// at the aggregators, which the merchant connects (credentials sealed at
// once), switches on and off, whole or per operator, and watches (their
// health over the last day). The aggregators' APIs themselves are package
// gateway's connectors; which providers exist is its catalogue.
//
// It imports the domain, the catalogue (package gateway) and the store's
// types.
package gateways

import (
	"context"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/store"
)

// Store is what the service keeps and reads (*store.Store).
type Store interface {
	Gateways(ctx context.Context, workspaceID string) ([]*cauri.Gateway, error)
	GatewayByID(ctx context.Context, id string) (*cauri.Gateway, error)
	GatewaysHealth(ctx context.Context, workspaceID string, since time.Time) (map[string]*store.GatewayHealth, error)
	CreateGateway(ctx context.Context, g *cauri.Gateway, credentials map[string]string) error
	SetGatewayEnabled(ctx context.Context, workspaceID, id string, enabled bool, now time.Time) (*cauri.Gateway, error)
	SetGatewayOperator(ctx context.Context, workspaceID, id, country, operator string, enabled bool, now time.Time) (*cauri.Gateway, error)
	RemoveGateway(ctx context.Context, workspaceID, id string, now time.Time, admit func(waiting int) error) error
}

// Service is the rules of a workspace's gateways.
type Service struct {
	Store Store
	Now   func() time.Time
}

// HealthWindow is how far back a gateway's health looks.
const HealthWindow = 24 * time.Hour

// List returns a workspace's gateways and their health over the last
// HealthWindow, by gateway id (none for a gateway without payments).
func (s *Service) List(ctx context.Context, workspaceID string) ([]*cauri.Gateway, map[string]*store.GatewayHealth, error) {
	list, err := s.Store.Gateways(ctx, workspaceID)
	if err != nil {
		return nil, nil, err
	}
	health, err := s.Store.GatewaysHealth(ctx, workspaceID, s.Now().Add(-HealthWindow))
	return list, health, err
}

// New is one of a merchant's aggregator accounts to connect.
type New struct {
	Provider, Name string
	Live           bool
	Countries      []string
	Credentials    map[string]string
	// BaseURL replaces the provider's API address (a simulator, a
	// country's proxy); "": the provider's.
	BaseURL string
	// NoCollect and NoPayout keep the gateway from collecting or from
	// sending money where its provider and credentials could.
	NoCollect, NoPayout bool
}

// Add connects a gateway to ws, checked as every way in checks it
// (provider, credentials complete and known, countries served), its
// credentials sealed by the store. A Connect workspace collects through the
// platform's gateways: EForbidden.
func (s *Service) Add(ctx context.Context, ws *cauri.Workspace, in New) (*cauri.Gateway, error) {
	if ws.Connect {
		return nil, cauri.Errorf(cauri.EForbidden, "A Connect workspace collects through the service's platform gateways; it adds none of its own")
	}
	p, ok := gateway.Lookup(in.Provider)
	if !ok {
		return nil, cauri.Errorf(cauri.EInvalid, "provider must be one of %s", strings.Join(gateway.Keys(), ", "))
	}
	g, err := p.NewGateway(ws.ID, in.Name, in.Live, in.Countries, in.Credentials, s.Now())
	if err != nil {
		return nil, err
	}
	g.BaseURL = strings.TrimRight(in.BaseURL, "/")
	g.Collect, g.Payout = g.Collect && !in.NoCollect, g.Payout && !in.NoPayout
	if err := s.Store.CreateGateway(ctx, g, in.Credentials); err != nil {
		return nil, err
	}
	return g, nil
}

// SetEnabled switches one of the workspace's gateways on or off.
func (s *Service) SetEnabled(ctx context.Context, workspaceID, id string, enabled bool) (*cauri.Gateway, error) {
	return s.Store.SetGatewayEnabled(ctx, workspaceID, id, enabled, s.Now())
}

// SetOperator switches one operator of one country of a gateway on or off.
func (s *Service) SetOperator(ctx context.Context, workspaceID, id, country, operator string, enabled bool) (*cauri.Gateway, error) {
	return s.Store.SetGatewayOperator(ctx, workspaceID, id, country, operator, enabled, s.Now())
}

// Remove removes one of the workspace's gateways and destroys its
// credentials. A gateway with a payment, a transfer or a refund waiting for
// its outcome is kept (EConflict): its credentials are needed to learn the
// outcome. Disable it, and remove it once they have ended.
func (s *Service) Remove(ctx context.Context, workspaceID, id string) error {
	return s.Store.RemoveGateway(ctx, workspaceID, id, s.Now(), func(waiting int) error {
		if waiting > 0 {
			return cauri.Errorf(cauri.EConflict, "Gateway %s has %d payment(s), transfer(s) or refund(s) waiting for their outcome; disable it now and remove it once they have ended", id, waiting)
		}
		return nil
	})
}

// Known reports a gateway by its id (ENotFound when none), for the
// aggregators that check a callback address before using it.
func (s *Service) Known(ctx context.Context, id string) error {
	_, err := s.Store.GatewayByID(ctx, id)
	return err
}

// Names returns the names of a workspace's gateways, by id.
func (s *Service) Names(ctx context.Context, workspaceID string) (map[string]string, error) {
	list, err := s.Store.Gateways(ctx, workspaceID)
	names := map[string]string{}
	for _, g := range list {
		names[g.ID] = g.Name
	}
	return names, err
}
