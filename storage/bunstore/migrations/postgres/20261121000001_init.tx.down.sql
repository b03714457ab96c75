DROP TABLE settleflow_idempotency_keys;
--bun:split
DROP TABLE settleflow_events;
--bun:split
DROP TABLE settleflow_workflows;
--bun:split
DROP FUNCTION settleflow_workflows_transition();
--bun:split
DROP TABLE settleflow_sequences;
