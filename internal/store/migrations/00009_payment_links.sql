-- Payment links: a fixed amount, paid through sessions attached to the link.

-- +goose Up
CREATE TABLE payment_links (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    slug         TEXT NOT NULL UNIQUE,
    title        TEXT NOT NULL,
    amount       BIGINT NOT NULL,
    currency     TEXT NOT NULL,
    active       BOOLEAN NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX payment_links_workspace ON payment_links (workspace_id, created_at);

ALTER TABLE checkout_sessions ADD COLUMN link_id TEXT NOT NULL DEFAULT '';
CREATE INDEX checkout_sessions_link ON checkout_sessions (link_id, created_at);

-- +goose Down
DROP INDEX checkout_sessions_link;
ALTER TABLE checkout_sessions DROP COLUMN link_id;
DROP TABLE payment_links;
