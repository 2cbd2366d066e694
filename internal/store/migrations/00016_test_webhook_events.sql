-- Each mode has its own selection of events, so that a test key, which
-- sets the test selection, never changes what production receives. The
-- test selection starts as the one both modes shared.

-- +goose Up
ALTER TABLE workspaces ADD COLUMN test_webhook_events TEXT NOT NULL DEFAULT '';
UPDATE workspaces SET test_webhook_events = webhook_events;

-- +goose Down
ALTER TABLE workspaces DROP COLUMN test_webhook_events;
