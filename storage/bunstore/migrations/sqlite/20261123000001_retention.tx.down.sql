DROP INDEX settleflow_idempotency_keys_created;

--bun:split

DROP INDEX settleflow_events_dispatched;
