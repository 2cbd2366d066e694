-- The delivery list filtered by status (a merchant's failed deliveries) is
-- read newest first among that status's rows alone, not along all of the
-- workspace's deliveries.

-- +goose Up
CREATE INDEX webhook_deliveries_status_list ON webhook_deliveries (workspace_id, livemode, status, created_at, id);

-- +goose Down
DROP INDEX webhook_deliveries_status_list;
