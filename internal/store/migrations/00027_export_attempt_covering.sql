-- The export and the transactions page name each session's deciding
-- attempt's operator and aggregator reference (two look-ups per row in
-- payment_attempts_session). With provider_ref in that index too, both
-- read the index alone, not also the attempt's row: with a year of
-- history, a page of the table read at random per exported row.

-- +goose Up
DROP INDEX payment_attempts_session;
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at, status, provider, operator, provider_ref);

-- +goose Down
DROP INDEX payment_attempts_session;
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at, status, provider, operator);
