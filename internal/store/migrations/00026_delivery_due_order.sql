-- The worker reads each endpoint's due deliveries oldest first, ties by id
-- (ORDER BY next_attempt_at, id LIMIT n). Without the id in the index,
-- PostgreSQL read every pending delivery of the endpoint and kept the
-- first n (a burst's deliveries share one next_attempt_at): a look-up cost
-- the size of the backlog, and a burst of 100 000 drained at two thirds of
-- the rate of one of 1 000. With it, the look-up reads n entries in order.

-- +goose Up
DROP INDEX webhook_deliveries_endpoint_due;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, status, next_attempt_at, id);

-- +goose Down
DROP INDEX webhook_deliveries_endpoint_due;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (workspace_id, livemode, status, next_attempt_at);
