DROP TABLE IF EXISTS portal_owner_windows;
--bun:split
DROP TABLE IF EXISTS portal_owner_changes;
