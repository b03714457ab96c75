-- A fair queue: each endpoint takes its pending deliveries from customers in
-- turn. A delivery's lane is the customer its event belongs to ('' for events
-- that name none); its place in its endpoint's line is its fair_key, given
-- when it is recorded: one past the lane's last key on that endpoint
-- (webhook_lanes) or, if that is behind, one past the head of the endpoint's
-- line (its least key not yet attempted; with none, the greatest key given).
-- Due deliveries are claimed in (fair_key, id) order. Keys are compared among
-- one endpoint's pending deliveries only.
ALTER TABLE webhook_deliveries ADD COLUMN lane TEXT NOT NULL DEFAULT '';
--bun:split
ALTER TABLE webhook_deliveries ADD COLUMN fair_key BIGINT NOT NULL DEFAULT 0;
--bun:split
-- The deliveries pending at the upgrade keep the order they were claimed in
-- (next attempt, then id) and go before every delivery recorded later: their
-- keys are negative (-n … -1), and recorded keys start at 1.
UPDATE webhook_deliveries SET fair_key = r.k
FROM (SELECT id, -row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at DESC, id DESC) AS k
    FROM webhook_deliveries WHERE status = 'pending') AS r
WHERE webhook_deliveries.id = r.id;
--bun:split
-- The line: an endpoint's deliveries not yet attempted (in this retry
-- schedule), in line order, for the claim and the head of the line; with
-- the due time, so that the claim passes over the ones leased (in flight)
-- in the index alone.
CREATE INDEX IF NOT EXISTS webhook_deliveries_fair
    ON webhook_deliveries (endpoint_id, fair_key, id, next_attempt_at, attempts, schedule_start)
    WHERE status = 'pending' AND attempts = schedule_start;
--bun:split
-- The retries: an endpoint's deliveries attempted before, by due time, so
-- that those waiting out a retry delay (an endpoint that is down can have
-- many) are never read until due; when due they are claimed at their
-- place in line, ahead of the line.
CREATE INDEX IF NOT EXISTS webhook_deliveries_retry
    ON webhook_deliveries (endpoint_id, next_attempt_at, id, attempts, schedule_start)
    WHERE status = 'pending' AND attempts > schedule_start;
--bun:split
-- Each lane's last key on each endpoint: one row per lane and endpoint,
-- rewritten once per Notify batch, rather than an index entry per delivery.
CREATE TABLE IF NOT EXISTS webhook_lanes (
    endpoint_id VARCHAR(64) NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    lane        TEXT        NOT NULL,
    last_key    BIGINT      NOT NULL,
    PRIMARY KEY (endpoint_id, lane)
);
--bun:split
-- Nothing is claimed by due time alone any more.
DROP INDEX IF EXISTS webhook_deliveries_due_idx;
