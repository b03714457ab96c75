DROP TABLE IF EXISTS dashboard_sessions;
--bun:split
DROP TABLE IF EXISTS dashboard_links;
