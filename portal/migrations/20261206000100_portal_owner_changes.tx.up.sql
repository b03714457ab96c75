-- The owner changes the portal sent (setOwner, paid by the operator): at
-- most one in flight per customer (the partial unique index), each
-- recorded with what it cost once mined; and the per-customer daily window
-- that bounds how many the portal sends.
CREATE TABLE IF NOT EXISTS portal_owner_changes (
    nonce       CHAR(66)     NOT NULL PRIMARY KEY,
    environment VARCHAR(8)   NOT NULL,
    customer_id VARCHAR(300) NOT NULL,
    address     CHAR(42)     NOT NULL,
    deadline    BIGINT       NOT NULL,
    created_at  BIGINT       NOT NULL,
    tx_hash     CHAR(66),
    effective   VARCHAR(16)  NOT NULL DEFAULT '',
    status      VARCHAR(16)  NOT NULL,
    gas_used    BIGINT       NOT NULL DEFAULT 0,
    fee_wei     VARCHAR(80)  NOT NULL DEFAULT '0'
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS portal_owner_changes_in_flight ON portal_owner_changes (environment, customer_id)
    WHERE status IN ('sending', 'pending');
--bun:split
CREATE INDEX IF NOT EXISTS portal_owner_changes_customer ON portal_owner_changes (environment, customer_id, created_at);
--bun:split
CREATE TABLE IF NOT EXISTS portal_owner_windows (
    environment VARCHAR(8)   NOT NULL,
    customer_id VARCHAR(300) NOT NULL,
    day         BIGINT       NOT NULL,
    count       INTEGER      NOT NULL,
    PRIMARY KEY (environment, customer_id, day)
);
