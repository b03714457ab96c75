{{if .Postgres -}}
-- ratelimit_allow counts a batch of requests in one statement, a transaction
-- of its own: the requests that reach one instance together (see Limiter)
-- hold their keys' rows only for this statement and its commit, never for a
-- group of other writes. batch is a JSON array of requests, in the order
-- they are decided: {"k": key, "w": [{"n": name, "l": length_s,
-- "s": window_start, "m": limit}, ...]}. Each request is counted in every
-- window (a later window starts again at 1); if one is over its limit the
-- request's counts are taken back, so a refused request consumes nothing.
-- One row is returned per request and window, in order: the window's start
-- and its count after the request was counted (before any take-back), and
-- whether the request was admitted.
CREATE OR REPLACE FUNCTION ratelimit_allow(batch jsonb)
RETURNS TABLE (r_req int, r_window int, r_window_start bigint, r_count bigint, r_allowed boolean)
LANGUAGE plpgsql AS $$
DECLARE
    req jsonb;
    win jsonb;
    ok boolean;
    s bigint;
    c bigint;
    starts bigint[];
    counts bigint[];
BEGIN
    -- Every row of the batch is created if new and locked first, in one
    -- order (key, name, length), so that the batches of several instances
    -- never wait for each other in a cycle.
    INSERT INTO ratelimit_counters AS rc (limit_key, name, length_s, window_start, count)
    SELECT DISTINCT q->>'k', w->>'n', (w->>'l')::bigint, 0::bigint, 0::bigint
    FROM jsonb_array_elements(batch) q, jsonb_array_elements(q->'w') w
    ORDER BY 1, 2, 3
    ON CONFLICT (limit_key, name, length_s) DO UPDATE SET count = rc.count;
    FOR i IN 0 .. jsonb_array_length(batch) - 1 LOOP
        req := batch->i;
        ok := true;
        FOR j IN 0 .. jsonb_array_length(req->'w') - 1 LOOP
            win := req->'w'->j;
            UPDATE ratelimit_counters AS rc SET
                count = CASE WHEN (win->>'s')::bigint > rc.window_start THEN 1 ELSE rc.count + 1 END,
                window_start = GREATEST((win->>'s')::bigint, rc.window_start)
            WHERE rc.limit_key = req->>'k' AND rc.name = win->>'n' AND rc.length_s = (win->>'l')::bigint
            RETURNING rc.window_start, rc.count INTO s, c;
            starts[j] := s;
            counts[j] := c;
            IF c > (win->>'m')::bigint THEN
                ok := false;
            END IF;
        END LOOP;
        IF NOT ok THEN
            UPDATE ratelimit_counters AS rc SET count = rc.count - 1
            FROM jsonb_array_elements(req->'w') w
            WHERE rc.limit_key = req->>'k' AND rc.name = w->>'n' AND rc.length_s = (w->>'l')::bigint;
        END IF;
        FOR j IN 0 .. jsonb_array_length(req->'w') - 1 LOOP
            r_req := i;
            r_window := j;
            r_window_start := starts[j];
            r_count := counts[j];
            r_allowed := ok;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END
$$;
{{- else -}}
-- SQLite: one process writes, through its group commit; nothing to add.
SELECT 1;
{{- end}}
