package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cauri-pay/cauri"
)

// CreateGateway stores a gateway and its credentials, sealed under the
// master key (bound to the gateway's id); only hints of them are kept in
// clear.
func (s *Store) CreateGateway(ctx context.Context, g *cauri.Gateway, credentials map[string]string) error {
	creds, err := json.Marshal(credentials)
	if err != nil {
		return err
	}
	g.CredentialHints = map[string]string{}
	for k, v := range credentials {
		g.CredentialHints[k] = cauri.CredentialHint(k, v)
	}
	routes, _ := json.Marshal(g.Routes)
	hints, _ := json.Marshal(g.CredentialHints)
	return s.tx(ctx, func(t *tx) error {
		if _, err := t.webhookConfig(ctx, g.WorkspaceID, false); err != nil { // the workspace exists
			return err
		}
		_, err := t.exec(ctx, `INSERT INTO gateways (id, workspace_id, provider, name, live, base_url, collect, payout, enabled,
			routes, credentials, credential_hints, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			g.ID, g.WorkspaceID, g.Provider, g.Name, g.Live, g.BaseURL, g.Collect, g.Payout, g.Enabled,
			string(routes), s.vault.Seal(string(creds), g.ID), string(hints), micros(g.CreatedAt))
		if err != nil {
			return err
		}
		return t.audit(ctx, g.CreatedAt, "gateway.added", g.WorkspaceID, map[string]any{"gateway": g.ID, "provider": g.Provider,
			"name": g.Name, "live": g.Live, "credentials": g.CredentialHints})
	})
}

const gatewayColumns = `id, workspace_id, provider, name, live, base_url, collect, payout, enabled, routes, credential_hints, created_at, problem`

func scanGateway(row interface{ Scan(...any) error }) (*cauri.Gateway, error) {
	var g cauri.Gateway
	var routes, hints string
	var created int64
	if err := row.Scan(&g.ID, &g.WorkspaceID, &g.Provider, &g.Name, &g.Live, &g.BaseURL, &g.Collect, &g.Payout, &g.Enabled,
		&routes, &hints, &created, &g.Problem); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(routes), &g.Routes); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(hints), &g.CredentialHints); err != nil {
		return nil, err
	}
	g.CreatedAt = fromMicros(created)
	return &g, nil
}

// SetGatewayProblem records why a gateway cannot be used now ("" once it
// can), as the service finds it.
func (s *Store) SetGatewayProblem(ctx context.Context, id, problem string) error {
	_, err := s.update(ctx, `UPDATE gateways SET problem = ? WHERE id = ?`, problem, id)
	return err
}

// ClearGatewayProblem clears a gateway's problem if it begins with prefix
// (a problem of that kind only), and reports whether it did.
func (s *Store) ClearGatewayProblem(ctx context.Context, id, prefix string) (bool, error) {
	n, err := s.update(ctx, `UPDATE gateways SET problem = '' WHERE id = ? AND substr(problem, 1, ?) = ?`, id, len(prefix), prefix)
	return n > 0, err
}

// Gateways lists a workspace's gateways (not the removed ones), oldest first.
func (s *Store) Gateways(ctx context.Context, workspaceID string) ([]*cauri.Gateway, error) {
	var out []*cauri.Gateway
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = queryAll(ctx, t, scanGateway, `SELECT `+gatewayColumns+` FROM gateways
			WHERE workspace_id = ? AND removed_at IS NULL ORDER BY created_at, id`, workspaceID)
		return err
	})
	return out, err
}

// Gateway reads one of a workspace's gateways.
func (s *Store) Gateway(ctx context.Context, workspaceID, id string) (*cauri.Gateway, error) {
	if !cauri.IsID("gw_", id) {
		return nil, errNotFound("Gateway %s not found", printable(id))
	}
	var g *cauri.Gateway
	err := s.read(ctx, func(t *tx) (err error) {
		g, err = scanGateway(t.queryRow(ctx, `SELECT `+gatewayColumns+` FROM gateways
			WHERE id = ? AND workspace_id = ? AND removed_at IS NULL`, id, workspaceID))
		return notFound(err, "Gateway %s not found", id)
	})
	return g, err
}

// GatewayByID reads a gateway, whatever its workspace: for the callbacks
// aggregators send, which name the gateway in their path.
func (s *Store) GatewayByID(ctx context.Context, id string) (*cauri.Gateway, error) {
	if !cauri.IsID("gw_", id) {
		return nil, errNotFound("Gateway %s not found", printable(id))
	}
	var g *cauri.Gateway
	err := s.read(ctx, func(t *tx) (err error) {
		g, err = scanGateway(t.queryRow(ctx, `SELECT `+gatewayColumns+` FROM gateways WHERE id = ? AND removed_at IS NULL`, id))
		return notFound(err, "Gateway %s not found", id)
	})
	return g, err
}

// ProbeGateway finds an enabled live gateway of a provider, any
// workspace's, through which the provider's API can be checked.
func (s *Store) ProbeGateway(ctx context.Context, provider string) (*cauri.Gateway, error) {
	var g *cauri.Gateway
	err := s.read(ctx, func(t *tx) (err error) {
		g, err = scanGateway(t.queryRow(ctx, `SELECT `+gatewayColumns+` FROM gateways WHERE provider = ? AND enabled = ? AND live = ?
			AND removed_at IS NULL ORDER BY created_at LIMIT 1`, provider, true, true))
		return notFound(err, "No live gateway of %s", printable(provider))
	})
	return g, err
}

// GatewayCredentials opens a gateway's credentials, for its connector.
func (s *Store) GatewayCredentials(ctx context.Context, id string) (map[string]string, error) {
	var sealed string
	err := s.read(ctx, func(t *tx) error {
		return notFound(t.queryRow(ctx, `SELECT credentials FROM gateways WHERE id = ? AND removed_at IS NULL`, id).Scan(&sealed),
			"Gateway %s not found", printable(id))
	})
	if err != nil {
		return nil, err
	}
	plain, err := s.vault.Open(sealed, id)
	if err != nil {
		return nil, err
	}
	var creds map[string]string
	return creds, json.Unmarshal([]byte(plain), &creds)
}

// SetGatewayEnabled turns a gateway on or off (audited).
func (s *Store) SetGatewayEnabled(ctx context.Context, workspaceID, id string, enabled bool, now time.Time) (*cauri.Gateway, error) {
	action := map[bool]string{true: "gateway.enabled", false: "gateway.disabled"}[enabled]
	if err := s.changeGateway(ctx, workspaceID, id, now, action, `UPDATE gateways SET enabled = ? WHERE id = ? AND workspace_id = ? AND removed_at IS NULL`,
		enabled, id, workspaceID); err != nil {
		return nil, err
	}
	return s.Gateway(ctx, workspaceID, id)
}

// RemoveGateway removes a gateway and destroys its credentials (audited).
// The row stays, so that payments it made keep naming it. admit decides
// first, in the same transaction, given the number of the gateway's
// movements waiting for their outcome (payment attempts pending,
// transfers processing, refunds pending), whose outcome needs its credentials: the
// caller's rule (gateways.Service.Remove).
func (s *Store) RemoveGateway(ctx context.Context, workspaceID, id string, now time.Time, admit func(waiting int) error) error {
	if !cauri.IsID("gw_", id) {
		return errNotFound("Gateway %s not found", printable(id))
	}
	return s.tx(ctx, func(t *tx) error {
		var waiting int
		if err := t.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM payment_attempts WHERE gateway_id = ? AND status = ?)
			+ (SELECT COUNT(*) FROM transfers WHERE gateway_id = ? AND status = ?)
			+ (SELECT COUNT(*) FROM refunds WHERE gateway_id = ? AND status = ?)`,
			id, string(cauri.AttemptPending), id, string(cauri.TransferProcessing), id, string(cauri.RefundPending)).Scan(&waiting); err != nil {
			return err
		}
		if err := admit(waiting); err != nil {
			return err
		}
		return t.changeGateway(ctx, workspaceID, id, now, "gateway.removed", `UPDATE gateways SET enabled = ?, credentials = '', removed_at = ?
			WHERE id = ? AND workspace_id = ? AND removed_at IS NULL`, false, micros(now), id, workspaceID)
	})
}

