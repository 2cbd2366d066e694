-- The worker's look-ups of due deliveries read only pending ones: their
-- indexes hold only those (partial), so that recording an attempt's
-- outcome (delivered, failed) adds no entry to them, and a leased or
-- delivered row costs them nothing. The queries name the status as the
-- literal 'pending', which the planners need to use a partial index.

-- +goose Up
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
DROP INDEX webhook_deliveries_endpoint_due;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, next_attempt_at, id) WHERE status = 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
DROP INDEX webhook_deliveries_endpoint_due;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, status, next_attempt_at, id);
