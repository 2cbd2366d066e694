-- Every change to an API key or to a workspace's row adds one to n in its
-- own transaction: each node's cache of API keys is cleared when it sees n
-- move (and at once through PostgreSQL's NOTIFY). An SQLite server writes
-- in cleared the n it cleared its cache at: the CLI's change waits for it.

-- +goose Up
CREATE TABLE key_cache_epoch (
    id INTEGER PRIMARY KEY,
    n       BIGINT NOT NULL,
    cleared BIGINT NOT NULL
);
INSERT INTO key_cache_epoch (id, n, cleared) VALUES (1, 0, 0);

-- +goose Down
DROP TABLE key_cache_epoch;
