-- Back to the statuses and transitions before Canceled, by the same
-- rebuild as the up migration. A database holding Canceled workflows
-- cannot go down: the CHECK refuses them and the migration fails whole,
-- rather than losing what they say.
PRAGMA defer_foreign_keys = ON;

--bun:split

-- Without an index on the child column, every row dropped and copied back
-- would scan the whole idempotency table for children; this one lives only
-- for the rebuild.
CREATE INDEX settleflow_idempotency_keys_rebuild ON settleflow_idempotency_keys (workflow_id);

--bun:split

CREATE TABLE settleflow_workflows_rebuild AS SELECT * FROM settleflow_workflows;

--bun:split

DROP TABLE settleflow_workflows;

--bun:split

CREATE TABLE settleflow_workflows (
    id                  TEXT    NOT NULL PRIMARY KEY,
    livemode            INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    product             TEXT    NOT NULL,
    customer_id         TEXT    NOT NULL,
    payload             TEXT    NOT NULL,
    quoted_amount       INTEGER NOT NULL CHECK (quoted_amount >= 0),
    currency            TEXT    NOT NULL,
    target_margin_bps   INTEGER NOT NULL,
    achieved_margin_bps INTEGER,
    actual_cost         INTEGER,
    status              TEXT    NOT NULL CHECK (status IN ('Pending', 'Running', 'Settling', 'Settled', 'Failed')),
    result              TEXT,
    settlement          TEXT,
    failure             TEXT,
    attempts            INTEGER NOT NULL DEFAULT 0,
    run_at              INTEGER NOT NULL,
    lease_owner         TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    sequence            INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

--bun:split

INSERT INTO settleflow_workflows (id, livemode, product, customer_id, payload, quoted_amount, currency,
    target_margin_bps, achieved_margin_bps, actual_cost, status, result, settlement, failure, attempts,
    run_at, lease_owner, created_at, updated_at, sequence)
SELECT id, livemode, product, customer_id, payload, quoted_amount, currency,
    target_margin_bps, achieved_margin_bps, actual_cost, status, result, settlement, failure, attempts,
    run_at, lease_owner, created_at, updated_at, sequence
FROM settleflow_workflows_rebuild;

--bun:split

DROP TABLE settleflow_workflows_rebuild;

--bun:split

DROP INDEX settleflow_idempotency_keys_rebuild;

--bun:split

CREATE INDEX settleflow_workflows_due ON settleflow_workflows (run_at)
    WHERE status IN ('Pending', 'Running', 'Settling');

--bun:split

CREATE INDEX settleflow_workflows_env ON settleflow_workflows (livemode, id);

--bun:split

CREATE INDEX settleflow_workflows_status ON settleflow_workflows (livemode, status, id);

--bun:split

CREATE INDEX settleflow_workflows_customer ON settleflow_workflows (livemode, customer_id, id);

--bun:split

CREATE INDEX settleflow_workflows_product ON settleflow_workflows (livemode, product, id);

--bun:split

CREATE UNIQUE INDEX settleflow_workflows_sequence ON settleflow_workflows (livemode, sequence);

--bun:split

-- The state machine as it was before Canceled.
CREATE TRIGGER settleflow_workflows_transition
BEFORE UPDATE OF status ON settleflow_workflows
WHEN OLD.status <> NEW.status AND NOT ((OLD.status = 'Pending' AND NEW.status = 'Running') OR (OLD.status = 'Running' AND NEW.status = 'Settling') OR (OLD.status = 'Running' AND NEW.status = 'Failed') OR (OLD.status = 'Settling' AND NEW.status = 'Settled') OR (OLD.status = 'Settling' AND NEW.status = 'Failed'))
BEGIN
    SELECT RAISE(ABORT, 'settleflow: illegal workflow transition');
END;
