-- Key rolls, invitations to a workspace, the audit log, and an index for
-- the gateways' health.

-- +goose Up
-- A rolled key keeps working until api_keys.revoked_at (now + the grace
-- period the merchant picked); the column already exists.

CREATE TABLE invitations (
    token_hash  TEXT PRIMARY KEY,          -- SHA-256 of the link's token
    id          TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    email       TEXT NOT NULL,
    invited_by  TEXT NOT NULL,             -- user id
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    accepted_at BIGINT,
    revoked_at  BIGINT
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);

-- Every administrative action: who did what to which workspace. Rows are
-- only ever added.
CREATE TABLE audit_log (
    id           TEXT PRIMARY KEY,
    at           BIGINT NOT NULL,
    actor        TEXT NOT NULL,            -- user:usr_..., cli, partner:...
    action       TEXT NOT NULL,            -- key.rolled, invitation.created, ...
    workspace_id TEXT NOT NULL DEFAULT '',
    detail       TEXT NOT NULL DEFAULT '{}' -- JSON object, never a secret
);
CREATE INDEX audit_log_workspace ON audit_log (workspace_id, at);

-- A gateway's recent attempts, for its health on the dashboard.
CREATE INDEX payment_attempts_gateway ON payment_attempts (gateway_id, created_at);

-- +goose Down
DROP INDEX payment_attempts_gateway;
DROP TABLE audit_log;
DROP TABLE invitations;
