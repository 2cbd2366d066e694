-- The final id an aggregator's authenticated callback proved for a payment
-- before a status read confirmed it (M-Pesa's receipt number, from the
-- push's own tokened CallBackURL, when the STK query still said
-- "processing"): kept with the pending attempt, and its provider_ref once
-- the payment succeeds. '' when there is none.

-- +goose Up
ALTER TABLE payment_attempts ADD COLUMN final_ref TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment_attempts DROP COLUMN final_ref;
