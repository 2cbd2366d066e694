-- Why a gateway cannot be used now (its connector cannot be built:
-- credentials that no longer decrypt, ...), recorded by the service when
-- it changes and shown on the dashboard's gateways page.

-- +goose Up
ALTER TABLE gateways ADD COLUMN problem TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE gateways DROP COLUMN problem;
