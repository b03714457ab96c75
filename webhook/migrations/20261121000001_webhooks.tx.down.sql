DROP TABLE IF EXISTS webhook_attempts;
--bun:split
DROP TABLE IF EXISTS webhook_deliveries;
--bun:split
DROP TABLE IF EXISTS webhook_secrets;
--bun:split
DROP TABLE IF EXISTS webhook_endpoints;
