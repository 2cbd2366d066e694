-- The amounts the routing engine learns a provider's ceiling from (issue
-- 23, point 1), per provider, context and minute: the smallest amount the
-- provider refused at once for its size, how many it refused so, and the
-- largest it collected or paid out. 0: none that minute (the rows written
-- before say nothing of amounts, and read as such).

-- +goose Up
ALTER TABLE routing_outcomes ADD COLUMN refused_min BIGINT NOT NULL DEFAULT 0;
ALTER TABLE routing_outcomes ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE routing_outcomes ADD COLUMN succeeded_max BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE routing_outcomes DROP COLUMN succeeded_max;
ALTER TABLE routing_outcomes DROP COLUMN refusals;
ALTER TABLE routing_outcomes DROP COLUMN refused_min;
