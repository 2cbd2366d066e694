-- The daily purge of test data older than 90 days read every row of
-- seven tables, live ones included, in one transaction. Partial indexes
-- hold the test rows alone, by creation time: the purge reads what it
-- deletes, a batch at a time (store.PurgeTestData), and costs nothing to
-- a live payment's writes. The queries name the mode as a literal, as a
-- partial index needs.

-- +goose Up
CREATE INDEX checkout_sessions_test ON checkout_sessions (created_at) WHERE livemode = false;
CREATE INDEX events_test ON events (created_at) WHERE livemode = false;
CREATE INDEX webhook_deliveries_test ON webhook_deliveries (created_at) WHERE livemode = false;
CREATE INDEX notifications_test ON notifications (created_at) WHERE livemode = false;
CREATE INDEX transfers_test ON transfers (created_at) WHERE livemode = false;

-- +goose Down
DROP INDEX transfers_test;
DROP INDEX notifications_test;
DROP INDEX webhook_deliveries_test;
DROP INDEX events_test;
DROP INDEX checkout_sessions_test;
