-- Customer portal: one-time sign-in links, sessions, the connect nonces it
-- issued, and the deposits it relayed. Only SHA-256 hashes of link and
-- session tokens are stored (lowercase hex); times are Unix microseconds,
-- UTC; amounts integer cents.
CREATE TABLE IF NOT EXISTS portal_links (
    token_hash  CHAR(64)     NOT NULL PRIMARY KEY,
    id          VARCHAR(40)  NOT NULL,
    environment VARCHAR(8)   NOT NULL,
    customer_id VARCHAR(300) NOT NULL,
    preview     SMALLINT     NOT NULL DEFAULT 0,
    created_at  BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL,
    used_at     BIGINT
);
--bun:split
CREATE TABLE IF NOT EXISTS portal_sessions (
    id_hash     CHAR(64)     NOT NULL PRIMARY KEY,
    link_id     VARCHAR(40)  NOT NULL,
    environment VARCHAR(8)   NOT NULL,
    customer_id VARCHAR(300) NOT NULL,
    preview     SMALLINT     NOT NULL DEFAULT 0,
    created_at  BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS portal_nonces (
    nonce       CHAR(66)     NOT NULL PRIMARY KEY,
    session     CHAR(64)     NOT NULL,
    environment VARCHAR(8)   NOT NULL,
    customer_id VARCHAR(300) NOT NULL,
    address     CHAR(42)     NOT NULL,
    deadline    BIGINT       NOT NULL,
    used_at     BIGINT
);
--bun:split
CREATE TABLE IF NOT EXISTS portal_relays (
    tx_hash      CHAR(66)     NOT NULL PRIMARY KEY,
    environment  VARCHAR(8)   NOT NULL,
    customer_id  VARCHAR(300) NOT NULL,
    from_address CHAR(42)     NOT NULL,
    amount       BIGINT       NOT NULL,
    created_at   BIGINT       NOT NULL,
    status       VARCHAR(16)  NOT NULL,
    gas_used     BIGINT       NOT NULL DEFAULT 0,
    fee_wei      VARCHAR(80)  NOT NULL DEFAULT '0'
);
--bun:split
CREATE INDEX IF NOT EXISTS portal_relays_customer ON portal_relays (environment, customer_id, created_at);
--bun:split
CREATE TABLE IF NOT EXISTS portal_relay_windows (
    environment VARCHAR(8)   NOT NULL,
    customer_id VARCHAR(300) NOT NULL,
    hour        BIGINT       NOT NULL,
    count       INTEGER      NOT NULL,
    PRIMARY KEY (environment, customer_id, hour)
);
