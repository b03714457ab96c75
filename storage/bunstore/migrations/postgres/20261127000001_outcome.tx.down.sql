-- Back to one fixed price: what was decided beyond the quote is dropped.
ALTER TABLE settleflow_workflows DROP COLUMN outcome;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN cost_items;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN charged;

--bun:split

ALTER TABLE settleflow_workflows DROP COLUMN terms;
