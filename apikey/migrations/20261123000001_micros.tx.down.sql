UPDATE apikey_keys SET created_at = created_at / 1000 WHERE created_at >= 100000000000000;
--bun:split
UPDATE apikey_keys SET last_used_at = last_used_at / 1000 WHERE last_used_at >= 100000000000000;
--bun:split
UPDATE apikey_keys SET revoked_at = revoked_at / 1000 WHERE revoked_at >= 100000000000000;
--bun:split
UPDATE apikey_keys SET expires_at = expires_at / 1000 WHERE expires_at >= 100000000000000;
