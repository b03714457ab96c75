-- A delivery's latest attempt is kept on the delivery's row, so that an
-- attempt costs no row of its own: last_attempt is the number of the
-- attempt the last_* columns describe (0: none is held there; every
-- attempt of the delivery is in webhook_attempts, as for the deliveries
-- recorded before this migration), with its start, latency, status code,
-- error and the start of the answer. When the next attempt is recorded the
-- one held moves to webhook_attempts; an attempt recorded on a delivery
-- another process took over meanwhile goes to webhook_attempts directly.
-- A delivery's attempts are webhook_attempts' rows plus the one held.
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt INTEGER NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE webhook_deliveries ADD COLUMN last_started_at BIGINT;
--bun:split
ALTER TABLE webhook_deliveries ADD COLUMN last_latency_us BIGINT NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE webhook_deliveries ADD COLUMN last_response_body TEXT NOT NULL DEFAULT '';
