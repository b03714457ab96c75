-- Outcome pricing (issue 26): what a workflow was created under (its
-- pricing, success criteria and margin floor, as JSON), what it is charged
-- (NULL until decided; NULL on older rows, whose charge is the quote), its
-- cost items and the verdict of its criteria (JSON).
ALTER TABLE settleflow_workflows ADD COLUMN terms TEXT;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN charged BIGINT;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN cost_items TEXT;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN outcome TEXT;
