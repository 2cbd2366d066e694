-- The lists (sessions, deliveries, transfers) are read newest first, ties
-- broken by id: with the id in their index a page is read in index order
-- and stops at its limit, instead of sorting every row of the workspace.

-- +goose Up
DROP INDEX checkout_sessions_list;
CREATE INDEX checkout_sessions_list ON checkout_sessions (workspace_id, livemode, created_at, id);
DROP INDEX webhook_deliveries_list;
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (workspace_id, livemode, created_at, id);
DROP INDEX transfers_list;
CREATE INDEX transfers_list ON transfers (workspace_id, livemode, created_at, id);

-- +goose Down
DROP INDEX checkout_sessions_list;
CREATE INDEX checkout_sessions_list ON checkout_sessions (workspace_id, livemode, created_at);
DROP INDEX webhook_deliveries_list;
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (workspace_id, livemode, created_at);
DROP INDEX transfers_list;
CREATE INDEX transfers_list ON transfers (workspace_id, livemode, created_at);
