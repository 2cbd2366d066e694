-- The delivery list filtered by event type (GET /v1/webhooks/deliveries
-- ?event=...) walked the workspace's deliveries newest first and kept
-- those of the type: a type that is 3 % of them read 700 rows for a page
-- of 20, each on its own page of a store grown over months (2.4 times the
-- empty store's time on SQLite at a million deliveries, issue 24). This
-- index reads the page's rows alone, in order.

-- +goose Up
CREATE INDEX webhook_deliveries_event_list ON webhook_deliveries (workspace_id, livemode, event, created_at, id);

-- +goose Down
DROP INDEX webhook_deliveries_event_list;
