-- Back to workflow events only: events that are not one workflow's
-- (customer.funded, refund.*) are dropped.
DELETE FROM settleflow_events WHERE subject_id IS NOT NULL OR workflow_id IS NULL;

--bun:split

DROP INDEX settleflow_events_workflow;

--bun:split

DROP INDEX settleflow_events_subject;

--bun:split

ALTER TABLE settleflow_events ADD CONSTRAINT settleflow_events_workflow_id_type_key UNIQUE (workflow_id, type);

--bun:split

ALTER TABLE settleflow_events DROP COLUMN subject_id;

--bun:split

ALTER TABLE settleflow_events ALTER COLUMN workflow_id SET NOT NULL;

--bun:split

DROP TABLE settleflow_refund_keys;

--bun:split

DROP TABLE settleflow_refunds;

--bun:split

DROP TABLE settleflow_funds_cursors;

--bun:split

DROP TABLE settleflow_accounts;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN account_ref;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN refunded;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN reserved;
