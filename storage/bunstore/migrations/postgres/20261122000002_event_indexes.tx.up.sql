-- Events are read back (settleflow.Store.ListEvents), newest first within
-- an environment, optionally by type or by creation time; a filter by
-- workflow uses the UNIQUE (workflow_id, type) index.
CREATE INDEX settleflow_events_env ON settleflow_events (livemode, id);

--bun:split

CREATE INDEX settleflow_events_type ON settleflow_events (livemode, type, id);

--bun:split

CREATE INDEX settleflow_events_created ON settleflow_events (livemode, created_at);
