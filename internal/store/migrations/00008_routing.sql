-- Outcomes of payments, payouts and aggregator calls, counted per provider,
-- context and minute across every workspace (no workspace data): what the
-- routing engine learns from, shared by every node.

-- +goose Up
CREATE TABLE routing_outcomes (
    provider   TEXT NOT NULL,
    country    TEXT NOT NULL,  -- '' for calls
    operator   TEXT NOT NULL,  -- '' for calls
    kind       TEXT NOT NULL,  -- collect, payout, call
    minute     BIGINT NOT NULL, -- Unix minutes
    successes  INTEGER NOT NULL DEFAULT 0, -- calls: answered
    failures   INTEGER NOT NULL DEFAULT 0,
    technical  INTEGER NOT NULL DEFAULT 0,
    latency_ms BIGINT NOT NULL DEFAULT 0,  -- sum over the minute
    PRIMARY KEY (provider, country, operator, kind, minute)
);
CREATE INDEX routing_outcomes_minute ON routing_outcomes (minute);

-- The routing reason that chose an attempt's gateway.
ALTER TABLE payment_attempts ADD COLUMN route_reason TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment_attempts DROP COLUMN route_reason;
DROP TABLE routing_outcomes;
