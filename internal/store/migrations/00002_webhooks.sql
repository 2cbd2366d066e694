-- Webhook configuration, deliveries (the outbox's consumers) and the
-- dashboard's notifications.

-- +goose Up
ALTER TABLE workspaces ADD COLUMN webhook_url TEXT NOT NULL DEFAULT '';
ALTER TABLE workspaces ADD COLUMN test_webhook_url TEXT NOT NULL DEFAULT '';
-- Selected events, comma-separated; empty means all six.
ALTER TABLE workspaces ADD COLUMN webhook_events TEXT NOT NULL DEFAULT '';

CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    event_id         TEXT NOT NULL,
    event            TEXT NOT NULL,
    livemode         BOOLEAN NOT NULL,
    url              TEXT NOT NULL,
    status           TEXT NOT NULL,          -- pending | delivered | failed
    attempts         INTEGER NOT NULL DEFAULT 0,
    auto_attempts    INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    next_attempt_at  BIGINT,                 -- due time while pending
    locked_until     BIGINT,                 -- lease of the worker sending it...
    lease_token      TEXT,                   -- ...which only that worker's outcome may settle
    last_status_code INTEGER,
    last_error       TEXT,
    response_ms      INTEGER NOT NULL DEFAULT 0,
    transaction_id   TEXT,
    transfer_id      TEXT,
    created_at       BIGINT NOT NULL,
    delivered_at     BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (workspace_id, livemode, created_at);
CREATE INDEX webhook_deliveries_transaction ON webhook_deliveries (transaction_id);

CREATE TABLE notifications (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    livemode     BOOLEAN NOT NULL,
    kind         TEXT NOT NULL,              -- webhook.delivery_failed
    delivery_id  TEXT,
    message      TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    read_at      BIGINT
);
CREATE INDEX notifications_workspace ON notifications (workspace_id, created_at);

-- +goose Down
DROP TABLE notifications;
DROP TABLE webhook_deliveries;
ALTER TABLE workspaces DROP COLUMN webhook_events;
ALTER TABLE workspaces DROP COLUMN test_webhook_url;
ALTER TABLE workspaces DROP COLUMN webhook_url;
