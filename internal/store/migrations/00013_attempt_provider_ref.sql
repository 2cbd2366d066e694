-- Callbacks that name a payment only by the aggregator's own id (M-Pesa's
-- CheckoutRequestID) find its attempt by it.

-- +goose Up
CREATE INDEX payment_attempts_provider_ref ON payment_attempts (gateway_id, provider_ref);

-- +goose Down
DROP INDEX payment_attempts_provider_ref;