// changeGateway runs q, which changes gateway id of the workspace, and
// audits it as action.
func (s *Store) changeGateway(ctx context.Context, workspaceID, id string, now time.Time, action, q string, args ...any) error {
	if !cauri.IsID("gw_", id) {
		return errNotFound("Gateway %s not found", printable(id))
	}
	return s.tx(ctx, func(t *tx) error { return t.changeGateway(ctx, workspaceID, id, now, action, q, args...) })
}

// changeGateway is Store.changeGateway in the caller's transaction.
func (t *tx) changeGateway(ctx context.Context, workspaceID, id string, now time.Time, action, q string, args ...any) error {
	res, err := t.exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNotFound("Gateway %s not found", id)
	}
	return t.audit(ctx, now, action, workspaceID, map[string]any{"gateway": id})
}

// SetGatewayOperator turns one operator of one country on or off on a
// gateway: a disabled operator is neither offered on the hosted page nor
// used for transfers through this gateway (audited).
func (s *Store) SetGatewayOperator(ctx context.Context, workspaceID, id, country, operator string, enabled bool, now time.Time) (*cauri.Gateway, error) {
	if !cauri.IsID("gw_", id) {
		return nil, errNotFound("Gateway %s not found", printable(id))
	}
	err := s.tx(ctx, func(t *tx) error {
		var raw string
		if err := t.queryRow(ctx, `SELECT routes FROM gateways WHERE id = ? AND workspace_id = ? AND removed_at IS NULL`+s.forUpdate(),
			id, workspaceID).Scan(&raw); err != nil {
			return notFound(err, "Gateway %s not found", id)
		}
		var routes []cauri.GatewayRoute
		if err := json.Unmarshal([]byte(raw), &routes); err != nil {
			return err
		}
		found := false
		for i := range routes {
			if routes[i].Country == country && routes[i].Operator == operator {
				routes[i].Enabled, found = enabled, true
			}
		}
		if !found {
			return errNotFound("Gateway %s does not serve operator %s in %s", id, printable(operator), printable(country))
		}
		b, _ := json.Marshal(routes)
		if _, err := t.exec(ctx, `UPDATE gateways SET routes = ? WHERE id = ?`, string(b), id); err != nil {
			return err
		}
		return t.audit(ctx, now, "gateway.operator", workspaceID, map[string]any{"gateway": id, "country": country,
			"operator": operator, "enabled": enabled})
	})
	if err != nil {
		return nil, err
	}
	return s.Gateway(ctx, workspaceID, id)
}

