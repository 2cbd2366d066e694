-- A transfer's check of its recipient's name (issue 19, point 4): '' when
-- not asked, 'matched' when the aggregator's name for the account matched
-- recipient_name, 'unavailable' when no name could be had (the transfer
-- was sent unchecked). A name that clearly differed refused the transfer:
-- nothing was written.

-- +goose Up
ALTER TABLE transfers ADD COLUMN recipient_name_check TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE transfers DROP COLUMN recipient_name_check;
