ALTER TABLE settleflow_attempts DROP COLUMN instance;

--bun:split

DROP TABLE settleflow_workers;

--bun:split

DROP TABLE settleflow_tasks;
