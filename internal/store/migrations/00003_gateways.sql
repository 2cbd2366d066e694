-- Gateways: a merchant's accounts at aggregators.

-- +goose Up
CREATE TABLE gateways (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    provider         TEXT NOT NULL,
    name             TEXT NOT NULL,
    live             BOOLEAN NOT NULL,
    base_url         TEXT NOT NULL DEFAULT '',
    collect          BOOLEAN NOT NULL,
    payout           BOOLEAN NOT NULL,
    enabled          BOOLEAN NOT NULL DEFAULT true,
    routes           TEXT NOT NULL,          -- JSON: [{country, operator, code, enabled}]
    credentials      TEXT NOT NULL,          -- JSON object sealed under the master key; '' once removed
    credential_hints TEXT NOT NULL,          -- JSON: {field: last 4 characters}
    created_at       BIGINT NOT NULL,
    removed_at       BIGINT
);
CREATE INDEX gateways_workspace ON gateways (workspace_id);

-- +goose Down
DROP TABLE gateways;
