-- The delivery list filtered by event type (GET /v1/webhooks/deliveries
-- ?event=...) walked the workspace's deliveries newest first and kept
-- those of the type: a type that is 3 % of them read 700 rows for a page
-- of 20, each on its own page of a store grown over months (2.4 times the
-- empty store's time on SQLite at a million deliveries, issue 24). This
-- index reads the page's rows alone, in order.
--
-- The daily purge of the event log keeps an event while a delivery of it
-- is pending: since 00041 no index of the pending deliveries led with the
-- workspace and the status, and PostgreSQL read every workspace's pending
-- deliveries for each event it probed (13 ms a probe with 100 000 pending,
-- against 0.02). The pending deliveries by event answer that probe alone.

-- +goose Up
CREATE INDEX webhook_deliveries_event_list ON webhook_deliveries (workspace_id, livemode, event, created_at, id);
CREATE INDEX webhook_deliveries_pending_event ON webhook_deliveries (event_id) WHERE status = 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_pending_event;
DROP INDEX webhook_deliveries_event_list;
