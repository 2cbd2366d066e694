-- Payment attempts: each try to collect a session through a gateway.

-- +goose Up
CREATE TABLE payment_attempts (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES checkout_sessions (id),
    gateway_id    TEXT NOT NULL REFERENCES gateways (id),
    provider      TEXT NOT NULL,
    reference     TEXT NOT NULL UNIQUE,
    country       TEXT NOT NULL,
    operator      TEXT NOT NULL,
    operator_code TEXT NOT NULL,
    phone         TEXT NOT NULL,
    status        TEXT NOT NULL,         -- pending | succeeded | failed
    reason        TEXT NOT NULL DEFAULT '',
    provider_ref  TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    checked_at    BIGINT,
    initiated_at  BIGINT                 -- when the initiation call returned; NULL while it runs
);
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at);
CREATE INDEX payment_attempts_pending ON payment_attempts (status, checked_at);

-- +goose Down
DROP TABLE payment_attempts;
