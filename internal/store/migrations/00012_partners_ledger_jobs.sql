-- Partners (provisioning products), the ledger of Connect workspaces, and
-- the runs of once-a-day jobs shared by every node.

-- +goose Up
CREATE TABLE partners (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,   -- SHA-256 of the partner's secret
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);

-- The workspaces a partner created: it sees those only.
ALTER TABLE workspaces ADD COLUMN partner_id TEXT NOT NULL DEFAULT '';
CREATE INDEX workspaces_partner ON workspaces (partner_id, created_at);

-- Double-entry ledger. A movement (a payment collected for a Connect
-- workspace, a settlement paid out to it) has entries that sum to zero per
-- currency; amounts are signed minor units (debit positive). Rows are only
-- ever added.
CREATE TABLE ledger_movements (
    id           TEXT PRIMARY KEY,
    key          TEXT NOT NULL UNIQUE,  -- what moved, once: payment:<session id>, payout:<reference>
    kind         TEXT NOT NULL,         -- payment | payout
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    currency     TEXT NOT NULL,
    amount       BIGINT NOT NULL CHECK (amount > 0),
    description  TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);
CREATE INDEX ledger_movements_workspace ON ledger_movements (workspace_id, created_at);

CREATE TABLE ledger_entries (
    id          TEXT PRIMARY KEY,
    movement_id TEXT NOT NULL REFERENCES ledger_movements (id),
    account     TEXT NOT NULL,          -- platform:collected | platform:paid_out | workspace:<id>
    currency    TEXT NOT NULL,
    amount      BIGINT NOT NULL CHECK (amount <> 0),
    created_at  BIGINT NOT NULL
);
CREATE INDEX ledger_entries_account ON ledger_entries (account, currency);

-- Once-a-day jobs: the node that moves next_run_at forward runs the job.
CREATE TABLE job_runs (
    name        TEXT PRIMARY KEY,
    next_run_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE job_runs;
DROP TABLE ledger_entries;
DROP TABLE ledger_movements;
DROP INDEX workspaces_partner;
ALTER TABLE workspaces DROP COLUMN partner_id;
DROP TABLE partners;
