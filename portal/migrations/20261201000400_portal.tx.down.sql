DROP TABLE IF EXISTS portal_relay_windows;
--bun:split
DROP TABLE IF EXISTS portal_relays;
--bun:split
DROP TABLE IF EXISTS portal_nonces;
--bun:split
DROP TABLE IF EXISTS portal_sessions;
--bun:split
DROP TABLE IF EXISTS portal_links;
