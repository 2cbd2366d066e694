-- The webhooks page showed a workspace's unread notifications by reading
-- every notification it ever had, dismissed ones included. It now reads a
-- page of the unread ones of its mode, and their count, through an index
-- of the unread ones alone.

-- +goose Up
CREATE INDEX notifications_unread ON notifications (workspace_id, livemode, created_at, id) WHERE read_at IS NULL;

-- +goose Down
DROP INDEX notifications_unread;
