-- The customer step a pending payment waits for besides the redirect
-- (redirect_url): a code the aggregator sent the customer (needs_code,
-- Paystack's send_otp) and the aggregator's own instructions (a USSD code
-- to dial, "approve on your phone"), shown by the hosted page.

-- +goose Up
ALTER TABLE payment_attempts ADD COLUMN needs_code BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE payment_attempts ADD COLUMN instructions TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment_attempts DROP COLUMN instructions;
ALTER TABLE payment_attempts DROP COLUMN needs_code;
