-- Retention (settleflow.Store.Prune) deletes dispatched events and expired
-- idempotency records oldest first, in small batches: these indexes find
-- them without scanning the tables.
CREATE INDEX settleflow_events_dispatched ON settleflow_events (dispatched_at) WHERE dispatched_at IS NOT NULL;

--bun:split

CREATE INDEX settleflow_idempotency_keys_created ON settleflow_idempotency_keys (created_at);
