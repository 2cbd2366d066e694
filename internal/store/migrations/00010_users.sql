-- The merchant dashboard: users, their workspaces, their signed-in sessions.

-- +goose Up
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL, -- bcrypt
    created_at    BIGINT NOT NULL
);

CREATE TABLE memberships (
    user_id      TEXT NOT NULL REFERENCES users (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, workspace_id)
);

-- A signed-in session: the cookie holds a random token, the table its hash.
CREATE TABLE dashboard_sessions (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id),
    workspace_id TEXT NOT NULL DEFAULT '', -- '' until one is selected
    livemode     BOOLEAN NOT NULL DEFAULT true,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);

-- +goose Down
DROP TABLE dashboard_sessions;
DROP TABLE memberships;
DROP TABLE users;
