-- Callbacks have their own throttle: a status read by a poll must not make
-- the aggregator's callback, which is news, wait for the next poll.

-- +goose Up
ALTER TABLE payment_attempts ADD COLUMN callback_checked_at BIGINT;

-- +goose Down
ALTER TABLE payment_attempts DROP COLUMN callback_checked_at;
