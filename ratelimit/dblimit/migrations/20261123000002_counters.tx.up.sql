-- One row per key and window: the window open now (its start in Unix
-- seconds, aligned to its length) and the requests it admitted. A later
-- window replaces the row's start and count; a clock that steps back keeps
-- counting in the window already open. Idempotent, like every migration here.
CREATE TABLE IF NOT EXISTS ratelimit_counters (
    limit_key    VARCHAR(200) NOT NULL,
    name         VARCHAR(64)  NOT NULL,
    length_s     BIGINT       NOT NULL,
    window_start BIGINT       NOT NULL,
    count        BIGINT       NOT NULL,
    PRIMARY KEY (limit_key, name, length_s)
);
