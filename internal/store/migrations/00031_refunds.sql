-- Refunds: money given back to the payer of a successful session, through
-- the aggregator that collected it or by a transfer. A refund is written
-- (pending) under its session's lock, before its aggregator is called; its
-- reference is the aggregator's idempotency id where it takes one.

-- +goose Up
CREATE TABLE refunds (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    livemode            BOOLEAN NOT NULL,
    session_id          TEXT NOT NULL REFERENCES checkout_sessions (id),
    attempt_id          TEXT NOT NULL DEFAULT '',
    gateway_id          TEXT NOT NULL DEFAULT '',
    provider            TEXT NOT NULL,
    reference           TEXT NOT NULL UNIQUE,
    status              TEXT NOT NULL,
    amount              BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    method              TEXT NOT NULL,
    reason              TEXT NOT NULL DEFAULT '',
    provider_ref        TEXT NOT NULL DEFAULT '',
    transfer_id         TEXT NOT NULL DEFAULT '',
    failure_code        TEXT NOT NULL DEFAULT '',
    failure_message     TEXT NOT NULL DEFAULT '',
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    completed_at        BIGINT,
    initiated_at        BIGINT,
    checked_at          BIGINT,
    callback_checked_at BIGINT
);
-- The list, newest first, whole or by status or by transaction; a
-- session's refunds under its lock; the reconciler's pending ones; a
-- payout's refund.
CREATE INDEX refunds_list ON refunds (workspace_id, livemode, created_at, id);
CREATE INDEX refunds_status_list ON refunds (workspace_id, livemode, status, created_at, id);
CREATE INDEX refunds_session ON refunds (session_id, created_at, id);
CREATE INDEX refunds_pending ON refunds (status, created_at);
CREATE INDEX refunds_transfer ON refunds (transfer_id);

-- +goose Down
DROP TABLE refunds;
