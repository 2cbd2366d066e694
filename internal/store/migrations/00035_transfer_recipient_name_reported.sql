-- The recipient's name a transfer's own payout result reported (issue 25,
-- point 1: M-Pesa's B2C result, ReceiverPartyPublicName without the
-- number); '' until an aggregator reports one.

-- +goose Up
ALTER TABLE transfers ADD COLUMN recipient_name_reported TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE transfers DROP COLUMN recipient_name_reported;
