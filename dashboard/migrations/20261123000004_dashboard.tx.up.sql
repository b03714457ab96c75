-- Dashboard sign-in links and sessions. Only SHA-256 hashes of their tokens
-- are stored (lowercase hex); times are Unix microseconds, UTC.
CREATE TABLE IF NOT EXISTS dashboard_links (
    token_hash CHAR(64) NOT NULL PRIMARY KEY,
    created_at BIGINT   NOT NULL,
    expires_at BIGINT   NOT NULL,
    used_at    BIGINT
);
--bun:split
CREATE TABLE IF NOT EXISTS dashboard_sessions (
    id_hash     CHAR(64)   NOT NULL PRIMARY KEY,
    environment VARCHAR(8) NOT NULL,
    created_at  BIGINT     NOT NULL,
    expires_at  BIGINT     NOT NULL
);
