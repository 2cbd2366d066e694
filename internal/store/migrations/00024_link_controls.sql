-- Payment links with controls (issue 19, point 3): an optional expiry, a
-- limit of successful payments, a payer's phone number, the merchant's
-- metadata. The links' list is read newest first, page by page after a
-- link (keyset), in its index's order; the admission of a payment counts a
-- link's sessions by status.

-- +goose Up
ALTER TABLE payment_links ADD COLUMN expires_at BIGINT;
ALTER TABLE payment_links ADD COLUMN max_payments BIGINT;
ALTER TABLE payment_links ADD COLUMN phone TEXT NOT NULL DEFAULT '';
ALTER TABLE payment_links ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
DROP INDEX payment_links_workspace;
CREATE INDEX payment_links_list ON payment_links (workspace_id, created_at, id);
CREATE INDEX checkout_sessions_link_status ON checkout_sessions (link_id, status);

-- +goose Down
DROP INDEX checkout_sessions_link_status;
DROP INDEX payment_links_list;
CREATE INDEX payment_links_workspace ON payment_links (workspace_id, created_at);
ALTER TABLE payment_links DROP COLUMN metadata;
ALTER TABLE payment_links DROP COLUMN phone;
ALTER TABLE payment_links DROP COLUMN max_payments;
ALTER TABLE payment_links DROP COLUMN expires_at;
