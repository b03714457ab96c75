-- The funds follower (issue 37): each balance change on chain is applied
-- once, by transaction hash and log index, and journaled with what it
-- replaced, so a reorg deeper than the confirmation depth can be reverted;
-- an event that cannot be applied is quarantined (its account's balance is
-- then unknown: admission refuses it); the cursors the follower moved to
-- are kept, newest ones, to find a block both chains share; the account
-- keeps its owner; the cursor records when the follower was last current.
ALTER TABLE settleflow_accounts ADD COLUMN owner TEXT;

--bun:split

ALTER TABLE settleflow_accounts ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE settleflow_funds_cursors ADD COLUMN current_at INTEGER;

--bun:split

CREATE TABLE settleflow_funds_events (
    livemode     INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    tx_hash      TEXT    NOT NULL,
    log_index    INTEGER NOT NULL,
    block        INTEGER NOT NULL,
    ref          TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    amount       INTEGER NOT NULL,
    owner        TEXT,
    prev_pending INTEGER NOT NULL,
    prev_owner   TEXT,
    reverted     INTEGER NOT NULL DEFAULT 0 CHECK (reverted IN (0, 1)),
    applied_at   INTEGER NOT NULL,
    PRIMARY KEY (livemode, tx_hash, log_index)
) WITHOUT ROWID;

--bun:split

CREATE INDEX settleflow_funds_events_block ON settleflow_funds_events (livemode, block) WHERE reverted = 0;

--bun:split

CREATE TABLE settleflow_funds_quarantine (
    livemode   INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    tx_hash    TEXT    NOT NULL,
    log_index  INTEGER NOT NULL,
    block      INTEGER NOT NULL,
    ref        TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    reason     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (livemode, tx_hash, log_index)
) WITHOUT ROWID;

--bun:split

CREATE TABLE settleflow_funds_history (
    livemode INTEGER NOT NULL CHECK (livemode IN (0, 1)),
    block    INTEGER NOT NULL,
    hash     TEXT    NOT NULL,
    PRIMARY KEY (livemode, block)
) WITHOUT ROWID;

--bun:split

INSERT INTO settleflow_funds_history (livemode, block, hash) SELECT livemode, block, hash FROM settleflow_funds_cursors;
