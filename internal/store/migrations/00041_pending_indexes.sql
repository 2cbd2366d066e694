-- Indexes that hold only the rows a periodic job looks for.
--
-- The worker's look-ups of due deliveries (DueEndpoints, DueDeliveries)
-- went through indexes of every delivery, delivered ones included: after
-- a bulk load without statistics PostgreSQL planned the endpoints' look-up
-- as a scan of the whole table (189 ms a pass at a million deliveries).
-- Partial indexes on the pending rows hold the backlog alone, so no plan
-- reads the history, and a delivery that ends leaves both indexes instead
-- of adding to them.
--
-- The overview's counts of a workspace were read through the daily purge's
-- index (livemode, day) when PostgreSQL had no statistics of the table just
-- recounted: every workspace's counts of those days read and filtered. The
-- purge's index holds the test counts alone, which no live overview can use.
-- The queries name the status and the mode as literals, as a partial index
-- needs.

-- +goose Up
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
DROP INDEX webhook_deliveries_endpoint_due;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, next_attempt_at, id) WHERE status = 'pending';
DROP INDEX payment_rollups_purge;
CREATE INDEX payment_rollups_purge ON payment_rollups (day) WHERE livemode = false;

-- +goose Down
DROP INDEX payment_rollups_purge;
CREATE INDEX payment_rollups_purge ON payment_rollups (livemode, day);
DROP INDEX webhook_deliveries_endpoint_due;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, status, next_attempt_at, id);
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
