-- The dashboard's overview sums a workspace's sessions of a period by day,
-- currency and status, and its attempts by provider, operator and status:
-- with those columns in the indexes it reads the indexes alone, not one
-- table page per session (a merchant's sessions are scattered among
-- everyone's as the store grows). The sessions' index keeps the lists'
-- order (created_at, id) first.

-- +goose Up
DROP INDEX checkout_sessions_list;
CREATE INDEX checkout_sessions_list ON checkout_sessions (workspace_id, livemode, created_at, id, status, currency, amount);
DROP INDEX payment_attempts_session;
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at, status, provider, operator);

-- +goose Down
DROP INDEX checkout_sessions_list;
CREATE INDEX checkout_sessions_list ON checkout_sessions (workspace_id, livemode, created_at, id);
DROP INDEX payment_attempts_session;
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at);
