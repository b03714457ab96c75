-- Workers (issue 38): which worker ran each attempt of a remote product's
-- workflow (one task each), written with the update that ends the attempt.
CREATE TABLE settleflow_attempts (
    task_id       TEXT    NOT NULL PRIMARY KEY,
    workflow_id   TEXT    NOT NULL,
    livemode      BOOLEAN NOT NULL,
    number        INTEGER NOT NULL,
    worker_key_id TEXT    NOT NULL,
    worker_host   TEXT    NOT NULL,
    worker_name   TEXT    NOT NULL,
    worker_sdk    TEXT    NOT NULL,
    claimed_at    BIGINT  NOT NULL,
    ended_at      BIGINT  NOT NULL,
    outcome       TEXT    NOT NULL,
    message       TEXT    NOT NULL
);

--bun:split

CREATE INDEX settleflow_attempts_workflow ON settleflow_attempts (livemode, workflow_id, claimed_at);
