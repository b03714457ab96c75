-- Canceled joins the statuses, and Pending → Canceled the transitions: the
-- status CHECK and the transition function are rendered again from
-- settleflow.Statuses and settleflow.Transitions(). The trigger calls the
-- function by name, so replacing the function is enough.
ALTER TABLE settleflow_workflows DROP CONSTRAINT settleflow_workflows_status_check;

--bun:split

ALTER TABLE settleflow_workflows ADD CONSTRAINT settleflow_workflows_status_check
    CHECK (status IN ({{.StatusList}}));

--bun:split

CREATE OR REPLACE FUNCTION settleflow_workflows_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status <> NEW.status AND NOT ({{range $i, $t := .Transitions}}{{if $i}} OR {{end}}(OLD.status = '{{$t.From}}' AND NEW.status = '{{$t.Next}}'){{end}}) THEN
        RAISE EXCEPTION 'settleflow: illegal workflow transition from % to %', OLD.status, NEW.status;
    END IF;
    RETURN NEW;
END
$$;
