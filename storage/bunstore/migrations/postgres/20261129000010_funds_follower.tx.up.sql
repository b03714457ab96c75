-- The funds follower (issue 37): each balance change on chain is applied
-- once, by transaction hash and log index, and journaled with what it
-- replaced, so a reorg deeper than the confirmation depth can be reverted;
-- an event that cannot be applied is quarantined (its account's balance is
-- then unknown: admission refuses it); the cursors the follower moved to
-- are kept, newest ones, to find a block both chains share; the account
-- keeps its owner; the cursor records when the follower was last current.
ALTER TABLE settleflow_accounts ADD COLUMN owner TEXT;

--bun:split

ALTER TABLE settleflow_accounts ADD COLUMN quarantined BIGINT  NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE settleflow_funds_cursors ADD COLUMN current_at BIGINT;

--bun:split

CREATE TABLE settleflow_funds_events (
    livemode     BOOLEAN NOT NULL,
    tx_hash      TEXT    NOT NULL,
    log_index    BIGINT  NOT NULL,
    block        BIGINT  NOT NULL,
    ref          TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    amount       BIGINT  NOT NULL,
    owner        TEXT,
    prev_pending BIGINT  NOT NULL,
    prev_owner   TEXT,
    reverted     BOOLEAN NOT NULL DEFAULT FALSE,
    applied_at   BIGINT  NOT NULL,
    PRIMARY KEY (livemode, tx_hash, log_index)
);

--bun:split

CREATE INDEX settleflow_funds_events_block ON settleflow_funds_events (livemode, block) WHERE NOT reverted;

--bun:split

CREATE TABLE settleflow_funds_quarantine (
    livemode   BOOLEAN NOT NULL,
    tx_hash    TEXT    NOT NULL,
    log_index  BIGINT  NOT NULL,
    block      BIGINT  NOT NULL,
    ref        TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    reason     TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (livemode, tx_hash, log_index)
);

--bun:split

CREATE TABLE settleflow_funds_history (
    livemode BOOLEAN NOT NULL,
    block    BIGINT  NOT NULL,
    hash     TEXT    NOT NULL,
    PRIMARY KEY (livemode, block)
);

--bun:split

INSERT INTO settleflow_funds_history (livemode, block, hash) SELECT livemode, block, hash FROM settleflow_funds_cursors;
