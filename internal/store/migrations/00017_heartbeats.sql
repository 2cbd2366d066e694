-- Each node writes its heartbeat here when asked whether it is ready
-- (GET /readyz): a store that can be read but not written (a full disk)
-- makes the node not ready.

-- +goose Up
CREATE TABLE node_heartbeats (
    node TEXT PRIMARY KEY,
    at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE node_heartbeats;
