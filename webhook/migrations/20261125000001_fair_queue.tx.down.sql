-- Back to first come, first served: each endpoint's due deliveries by due time.
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_idx
    ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
--bun:split
DROP TABLE IF EXISTS webhook_lanes;
--bun:split
DROP INDEX IF EXISTS webhook_deliveries_retry;
--bun:split
DROP INDEX IF EXISTS webhook_deliveries_fair;
--bun:split
ALTER TABLE webhook_deliveries DROP COLUMN fair_key;
--bun:split
ALTER TABLE webhook_deliveries DROP COLUMN lane;
