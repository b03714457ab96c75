-- A workflow is numbered (Charge.Sequence) when it is first to be settled,
-- no longer at insert (settleflow.Update.Sequence): until then its sequence
-- is 0, and only the numbers given must be unique. Workflows numbered
-- before keep their numbers; the counter goes on from where it stands.
DROP INDEX settleflow_workflows_sequence;

--bun:split

CREATE UNIQUE INDEX settleflow_workflows_sequence ON settleflow_workflows (livemode, sequence)
    WHERE sequence > 0;
