{{if .Postgres -}}
DROP FUNCTION IF EXISTS ratelimit_allow(jsonb);
{{- else -}}
SELECT 1;
{{- end}}
