-- A session's expiry (issue 19, point 2): given on creation (expires_at),
-- 24 hours after its creation by default, as the reconciler cancelled
-- them until now. The sessions made before keep that rule: their expiry is
-- their creation plus 24 hours (microseconds).
--
-- The reconciler looks for the PENDING sessions whose expiry has passed
-- every 10 seconds on every node; the partial index of the PENDING
-- sessions is now by expiry instead of creation, so the look still costs
-- what is pending, not the history. The query names the status as a
-- literal, as a partial index needs.

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
UPDATE checkout_sessions SET expires_at = created_at + 86400000000;
DROP INDEX checkout_sessions_pending;
CREATE INDEX checkout_sessions_pending ON checkout_sessions (expires_at) WHERE status = 'PENDING';

-- +goose Down
DROP INDEX checkout_sessions_pending;
CREATE INDEX checkout_sessions_pending ON checkout_sessions (created_at) WHERE status = 'PENDING';
ALTER TABLE checkout_sessions DROP COLUMN expires_at;