// GatewayHealth is how a gateway's payments fared over a recent period.
type GatewayHealth struct {
	Tally
	Pending       int
	LastFailure   string // the aggregator's words
	LastFailureAt *time.Time
	LastSuccessAt *time.Time
}

// GatewaysHealth tallies each of a workspace's gateways' payment attempts
// created since, with the latest failure's words.
func (s *Store) GatewaysHealth(ctx context.Context, workspaceID string, since time.Time) (map[string]*GatewayHealth, error) {
	out := map[string]*GatewayHealth{}
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT a.gateway_id, a.status, COUNT(*), MAX(a.updated_at) FROM gateways g
			JOIN payment_attempts a ON a.gateway_id = g.id AND a.created_at >= ?
			WHERE g.workspace_id = ? GROUP BY a.gateway_id, a.status`, micros(since), workspaceID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, status string
			var n int
			var latest int64
			if err := rows.Scan(&id, &status, &n, &latest); err != nil {
				return err
			}
			h := out[id]
			if h == nil {
				h = &GatewayHealth{}
				out[id] = h
			}
			at := fromMicros(latest)
			switch cauri.AttemptStatus(status) {
			case cauri.AttemptPending:
				h.Pending += n
			case cauri.AttemptSucceeded:
				h.LastSuccessAt = &at
			case cauri.AttemptFailed:
				h.LastFailureAt = &at
			}
			h.add(status == string(cauri.AttemptSucceeded), status == string(cauri.AttemptFailed), n, 0)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		for id, h := range out {
			if h.LastFailureAt == nil {
				continue
			}
			if err := t.queryRow(ctx, `SELECT reason FROM payment_attempts WHERE gateway_id = ? AND status = ? AND created_at >= ?
				ORDER BY updated_at DESC LIMIT 1`, id, string(cauri.AttemptFailed), micros(since)).Scan(&h.LastFailure); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
