UPDATE webhook_endpoints SET created_at = created_at / 1000 WHERE created_at >= 100000000000000;
--bun:split
UPDATE webhook_endpoints SET disabled_at = disabled_at / 1000 WHERE disabled_at >= 100000000000000;
--bun:split
UPDATE webhook_secrets SET created_at = created_at / 1000 WHERE created_at >= 100000000000000;
--bun:split
UPDATE webhook_secrets SET expires_at = expires_at / 1000 WHERE expires_at >= 100000000000000;
--bun:split
UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at / 1000 WHERE next_attempt_at >= 100000000000000;
--bun:split
UPDATE webhook_deliveries SET created_at = created_at / 1000 WHERE created_at >= 100000000000000;
--bun:split
UPDATE webhook_deliveries SET updated_at = updated_at / 1000 WHERE updated_at >= 100000000000000;
--bun:split
UPDATE webhook_deliveries SET completed_at = completed_at / 1000 WHERE completed_at >= 100000000000000;
--bun:split
UPDATE webhook_attempts SET started_at = started_at / 1000 WHERE started_at >= 100000000000000;
