-- Durable tasks (issue 42): a remote product's attempt is a row here, so
-- any instance on the database hands it to a worker, extends its lease,
-- takes its spend and ends it, and a task a worker holds outlives the
-- instance that created it. Workers seen by any instance are kept too.
CREATE TABLE settleflow_tasks (
    id            TEXT    NOT NULL PRIMARY KEY,
    livemode      INTEGER NOT NULL,
    workflow_id   TEXT    NOT NULL,
    product       TEXT    NOT NULL,
    customer_id   TEXT    NOT NULL,
    attempt       INTEGER NOT NULL,
    payload       TEXT    NOT NULL,
    currency      TEXT    NOT NULL,
    budget        INTEGER,
    state         TEXT    NOT NULL,
    worker_key_id TEXT    NOT NULL DEFAULT '',
    worker_host   TEXT    NOT NULL DEFAULT '',
    worker_name   TEXT    NOT NULL DEFAULT '',
    worker_sdk    TEXT    NOT NULL DEFAULT '',
    instance      TEXT    NOT NULL DEFAULT '',
    claimed_at    INTEGER  NOT NULL DEFAULT 0,
    lease_until   INTEGER  NOT NULL DEFAULT 0,
    spent         INTEGER  NOT NULL DEFAULT 0,
    items         TEXT    NOT NULL DEFAULT '[]',
    result        TEXT,
    result_items  TEXT    NOT NULL DEFAULT '[]',
    message       TEXT    NOT NULL DEFAULT '',
    retry         INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER  NOT NULL,
    ended_at      INTEGER  NOT NULL DEFAULT 0
) WITHOUT ROWID;

--bun:split

CREATE INDEX settleflow_tasks_queued ON settleflow_tasks (livemode, product, created_at, id) WHERE state = 'queued';

--bun:split

CREATE INDEX settleflow_tasks_workflow ON settleflow_tasks (workflow_id, created_at);

--bun:split

CREATE INDEX settleflow_tasks_claimed ON settleflow_tasks (livemode, worker_key_id) WHERE state = 'claimed';

--bun:split

CREATE INDEX settleflow_tasks_ended ON settleflow_tasks (ended_at) WHERE ended_at > 0;

--bun:split

CREATE TABLE settleflow_workers (
    livemode   INTEGER NOT NULL,
    key_id     TEXT    NOT NULL,
    host       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    sdk        TEXT    NOT NULL,
    instance   TEXT    NOT NULL,
    first_seen INTEGER  NOT NULL,
    last_claim INTEGER  NOT NULL,
    claimed    INTEGER  NOT NULL,
    PRIMARY KEY (livemode, key_id, host, name)
) WITHOUT ROWID;

--bun:split

CREATE INDEX settleflow_workers_last ON settleflow_workers (livemode, last_claim);

--bun:split

ALTER TABLE settleflow_attempts ADD COLUMN instance TEXT NOT NULL DEFAULT '';
