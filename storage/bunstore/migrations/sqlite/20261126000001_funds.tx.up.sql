-- Customer funds (issue 25): each workflow records what it reserved of its
-- customer's balance and what was refunded of its charge; accounts keep the
-- ledger per customer reference; refunds are their own queue; the outbox
-- takes events that are not about one workflow (customer.funded) or of
-- which a workflow has several (refund.*), each unique by its subject.
ALTER TABLE settleflow_workflows ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN refunded INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN account_ref TEXT;

--bun:split

CREATE TABLE settleflow_accounts (
    livemode           INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    ref                TEXT    NOT NULL,
    customer_id        TEXT,
    deposited          INTEGER NOT NULL DEFAULT 0,
    charged            INTEGER NOT NULL DEFAULT 0,
    refunded           INTEGER NOT NULL DEFAULT 0,
    reserved           INTEGER NOT NULL DEFAULT 0,
    pending_withdrawal INTEGER NOT NULL DEFAULT 0,
    faucet_at          INTEGER,
    updated_at         INTEGER NOT NULL,
    PRIMARY KEY (livemode, ref)
) WITHOUT ROWID;

--bun:split

CREATE TABLE settleflow_funds_cursors (
    livemode INTEGER NOT NULL PRIMARY KEY CHECK (livemode IN (0, 1)),
    block    INTEGER NOT NULL,
    hash     TEXT    NOT NULL
);

--bun:split

CREATE TABLE settleflow_refunds (
    id          TEXT    NOT NULL PRIMARY KEY,
    livemode    INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    workflow_id TEXT    NOT NULL REFERENCES settleflow_workflows (id),
    customer_id TEXT    NOT NULL,
    sequence    INTEGER NOT NULL,
    amount      INTEGER NOT NULL CHECK (amount > 0),
    currency    TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('Pending', 'Succeeded', 'Failed')),
    settlement  TEXT,
    failure     TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0,
    run_at      INTEGER NOT NULL,
    lease_owner TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) WITHOUT ROWID;

--bun:split

CREATE INDEX settleflow_refunds_workflow ON settleflow_refunds (workflow_id, id);

--bun:split

CREATE INDEX settleflow_refunds_env ON settleflow_refunds (livemode, id);

--bun:split

CREATE INDEX settleflow_refunds_due ON settleflow_refunds (run_at) WHERE status = 'Pending';

--bun:split

CREATE TABLE settleflow_refund_keys (
    livemode     INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    key          TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    refund_id    TEXT    NOT NULL REFERENCES settleflow_refunds (id),
    response     TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (livemode, key)
) WITHOUT ROWID;

--bun:split

CREATE INDEX settleflow_refund_keys_created ON settleflow_refund_keys (created_at);

--bun:split

CREATE TABLE settleflow_events_funds (
    id            TEXT    NOT NULL PRIMARY KEY,
    workflow_id   TEXT    REFERENCES settleflow_workflows (id),
    subject_id    TEXT,
    type          TEXT    NOT NULL,
    livemode      INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    data          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    run_at        INTEGER NOT NULL,
    lease_owner   TEXT,
    dispatched_at INTEGER
) WITHOUT ROWID;

--bun:split

INSERT INTO settleflow_events_funds (id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at)
    SELECT id, workflow_id, type, livemode, data, created_at, run_at, lease_owner, dispatched_at FROM settleflow_events;

--bun:split

DROP TABLE settleflow_events;

--bun:split

ALTER TABLE settleflow_events_funds RENAME TO settleflow_events;

--bun:split

CREATE UNIQUE INDEX settleflow_events_subject ON settleflow_events (coalesce(subject_id, workflow_id), type);

--bun:split

CREATE INDEX settleflow_events_workflow ON settleflow_events (workflow_id, type);

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
