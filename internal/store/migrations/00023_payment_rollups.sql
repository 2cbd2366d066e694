-- The dashboard's overview read every session and attempt of its period on
-- each load (a second a page with a year of history). Its figures are now
-- kept as payments move: each change of a session's or an attempt's count
-- (created, or moved from one status to another) is appended to
-- payment_rollup_changes in the transaction of the change itself (an
-- append: concurrent payments of one merchant never wait on one counter
-- row), and folded into payment_rollups in the background. The overview
-- reads both. A row counts the sessions (kind 'session') or the attempts
-- (kind 'attempt', by provider and operator) of a workspace's mode, created
-- on one UTC day (days since the epoch), in one currency and one status,
-- with the sessions' amount. Filled here from the payments already stored;
-- `cauri overview rebuild` recounts them the same way.

-- +goose Up
CREATE TABLE payment_rollups (
    workspace_id TEXT NOT NULL,
    livemode     BOOLEAN NOT NULL,
    day          BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    currency     TEXT NOT NULL,
    provider     TEXT NOT NULL,
    operator     TEXT NOT NULL,
    status       TEXT NOT NULL,
    n            BIGINT NOT NULL,
    volume       BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, livemode, day, kind, currency, provider, operator, status)
);
-- The daily purge of test data takes the test counts of its old days.
CREATE INDEX payment_rollups_purge ON payment_rollups (livemode, day);

CREATE TABLE payment_rollup_changes (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    livemode     BOOLEAN NOT NULL,
    day          BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    currency     TEXT NOT NULL,
    provider     TEXT NOT NULL,
    operator     TEXT NOT NULL,
    status       TEXT NOT NULL,
    n            BIGINT NOT NULL,
    volume       BIGINT NOT NULL
);
CREATE INDEX payment_rollup_changes_period ON payment_rollup_changes (workspace_id, livemode, day);

INSERT INTO payment_rollups (workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume)
SELECT workspace_id, livemode, created_at / 86400000000, 'session', currency, '', '', status, COUNT(*), CAST(SUM(amount) AS BIGINT)
FROM checkout_sessions GROUP BY workspace_id, livemode, created_at / 86400000000, currency, status;

INSERT INTO payment_rollups (workspace_id, livemode, day, kind, currency, provider, operator, status, n, volume)
SELECT s.workspace_id, s.livemode, s.created_at / 86400000000, 'attempt', s.currency, a.provider, a.operator, a.status, COUNT(*), CAST(SUM(s.amount) AS BIGINT)
FROM payment_attempts a JOIN checkout_sessions s ON s.id = a.session_id
GROUP BY s.workspace_id, s.livemode, s.created_at / 86400000000, s.currency, a.provider, a.operator, a.status;

-- +goose Down
DROP TABLE payment_rollup_changes;
DROP TABLE payment_rollups;
