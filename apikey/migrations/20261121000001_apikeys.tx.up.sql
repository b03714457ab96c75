-- API keys. Only the SHA-256 of a secret is stored (lowercase hex), never the
-- secret. Times are Unix milliseconds (UTC; microseconds since migration
-- 20261123000001) in BIGINT columns so that the same
-- SQL runs on SQLite and Postgres. Every statement is idempotent, so two
-- processes migrating at once do no harm.
CREATE TABLE IF NOT EXISTS apikey_keys (
    id           VARCHAR(64) NOT NULL PRIMARY KEY,
    lineage_id   VARCHAR(64) NOT NULL,
    environment  VARCHAR(8)  NOT NULL,
    name         TEXT        NOT NULL,
    plan         VARCHAR(16) NOT NULL,
    per_minute   BIGINT      NOT NULL,
    per_day      BIGINT      NOT NULL,
    secret_hash  CHAR(64)    NOT NULL,
    display      VARCHAR(32) NOT NULL,
    created_at   BIGINT      NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT,
    expires_at   BIGINT
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS apikey_keys_secret_hash_idx ON apikey_keys (secret_hash);
