-- Every change to an API key or to a workspace's row adds one to this
-- counter in its own transaction: each node's cache of API keys is cleared
-- when it sees the counter move (and at once through PostgreSQL's NOTIFY).

-- +goose Up
CREATE TABLE key_cache_epoch (
    id INTEGER PRIMARY KEY,
    n  BIGINT NOT NULL
);
INSERT INTO key_cache_epoch (id, n) VALUES (1, 0);

-- +goose Down
DROP TABLE key_cache_epoch;
