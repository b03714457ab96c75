-- Back to first come, first served.
DROP INDEX settleflow_workflows_due;

--bun:split

CREATE INDEX settleflow_workflows_due ON settleflow_workflows (run_at)
    WHERE status IN ('Pending', 'Running', 'Settling');

--bun:split

DROP INDEX settleflow_workflows_fair_customer;

--bun:split

DROP INDEX settleflow_workflows_fair;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN fair_key;
