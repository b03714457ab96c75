-- Back to workflow events only: events that are not about exactly one
-- workflow event of their type (customer.funded, refund.*) are dropped.
CREATE TABLE settleflow_events_old (
    id            TEXT    NOT NULL PRIMARY KEY,
    workflow_id   TEXT    NOT NULL REFERENCES settleflow_workflows (id),
    type          TEXT    NOT NULL,
    livemode      INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    data          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    run_at        INTEGER NOT NULL,
    lease_owner   TEXT,
    dispatched_at INTEGER,
    UNIQUE (workflow_id, type)
) WITHOUT ROWID;

--bun:split

INSERT INTO settleflow_events_old (id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at)
    SELECT id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at FROM settleflow_events
    WHERE subject_id IS NULL AND workflow_id IS NOT NULL;

--bun:split

DROP TABLE settleflow_events;

--bun:split

ALTER TABLE settleflow_events_old RENAME TO settleflow_events;

--bun:split

CREATE INDEX settleflow_events_due ON settleflow_events (run_at) WHERE dispatched_at IS NULL;

--bun:split

CREATE INDEX settleflow_events_env ON settleflow_events (livemode, id);

--bun:split

CREATE INDEX settleflow_events_type ON settleflow_events (livemode, type, id);

--bun:split

CREATE INDEX settleflow_events_created ON settleflow_events (livemode, created_at);

--bun:split

CREATE INDEX settleflow_events_dispatched ON settleflow_events (dispatched_at) WHERE dispatched_at IS NOT NULL;

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
