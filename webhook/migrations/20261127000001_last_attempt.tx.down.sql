-- Every attempt back in webhook_attempts: the one held on its delivery's
-- row moves there before the columns go.
INSERT INTO webhook_attempts (delivery_id, attempt, started_at, latency_us, status_code, error, response_body)
SELECT id, last_attempt, COALESCE(last_started_at, 0), last_latency_us, last_status_code, last_error, last_response_body
FROM webhook_deliveries WHERE last_attempt > 0
ON CONFLICT (delivery_id, attempt) DO NOTHING;
--bun:split
ALTER TABLE webhook_deliveries DROP COLUMN last_response_body;
--bun:split
ALTER TABLE webhook_deliveries DROP COLUMN last_latency_us;
--bun:split
ALTER TABLE webhook_deliveries DROP COLUMN last_started_at;
--bun:split
ALTER TABLE webhook_deliveries DROP COLUMN last_attempt;
