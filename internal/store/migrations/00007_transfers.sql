-- Transfers: money sent out to Mobile Money accounts. A transfer is written
-- (processing) before its aggregator is called; its reference is the
-- aggregator's idempotency id.

-- +goose Up
ALTER TABLE workspaces ADD COLUMN transfers_closed BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE workspaces ADD COLUMN transfer_daily_cap INTEGER NOT NULL DEFAULT 200;

CREATE TABLE transfers (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    livemode            BOOLEAN NOT NULL,
    reference           TEXT NOT NULL UNIQUE,
    status              TEXT NOT NULL,
    amount              BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    country             TEXT NOT NULL,
    operator            TEXT NOT NULL,
    provider_operator   TEXT NOT NULL,
    phone               TEXT NOT NULL,
    recipient_name      TEXT NOT NULL DEFAULT '',
    description         TEXT NOT NULL DEFAULT '',
    gateway_id          TEXT NOT NULL REFERENCES gateways (id),
    provider            TEXT NOT NULL,
    provider_ref        TEXT NOT NULL DEFAULT '',
    failure_code        TEXT NOT NULL DEFAULT '',
    failure_message     TEXT NOT NULL DEFAULT '',
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    completed_at        BIGINT,
    initiated_at        BIGINT,
    checked_at          BIGINT,
    callback_checked_at BIGINT
);
CREATE INDEX transfers_list ON transfers (workspace_id, livemode, created_at);
CREATE INDEX transfers_processing ON transfers (status, created_at);

-- +goose Down
DROP TABLE transfers;
ALTER TABLE workspaces DROP COLUMN transfer_daily_cap;
ALTER TABLE workspaces DROP COLUMN transfers_closed;
