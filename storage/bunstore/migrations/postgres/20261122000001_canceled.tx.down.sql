-- Back to the statuses and transitions before Canceled. A database holding
-- Canceled workflows cannot go down: the CHECK refuses them and the
-- migration fails whole, rather than losing what they say.
ALTER TABLE settleflow_workflows DROP CONSTRAINT settleflow_workflows_status_check;

--bun:split

ALTER TABLE settleflow_workflows ADD CONSTRAINT settleflow_workflows_status_check
    CHECK (status IN ('Pending', 'Running', 'Settling', 'Settled', 'Failed'));

--bun:split

CREATE OR REPLACE FUNCTION settleflow_workflows_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status <> NEW.status AND NOT ((OLD.status = 'Pending' AND NEW.status = 'Running') OR (OLD.status = 'Running' AND NEW.status = 'Settling') OR (OLD.status = 'Running' AND NEW.status = 'Failed') OR (OLD.status = 'Settling' AND NEW.status = 'Settled') OR (OLD.status = 'Settling' AND NEW.status = 'Failed')) THEN
        RAISE EXCEPTION 'settleflow: illegal workflow transition from % to %', OLD.status, NEW.status;
    END IF;
    RETURN NEW;
END
$$;
