-- Webhook endpoints, their secrets, deliveries and delivery attempts.
-- Times are Unix milliseconds (UTC; microseconds since migration
-- 20261123000001) in BIGINT columns so that the same SQL
-- runs on SQLite and Postgres. Every statement is idempotent, so two
-- processes migrating at once do no harm.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id              VARCHAR(64)  NOT NULL PRIMARY KEY,
    environment     VARCHAR(8)   NOT NULL,
    url             TEXT         NOT NULL,
    description     TEXT         NOT NULL DEFAULT '',
    created_at      BIGINT       NOT NULL,
    disabled_at     BIGINT,
    disabled_reason TEXT         NOT NULL DEFAULT ''
);
--bun:split
CREATE INDEX IF NOT EXISTS webhook_endpoints_environment_idx
    ON webhook_endpoints (environment, id);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_secrets (
    endpoint_id VARCHAR(64) NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    secret      TEXT        NOT NULL,
    created_at  BIGINT      NOT NULL,
    expires_at  BIGINT,
    PRIMARY KEY (endpoint_id, secret)
);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id               VARCHAR(64)  NOT NULL PRIMARY KEY,
    event_id         VARCHAR(64)  NOT NULL,
    event_type       VARCHAR(64)  NOT NULL,
    endpoint_id      VARCHAR(64)  NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    environment      VARCHAR(8)   NOT NULL,
    payload          TEXT         NOT NULL,
    status           VARCHAR(16)  NOT NULL,
    attempts         INTEGER      NOT NULL DEFAULT 0,
    schedule_start   INTEGER      NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT       NOT NULL,
    lease_owner      VARCHAR(128) NOT NULL DEFAULT '',
    last_status_code INTEGER      NOT NULL DEFAULT 0,
    last_error       TEXT         NOT NULL DEFAULT '',
    created_at       BIGINT       NOT NULL,
    updated_at       BIGINT       NOT NULL,
    completed_at     BIGINT,
    UNIQUE (event_id, endpoint_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_idx
    ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
--bun:split
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_idx
    ON webhook_deliveries (endpoint_id, id);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_attempts (
    delivery_id   VARCHAR(64) NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt       INTEGER     NOT NULL,
    started_at    BIGINT      NOT NULL,
    latency_us    BIGINT      NOT NULL,
    status_code   INTEGER     NOT NULL,
    error         TEXT        NOT NULL DEFAULT '',
    response_body TEXT        NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, attempt)
);
