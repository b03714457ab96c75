-- Back to numbers given at insert: the workflows not yet numbered get the
-- next numbers of their environment, in creation order, then every number
-- is unique again.
UPDATE settleflow_workflows SET sequence = z.rn + coalesce(
        (SELECT last FROM settleflow_sequences s WHERE s.livemode = settleflow_workflows.livemode), 0)
FROM (SELECT id, row_number() OVER (PARTITION BY livemode ORDER BY id) AS rn
      FROM settleflow_workflows WHERE sequence = 0) AS z
WHERE settleflow_workflows.id = z.id;

--bun:split

INSERT INTO settleflow_sequences (livemode, last)
    SELECT livemode, max(sequence) FROM settleflow_workflows WHERE true GROUP BY livemode
    ON CONFLICT (livemode) DO UPDATE SET last = excluded.last;

--bun:split

DROP INDEX settleflow_workflows_sequence;

--bun:split

CREATE UNIQUE INDEX settleflow_workflows_sequence ON settleflow_workflows (livemode, sequence);
