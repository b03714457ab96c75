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
    status              TEXT    NOT NULL CHECK (status IN ({{.StatusList}})),
    result              TEXT,
    settlement          TEXT,
    failure             TEXT,
    attempts            INTEGER NOT NULL DEFAULT 0,
    run_at              INTEGER NOT NULL,
    lease_owner         TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
) WITHOUT ROWID;

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

-- The state machine, generated from settleflow.Transitions(): the database
-- refuses an illegal transition even if a bug asked for one.
CREATE TRIGGER settleflow_workflows_transition
BEFORE UPDATE OF status ON settleflow_workflows
WHEN OLD.status <> NEW.status AND NOT ({{range $i, $t := .Transitions}}{{if $i}} OR {{end}}(OLD.status = '{{$t.From}}' AND NEW.status = '{{$t.Next}}'){{end}})
BEGIN
    SELECT RAISE(ABORT, 'settleflow: illegal workflow transition');
END;

--bun:split

CREATE TABLE settleflow_events (
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

CREATE INDEX settleflow_events_due ON settleflow_events (run_at) WHERE dispatched_at IS NULL;

--bun:split

CREATE TABLE settleflow_idempotency_keys (
    livemode     INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    key          TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    workflow_id  TEXT    NOT NULL REFERENCES settleflow_workflows (id),
    response     TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (livemode, key)
) WITHOUT ROWID;
