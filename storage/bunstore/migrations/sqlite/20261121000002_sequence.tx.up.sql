-- Each workflow's dense number in its environment (Charge.Sequence).
ALTER TABLE settleflow_workflows ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0;

--bun:split

CREATE TABLE settleflow_sequences (
    livemode INTEGER NOT NULL PRIMARY KEY CHECK (livemode IN (0, 1)),
    last     INTEGER NOT NULL
);

--bun:split

-- Workflows created before this migration get numbers in creation order.
UPDATE settleflow_workflows SET sequence = (
    SELECT count(*) FROM settleflow_workflows w2
    WHERE w2.livemode = settleflow_workflows.livemode AND w2.id <= settleflow_workflows.id);

--bun:split

INSERT INTO settleflow_sequences (livemode, last)
    SELECT livemode, max(sequence) FROM settleflow_workflows GROUP BY livemode;

--bun:split

CREATE UNIQUE INDEX settleflow_workflows_sequence ON settleflow_workflows (livemode, sequence);
