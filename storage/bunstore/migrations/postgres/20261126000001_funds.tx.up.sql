-- Customer funds (issue 25): each workflow records what it reserved of its
-- customer's balance and what was refunded of its charge; accounts keep the
-- ledger per customer reference; refunds are their own queue; the outbox
-- takes events that are not about one workflow (customer.funded) or of
-- which a workflow has several (refund.*), each unique by its subject.
ALTER TABLE settleflow_workflows ADD COLUMN reserved BIGINT  NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN refunded BIGINT  NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE settleflow_workflows ADD COLUMN account_ref TEXT;

--bun:split

CREATE TABLE settleflow_accounts (
    livemode           BOOLEAN NOT NULL,
    ref                TEXT    NOT NULL,
    customer_id        TEXT,
    deposited          BIGINT  NOT NULL DEFAULT 0,
    charged            BIGINT  NOT NULL DEFAULT 0,
    refunded           BIGINT  NOT NULL DEFAULT 0,
    reserved           BIGINT  NOT NULL DEFAULT 0,
    pending_withdrawal BIGINT  NOT NULL DEFAULT 0,
    faucet_at          BIGINT,
    updated_at         BIGINT  NOT NULL,
    PRIMARY KEY (livemode, ref)
);

--bun:split

CREATE TABLE settleflow_funds_cursors (
    livemode BOOLEAN NOT NULL PRIMARY KEY,
    block    BIGINT  NOT NULL,
    hash     TEXT    NOT NULL
);

--bun:split

CREATE TABLE settleflow_refunds (
    id          TEXT    NOT NULL PRIMARY KEY,
    livemode    BOOLEAN NOT NULL,
    workflow_id TEXT    NOT NULL REFERENCES settleflow_workflows (id),
    customer_id TEXT    NOT NULL,
    sequence    BIGINT  NOT NULL,
    amount      BIGINT  NOT NULL CHECK (amount > 0),
    currency    TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('Pending', 'Succeeded', 'Failed')),
    settlement  TEXT,
    failure     TEXT,
    attempts    BIGINT  NOT NULL DEFAULT 0,
    run_at      BIGINT  NOT NULL,
    lease_owner TEXT,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);

--bun:split

CREATE INDEX settleflow_refunds_workflow ON settleflow_refunds (workflow_id, id);

--bun:split

CREATE INDEX settleflow_refunds_env ON settleflow_refunds (livemode, id);

--bun:split

CREATE INDEX settleflow_refunds_due ON settleflow_refunds (run_at) WHERE status = 'Pending';

--bun:split

CREATE TABLE settleflow_refund_keys (
    livemode     BOOLEAN NOT NULL,
    key          TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    refund_id    TEXT    NOT NULL REFERENCES settleflow_refunds (id),
    response     TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    PRIMARY KEY (livemode, key)
);

--bun:split

CREATE INDEX settleflow_refund_keys_created ON settleflow_refund_keys (created_at);

--bun:split

ALTER TABLE settleflow_events ALTER COLUMN workflow_id DROP NOT NULL;

--bun:split

ALTER TABLE settleflow_events ADD COLUMN subject_id TEXT;

--bun:split

ALTER TABLE settleflow_events DROP CONSTRAINT settleflow_events_workflow_id_type_key;

--bun:split

CREATE UNIQUE INDEX settleflow_events_subject ON settleflow_events ((coalesce(subject_id, workflow_id)), type);

--bun:split

CREATE INDEX settleflow_events_workflow ON settleflow_events (workflow_id, type);
