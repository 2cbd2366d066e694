-- The reconciler looks for abandoned sessions (PENDING, old, nothing
-- waiting) every 10 seconds on every node: with no index leading with the
-- status, both databases read every session ever created to find them. A
-- partial index holds the PENDING ones alone (a day's worth at most: the
-- reconciler cancels them after 24 hours), so the look costs what is
-- pending, not the history. The query names the status as a literal, as
-- a partial index needs.

-- +goose Up
CREATE INDEX checkout_sessions_pending ON checkout_sessions (created_at) WHERE status = 'PENDING';

-- +goose Down
DROP INDEX checkout_sessions_pending;
