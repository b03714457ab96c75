CREATE TABLE settleflow_workflows (
    id                  TEXT    NOT NULL PRIMARY KEY,
    livemode            BOOLEAN NOT NULL,
    product             TEXT    NOT NULL,
    customer_id         TEXT    NOT NULL,
    payload             TEXT    NOT NULL,
    quoted_amount       BIGINT  NOT NULL CHECK (quoted_amount >= 0),
    currency            TEXT    NOT NULL,
    target_margin_bps   BIGINT  NOT NULL,
    achieved_margin_bps BIGINT,
    actual_cost         BIGINT,
    status              TEXT    NOT NULL CHECK (status IN ({{.StatusList}})),
    result              TEXT,
    settlement          TEXT,
    failure             TEXT,
    attempts            INTEGER NOT NULL DEFAULT 0,
    run_at              BIGINT  NOT NULL,
    lease_owner         TEXT,
    created_at          BIGINT  NOT NULL,
    updated_at          BIGINT  NOT NULL,
    sequence            BIGINT  NOT NULL
);

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

-- Each environment's last Charge.Sequence; a range is reserved per batch.
CREATE TABLE settleflow_sequences (
    livemode BOOLEAN NOT NULL PRIMARY KEY,
    last     BIGINT  NOT NULL
);

--bun:split

-- The state machine, generated from settleflow.Transitions(): the database
-- refuses an illegal transition even if a bug asked for one.
CREATE FUNCTION settleflow_workflows_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status <> NEW.status AND NOT ({{range $i, $t := .Transitions}}{{if $i}} OR {{end}}(OLD.status = '{{$t.From}}' AND NEW.status = '{{$t.Next}}'){{end}}) THEN
        RAISE EXCEPTION 'settleflow: illegal workflow transition from % to %', OLD.status, NEW.status;
    END IF;
    RETURN NEW;
END
$$;

--bun:split

CREATE TRIGGER settleflow_workflows_transition
BEFORE UPDATE OF status ON settleflow_workflows
FOR EACH ROW EXECUTE FUNCTION settleflow_workflows_transition();

--bun:split

CREATE TABLE settleflow_events (
    id            TEXT    NOT NULL PRIMARY KEY,
    workflow_id   TEXT    NOT NULL REFERENCES settleflow_workflows (id),
    type          TEXT    NOT NULL,
    livemode      BOOLEAN NOT NULL,
    data          TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    run_at        BIGINT  NOT NULL,
    lease_owner   TEXT,
    dispatched_at BIGINT,
    UNIQUE (workflow_id, type)
);

--bun:split

CREATE INDEX settleflow_events_due ON settleflow_events (run_at) WHERE dispatched_at IS NULL;

--bun:split

CREATE TABLE settleflow_idempotency_keys (
    livemode     BOOLEAN NOT NULL,
    key          TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    workflow_id  TEXT    NOT NULL REFERENCES settleflow_workflows (id),
    response     TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    PRIMARY KEY (livemode, key)
);
