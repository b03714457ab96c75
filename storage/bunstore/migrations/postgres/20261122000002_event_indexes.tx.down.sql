DROP INDEX settleflow_events_created;
--bun:split
DROP INDEX settleflow_events_type;
--bun:split
DROP INDEX settleflow_events_env;
