-- Portable SQL: the same file runs on SQLite and PostgreSQL. Times are
-- BIGINT microseconds since the Unix epoch (UTC), booleans are BOOLEAN,
-- money is BIGINT minor units. Split into per-dialect folders only when the
-- SQL truly differs.

-- +goose Up
CREATE TABLE workspaces (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    verified         BOOLEAN NOT NULL DEFAULT false,
    connect          BOOLEAN NOT NULL DEFAULT false,
    default_currency TEXT NOT NULL DEFAULT 'XOF',
    created_at       BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    kind          TEXT NOT NULL,          -- pub | sec
    live          BOOLEAN NOT NULL,
    hash          TEXT NOT NULL UNIQUE,   -- SHA-256 of the key, for look-up
    sealed        TEXT NOT NULL,          -- the key under the master key (AES-GCM)
    last4         TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    revoked_at    BIGINT
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE checkout_sessions (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    livemode       BOOLEAN NOT NULL,
    status         TEXT NOT NULL,
    amount         BIGINT NOT NULL CHECK (amount > 0),
    currency       TEXT NOT NULL,
    customer_name  TEXT NOT NULL DEFAULT '',
    customer_email TEXT NOT NULL DEFAULT '',
    customer_phone TEXT NOT NULL DEFAULT '',
    description    TEXT NOT NULL DEFAULT '',
    success_url    TEXT NOT NULL DEFAULT '',
    cancel_url     TEXT NOT NULL DEFAULT '',
    merchant_name  TEXT NOT NULL DEFAULT '',
    merchant_logo  TEXT NOT NULL DEFAULT '',
    metadata       TEXT NOT NULL DEFAULT '{}',
    provider       TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    completed_at   BIGINT
);
CREATE INDEX checkout_sessions_list ON checkout_sessions (workspace_id, livemode, created_at);

-- One row per (workspace, mode, key). The row and the object it created are
-- written in one transaction, so a key never points at nothing.
CREATE TABLE idempotency_keys (
    workspace_id  TEXT NOT NULL,
    livemode      BOOLEAN NOT NULL,
    key           TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,          -- SHA-256 of the normalised request
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, livemode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- The outbox: every status change writes its event in the same transaction.
CREATE TABLE events (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    livemode     BOOLEAN NOT NULL,
    type         TEXT NOT NULL,
    session_id   TEXT,
    transfer_id  TEXT,
    data         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX events_session ON events (session_id);
CREATE INDEX events_created ON events (workspace_id, created_at);

-- +goose Down
DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE checkout_sessions;
DROP TABLE api_keys;
DROP TABLE workspaces;
