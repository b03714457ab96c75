-- Balance owners (issue 37): every owner grant the engine sent to the
-- chain (POST /v1/customers/{id}/owner), one row per grant nonce, so that
-- `chain reconcile` tells the owners the engine set from any other. The
-- idempotency key of the request, if any, is kept with it.
CREATE TABLE settleflow_owner_grants (
    livemode        INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    nonce           TEXT    NOT NULL,
    customer_id     TEXT    NOT NULL,
    ref             TEXT    NOT NULL,
    owner           TEXT    NOT NULL,
    origin          TEXT    NOT NULL,
    deadline        INTEGER NOT NULL,
    tx_hash         TEXT    NOT NULL,
    effective       TEXT    NOT NULL CHECK (effective IN ('now', 'after_notice')),
    idempotency_key TEXT,
    request_hash    TEXT,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (livemode, nonce)
) WITHOUT ROWID;

--bun:split

CREATE INDEX settleflow_owner_grants_key ON settleflow_owner_grants (livemode, idempotency_key, created_at)
    WHERE idempotency_key IS NOT NULL;
