DROP INDEX settleflow_workflows_sequence;
--bun:split
DROP TABLE settleflow_sequences;
--bun:split
ALTER TABLE settleflow_workflows DROP COLUMN sequence;
