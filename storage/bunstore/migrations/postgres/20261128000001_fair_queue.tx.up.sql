-- A fair queue (issue 27): a Pending workflow's place in line is its
-- fair_key, given at insert: one past its customer's last Pending workflow,
-- or, if it has none, one past the head of the line. Customers are thus
-- served in turn, each in the order of its own creates, and a customer's
-- burst waits behind nobody's single workflow. Keys are compared among
-- Pending workflows only; rows older than this column are all 0 (first).
ALTER TABLE settleflow_workflows ADD COLUMN fair_key BIGINT NOT NULL DEFAULT 0;

--bun:split

CREATE INDEX settleflow_workflows_fair ON settleflow_workflows (fair_key, id) WHERE status = 'Pending';

--bun:split

CREATE INDEX settleflow_workflows_fair_customer ON settleflow_workflows (livemode, customer_id, fair_key) WHERE status = 'Pending';

--bun:split

-- Leases that ended are the only work claimed by due time now: Pending
-- rows leave the due index (a claim walking it no longer passes over
-- the whole queue to find them).
DROP INDEX settleflow_workflows_due;

--bun:split

CREATE INDEX settleflow_workflows_due ON settleflow_workflows (run_at)
    WHERE status IN ('Running', 'Settling');
