-- Back to numbers given at insert: the workflows not yet numbered get the
-- next numbers of their environment, in creation order, then every number
-- is unique again.
WITH z AS (
        SELECT id, livemode, row_number() OVER (PARTITION BY livemode ORDER BY id) AS rn
        FROM settleflow_workflows WHERE sequence = 0),
    c AS (SELECT livemode, count(*) AS n FROM z GROUP BY livemode),
    s AS (
        INSERT INTO settleflow_sequences (livemode, last) SELECT livemode, n FROM c
        ON CONFLICT (livemode) DO UPDATE SET last = settleflow_sequences.last + excluded.last
        RETURNING livemode, last)
UPDATE settleflow_workflows w SET sequence = s.last - c.n + z.rn
FROM z JOIN c ON c.livemode = z.livemode JOIN s ON s.livemode = z.livemode
WHERE w.id = z.id;

--bun:split

DROP INDEX settleflow_workflows_sequence;

--bun:split

CREATE UNIQUE INDEX settleflow_workflows_sequence ON settleflow_workflows (livemode, sequence);
