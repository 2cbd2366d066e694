-- The webhook worker looks up each endpoint's due deliveries (a
-- workspace's address of one mode) on its own, oldest first, so that one
-- endpoint's backlog costs the others nothing (internal/delivery).

-- +goose Up
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, status, next_attempt_at);

-- +goose Down
DROP INDEX webhook_deliveries_endpoint_due;
