package store

import (
	"context"

	"github.com/cauri-pay/cauri"
)

// Setup is what a workspace has set up, as the dashboard's first-run
// checklist asks it.
type Setup struct {
	TestPayment bool // a test session succeeded (refunded since counts)
	WebhookURL  bool // a webhook address is set, of either mode
	Delivered   bool // a webhook delivery of either mode was delivered
	Gateway     bool // a gateway is enabled
}

// Setup reads a workspace's Setup in one statement, each part the look-up
// of one row through an index (the sessions' and the deliveries' lists by
// workspace and mode, the gateways' by workspace).
func (s *Store) Setup(ctx context.Context, workspaceID string) (Setup, error) {
	var st Setup
	err := s.read(ctx, func(t *tx) error {
		return t.queryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM checkout_sessions WHERE workspace_id = ? AND livemode = ? AND status IN (?, ?)),
			EXISTS (SELECT 1 FROM workspaces WHERE id = ? AND (webhook_url <> '' OR test_webhook_url <> '')),
			EXISTS (SELECT 1 FROM webhook_deliveries WHERE workspace_id = ? AND livemode IN (?, ?) AND status = ?),
			EXISTS (SELECT 1 FROM gateways WHERE workspace_id = ? AND enabled = ?)`,
			workspaceID, false, string(cauri.SessionSuccess), string(cauri.SessionRefunded),
			workspaceID,
			workspaceID, true, false, string(cauri.DeliveryDelivered),
			workspaceID, true).Scan(&st.TestPayment, &st.WebhookURL, &st.Delivered, &st.Gateway)
	})
	return st, err
}
