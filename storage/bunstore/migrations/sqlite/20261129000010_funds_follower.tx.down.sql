DROP TABLE settleflow_funds_history;

--bun:split

DROP TABLE settleflow_funds_quarantine;

--bun:split

DROP TABLE settleflow_funds_events;

--bun:split

ALTER TABLE settleflow_funds_cursors DROP COLUMN current_at;

--bun:split

ALTER TABLE settleflow_accounts DROP COLUMN quarantined;

--bun:split

ALTER TABLE settleflow_accounts DROP COLUMN owner;
