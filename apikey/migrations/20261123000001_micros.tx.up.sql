-- Times become Unix microseconds, as every package on the database stores
-- them (storage.Micros). A value below 10^14 is still in milliseconds (10^14
-- µs is 1973, 10^14 ms is year 5138), so each statement converts only what
-- it has not converted yet and may run twice without harm.
UPDATE apikey_keys SET created_at = created_at * 1000 WHERE created_at < 100000000000000;
--bun:split
UPDATE apikey_keys SET last_used_at = last_used_at * 1000 WHERE last_used_at < 100000000000000;
--bun:split
UPDATE apikey_keys SET revoked_at = revoked_at * 1000 WHERE revoked_at < 100000000000000;
--bun:split
UPDATE apikey_keys SET expires_at = expires_at * 1000 WHERE expires_at < 100000000000000;
