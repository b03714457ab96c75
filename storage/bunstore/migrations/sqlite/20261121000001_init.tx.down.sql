DROP TABLE settleflow_idempotency_keys;
--bun:split
DROP TABLE settleflow_events;
--bun:split
DROP TABLE settleflow_workflows;
