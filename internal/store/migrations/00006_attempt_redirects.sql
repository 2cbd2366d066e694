-- Some payments finish on the aggregator's own page (cards, CinetPay's
-- guichet): the attempt keeps that page's address, so that a customer who
-- comes back to the hosted page can go on paying.

-- +goose Up
ALTER TABLE payment_attempts ADD COLUMN redirect_url TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment_attempts DROP COLUMN redirect_url;
